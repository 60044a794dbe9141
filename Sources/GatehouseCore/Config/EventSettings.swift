import Foundation

/// How the outbox is delivered (`events:` in the config).
public struct EventSettings: Sendable, Hashable, Codable {
    /// Waits before each retry of a webhook event: about 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, then
    /// every 12 h up to about three days in all.
    public var retryDelays: [Seconds]
    /// Waits before each retry of a back-channel logout token.
    public var logoutRetryDelays: [Seconds]
    /// How long a node holds a delivery it is sending; after it, another node may send it again.
    public var lease: Seconds
    /// How long delivered items are kept (for the administrators' view) before they are deleted.
    public var keepDelivered: Seconds
    /// How long dead letters are kept for replay before they are deleted.
    public var keepDead: Seconds
    /// How long a rotated webhook signing secret still signs beside the new one, so that receivers
    /// can be moved to the new secret without an outage (0: it stops at once).
    public var webhookSecretOverlap: Seconds

    public init(
        retryDelays: [Seconds] = [10, 60, 300, 1800, 7200, 21_600, 43_200, 43_200, 43_200, 43_200].map(Seconds.init),
        logoutRetryDelays: [Seconds] = [2, 10, 60, 300].map(Seconds.init), lease: Seconds = Seconds(30), keepDelivered: Seconds = .days(1),
        keepDead: Seconds = .days(30), webhookSecretOverlap: Seconds = .days(1)
    ) {
        self.keepDead = keepDead
        self.webhookSecretOverlap = webhookSecretOverlap
        self.retryDelays = retryDelays
        self.logoutRetryDelays = logoutRetryDelays
        self.lease = lease
        self.keepDelivered = keepDelivered
    }

    enum CodingKeys: String, CodingKey { case retryDelays, logoutRetryDelays, lease, keepDelivered, keepDead, webhookSecretOverlap }

    /// Reads the settings with defaults, refusing impossible values with their path.
    public init(from decoder: any Decoder) throws {
        let defaults = EventSettings()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        retryDelays = try container.decodeIfPresent([Seconds].self, forKey: .retryDelays) ?? defaults.retryDelays
        logoutRetryDelays = try container.decodeIfPresent([Seconds].self, forKey: .logoutRetryDelays) ?? defaults.logoutRetryDelays
        lease = try container.decodeIfPresent(Seconds.self, forKey: .lease) ?? defaults.lease
        keepDelivered = try container.decodeIfPresent(Seconds.self, forKey: .keepDelivered) ?? defaults.keepDelivered
        keepDead = try container.decodeIfPresent(Seconds.self, forKey: .keepDead) ?? defaults.keepDead
        webhookSecretOverlap = try container.decodeIfPresent(Seconds.self, forKey: .webhookSecretOverlap) ?? defaults.webhookSecretOverlap
        let path = decoder.codingPath
        for (key, delays) in [(CodingKeys.retryDelays, retryDelays), (.logoutRetryDelays, logoutRetryDelays)] {
            if delays.count > 50 || delays.contains(where: { !(1...86_400).contains($0.value) }) {
                throw ConfigIssue(path: path + [key], "must be at most 50 waits of 1 second to 1 day each")
            }
        }
        // Longer than a delivery may take (10 s to answer), so that no other node sends it meanwhile.
        guard (15...600).contains(lease.value) else { throw ConfigIssue(path: path + [CodingKeys.lease], "must be between 15 and 600 seconds") }
        guard keepDead.value >= 3600 else { throw ConfigIssue(path: path + [CodingKeys.keepDead], "must be at least an hour") }
        guard (0...7 * 86_400).contains(webhookSecretOverlap.value) else {
            throw ConfigIssue(path: path + [CodingKeys.webhookSecretOverlap], "must be between 0s and 7d")
        }
    }
}
