import GatehousePluginKit

/// The roles a plugin type's instances play, told from what its factory's `Instance` adopts, and checked
/// when config is read: an app's policy naming a provider in a role it does not play is a config error.
public struct PluginRoles: OptionSet, Sendable, Hashable {
    /// The roles as bits.
    public let rawValue: Int
    /// Roles from bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Establishes who someone is (`IdentityProvider`): listed in `policy.identityProviders`.
    public static let identityProvider = PluginRoles(rawValue: 1)
    /// Verifies one more factor (`Authenticator`): listed in `policy.authenticators`.
    public static let authenticator = PluginRoles(rawValue: 2)
}
