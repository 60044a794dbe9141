import GatehousePluginKit

/// The `oidc` plugin type: browser sign-in at an upstream OpenID provider (Entra ID, Google, Okta,
/// Keycloak, Sign in with Apple, another Gatehouse), brokered into the broker's own tokens and policy.
public enum OIDCPlugin: PluginFactory {
    public static let typeName = "oidc"
    public typealias Config = OIDCConfig

    public static let challenges = [OIDCProvider.challenge]

    public static func make(id: String, config: OIDCConfig, environment: PluginEnvironment) throws -> OIDCProvider {
        OIDCProvider(id: id, config: config, environment: environment)
    }
}
