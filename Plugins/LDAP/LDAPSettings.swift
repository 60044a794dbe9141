import GatehousePluginKit

/// An `ldap` instance's settings for one app (`policy.plugins.<instance>`).
public struct LDAPSettings: PluginSettings {
    /// On Active Directory, someone whose password expired or must be changed (`532`, `773`) may
    /// change it on the sign-in page, with their current password; off: they are told to ask an
    /// administrator.
    public var passwordChange: Bool

    public init() { passwordChange = false }

    public static let fields = [
        SettingField(
            "passwordChange", label: "Let people change an expired password when they sign in",
            hint: "Active Directory only: with their current password, under the domain's password policy and the app's.")
    ]

    enum CodingKeys: String, CodingKey { case passwordChange }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        passwordChange = try container.decodeIfPresent(Bool.self, forKey: .passwordChange) ?? false
    }
}
