import Foundation

/// What an app's policy says about activations (XignSys "personalization"): how long activation data
/// stay redeemable, whether the app's own back end may issue them with its client credentials, and
/// the deep link the activation data are wrapped in for the app to open.
public struct ActivationPolicy: Sendable, Hashable, Codable {
    /// How long activation data stay redeemable after they were issued (or sent again).
    public var lifetime: Seconds
    /// Whether the app's back end may issue activations (`POST /v1/activations` with its client
    /// credentials); administrators always may.
    public var issueByApp: Bool
    /// The link the app opens, e.g. `notes://activate`: the payload is appended as `?activation=`.
    /// Nil: `<issuer>/activate`.
    public var deepLink: String?

    public init(lifetime: Seconds = .days(7), issueByApp: Bool = false, deepLink: String? = nil) {
        self.lifetime = lifetime
        self.issueByApp = issueByApp
        self.deepLink = deepLink
    }

    enum CodingKeys: String, CodingKey { case lifetime, issueByApp, deepLink }

    public init(from decoder: any Decoder) throws {
        let defaults = ActivationPolicy()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lifetime = try container.decodeIfPresent(Seconds.self, forKey: .lifetime) ?? defaults.lifetime
        issueByApp = try container.decodeIfPresent(Bool.self, forKey: .issueByApp) ?? defaults.issueByApp
        deepLink = try container.decodeIfPresent(String.self, forKey: .deepLink)
        let path = decoder.codingPath
        guard (300...(90 * 86_400)).contains(lifetime.value) else {
            throw ConfigIssue(path: path + [CodingKeys.lifetime], "must be between 300 seconds and 90 days, got \(lifetime.value) seconds")
        }
        if let deepLink {
            guard let url = URLComponents(string: deepLink), let scheme = url.scheme, !scheme.isEmpty, url.query == nil, url.fragment == nil else {
                throw ConfigIssue(path: path + [CodingKeys.deepLink], "must be an absolute URI without query or fragment, e.g. notes://activate")
            }
        }
    }
}
