import GatehousePluginKit

/// The `saml` plugin type: browser sign-in at a SAML 2.0 identity provider (ADFS, Entra ID, Okta,
/// Shibboleth, SimpleSAMLphp) with the Web Browser SSO profile, verified with xmlsec.
public enum SAMLPlugin: PluginFactory {
    public static let typeName = "saml"
    public typealias Config = SAMLConfig

    public static let challenges = [SAMLProvider.challenge]

    public static func make(id: String, config: SAMLConfig, environment: PluginEnvironment) throws -> SAMLProvider {
        SAMLProvider(id: id, config: config, environment: environment)
    }
}
