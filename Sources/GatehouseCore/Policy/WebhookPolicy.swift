import Foundation

/// Where an app's back end hears about what happens to its people: the webhook every audit event
/// about the app is delivered to (signed, at least once, in order per subject), and which event
/// types it wants. Off (no URL) by default.
public struct WebhookPolicy: Sendable, Hashable, Codable {
    /// An https URL (http only on a loopback host), without a fragment; nil: no webhook.
    public var url: String?
    /// The event types delivered: exact types (`signin.success`), prefixes (`signin.*`) or `*`.
    public var events: [String]

    /// A webhook policy; every parameter has its documented default.
    public init(url: String? = nil, events: [String] = ["*"]) {
        self.url = url
        self.events = events
    }

    /// Whether an event of `type` goes to the webhook.
    public func wants(_ type: String) -> Bool {
        events.contains { pattern in
            pattern == "*" || pattern == type || (pattern.hasSuffix(".*") && type.hasPrefix(String(pattern.dropLast())))
        }
    }

    enum CodingKeys: String, CodingKey { case url, events }

    /// Reads the policy, refusing a URL that is not https (or loopback http) and empty patterns, with their path.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let url = try container.decodeIfPresent(String.self, forKey: .url)
        self.url = url?.isEmpty == true ? nil : url
        events = try container.decodeIfPresent([String].self, forKey: .events) ?? ["*"]
        let path = decoder.codingPath
        if let url = self.url, !(LoopbackHost.allowsWebURL(url) && URLComponents(string: url)?.fragment == nil) {
            throw ConfigIssue(path: path + [CodingKeys.url], "must be an https URL (http only on a loopback host) without a fragment")
        }
        for (index, pattern) in events.enumerated()
        where pattern.isEmpty || pattern.contains(" ") || (pattern.contains("*") && pattern != "*" && !pattern.hasSuffix(".*")) {
            throw ConfigIssue(path: path + [CodingKeys.events, ConfigIssue.Key(index: index)], "must be an event type, a prefix ending in .* or *")
        }
    }
}
