import Foundation
import GatehousePluginKit
import GatehouseSupport

/// An `activation` instance's settings for one app (`policy.plugins.<instance>`; before, the policy's
/// `activation` and `pinPolicy`), XignSys "personalization": how long activation data stay
/// redeemable, whether the app's own back end may issue them with its client credentials, the deep
/// link the activation data are wrapped in for the app to open, and the rules of an activation PIN
/// (the `PINRules` keys, beside the others).
public struct ActivationSettings: PluginSettings {
    /// How long activation data stay redeemable after they were issued (or sent again).
    public var lifetime: Seconds
    /// Whether the app's back end may issue activations (`POST /v1/activations` with its client
    /// credentials); administrators always may.
    public var issueByApp: Bool
    /// The link the app opens, e.g. `notes://activate`: the payload is appended as `?activation=`.
    /// Nil: `<issuer>/activate`.
    public var deepLink: String?

    /// What an activation PIN must look like.
    public var pin: PINRules

    public init(lifetime: Seconds = .days(7), issueByApp: Bool = false, deepLink: String? = nil, pin: PINRules = PINRules()) {
        self.lifetime = lifetime
        self.issueByApp = issueByApp
        self.deepLink = deepLink
        self.pin = pin
    }

    public init() { self.init(lifetime: .days(7)) }

    public static let formerPolicyKeys = [FormerPolicyKey("activation"), FormerPolicyKey("pinPolicy")]
    public static let fields = [
        SettingField("lifetime", label: "Lifetime", hint: "How long activation data stay redeemable: 5m to 90d."),
        SettingField("issueByApp", label: "The app's back end may issue activations"),
        SettingField("deepLink", label: "Deep link", hint: "e.g. notes://activate; empty: <issuer>/activate."),
    ]

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lifetime, forKey: .lifetime)
        try container.encode(issueByApp, forKey: .issueByApp)
        try container.encodeIfPresent(deepLink, forKey: .deepLink)
        try pin.encode(to: encoder)
    }

    enum CodingKeys: String, CodingKey { case lifetime, issueByApp, deepLink }

    public init(from decoder: any Decoder) throws {
        let defaults = ActivationSettings()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lifetime = try container.decodeIfPresent(Seconds.self, forKey: .lifetime) ?? defaults.lifetime
        issueByApp = try container.decodeIfPresent(Bool.self, forKey: .issueByApp) ?? defaults.issueByApp
        // Empty (the console's empty field) is none.
        deepLink = try container.decodeIfPresent(String.self, forKey: .deepLink).flatMap { $0.isEmpty ? nil : $0 }
        pin = try PINRules(from: decoder)
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
