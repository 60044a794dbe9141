import Foundation

/// Builds a plugin type's instances from config. A plugin ships one factory: its type name (what
/// `providers[].type` says), its own config type, and how to make an instance.
public protocol PluginFactory: SendableMetatype {
    /// The instance's `config:`, decoded with exact error paths.
    associatedtype Config: Decodable & Sendable
    /// The `type:` value in config, e.g. `ldap`.
    static var typeName: String { get }
    /// The type of its instances. What it adopts is what they are: an `IdentityProvider` is listed in
    /// an app's `policy.identityProviders`, an `Authenticator` in `policy.authenticators`, and a type
    /// adopting both in either.
    associatedtype Instance: GatehousePlugin
    /// Makes an instance; may throw a `ConfigIssue` whose path is relative to the instance's `config:`.
    static func make(id: String, config: Config, environment: PluginEnvironment) throws -> Instance
    /// The challenge types the plugin's instances ask, declared once (fields, and how a page shows them).
    static var challenges: [ChallengeDescription] { get }
    /// Every text a person sees from its instances (challenge texts, flow errors, emails) in the
    /// languages the broker speaks (`TextTranslations.languages`); none by default.
    static var translations: TextTranslations { get }
    /// The per-app settings of its instances (`policy.plugins.<instance>`); `NoSettings` by default.
    associatedtype Settings: PluginSettings = NoSettings
}

extension PluginFactory {
    /// None by default.
    public static var challenges: [ChallengeDescription] { [] }
    /// None by default: the plugin's texts show in English.
    public static var translations: TextTranslations { TextTranslations() }
}
