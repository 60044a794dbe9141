import GatehousePluginKit

/// A `device-key` instance's settings for one app (`policy.plugins.<instance>`; before, the policy's
/// `deviceRegistration`): whether a device registering a sign-in key must prove itself with a device
/// attestation, and whether the key may create a new account or is only added to the account of
/// someone already signed in (a second device).
public struct DeviceKeySettings: PluginSettings {
    public enum Attestation: String, Sendable, Hashable, Codable, CaseIterable {
        case off, optional, required
    }

    public enum AccountRule: String, Sendable, Hashable, Codable, CaseIterable {
        /// Registration creates a new account (self-registration must be on); a signed-in person
        /// cannot add a device this way.
        case new
        /// The key joins the account whose access token the registration presents.
        case signedIn
        /// Either, by whether the registration presents an access token.
        case either
    }

    public var attestation: Attestation
    public var account: AccountRule

    public init(attestation: Attestation = .off, account: AccountRule = .either) {
        self.attestation = attestation
        self.account = account
    }

    public init() { self.init(attestation: .off) }

    public static let formerPolicyKeys = [FormerPolicyKey("deviceRegistration")]
    public static let fields = [
        SettingField(
            "attestation", label: "Device attestation", choices: Attestation.allCases.map(\.rawValue),
            hint: "required: only keys attested when registered through this app sign in."),
        SettingField("account", label: "Account of a new key", choices: AccountRule.allCases.map(\.rawValue)),
    ]

    enum CodingKeys: String, CodingKey { case attestation, account }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath
        let attestationName = try container.decodeIfPresent(String.self, forKey: .attestation) ?? "off"
        guard let attestation = Attestation(rawValue: attestationName) else {
            throw ConfigIssue(path: path + [CodingKeys.attestation], "must be off, optional or required, got '\(attestationName)'")
        }
        let accountName = try container.decodeIfPresent(String.self, forKey: .account) ?? "either"
        guard let account = AccountRule(rawValue: accountName) else {
            throw ConfigIssue(path: path + [CodingKeys.account], "must be new, signedIn or either, got '\(accountName)'")
        }
        self.attestation = attestation
        self.account = account
    }
}
