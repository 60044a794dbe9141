import Foundation

/// What a plugin sees of an application that delegates sign-in to the broker: who it is, the
/// plugins' settings for it, and the few policy facts plugins act on. The broker's own policy (tokens,
/// grants, lockouts, secrets) stays the broker's: a new broker policy key never changes this type.
public struct AppView: Sendable {
    /// The client id.
    public var id: String
    /// The name people see.
    public var name: String
    /// Whether it has a client secret (a confidential client); a native or browser app has none.
    public var isConfidential: Bool
    /// The identity providers its policy lets people sign in with, by instance id.
    public var identityProviders: [String]
    /// The authenticators (second factors) its policy uses, by instance id.
    public var authenticators: [String]
    /// The rules a new password must follow at this app.
    public var passwordPolicy: PasswordPolicy
    /// How long one of its flows may take from start to finish.
    public var flowLifetime: Seconds
    /// The language its people read when nothing else says (`TextTranslations.languages`): for
    /// what a plugin sends outside a flow (an invitation email). In a flow, `FlowContext.language`.
    public var language: String = "en"
    /// Each plugin instance's settings for the app (`policy.plugins.<instance>`), read through
    /// `settings(_:for:)`.
    var pluginSettings: [String: JSONValue]
    /// Settings still written under a top-level policy key of old (`PluginSettings.formerPolicyKeys`).
    var formerSettings: [String: JSONValue]
    /// The broker's settings decoder; without one (a view a test built), plain JSON decoding.
    package var settingsDecoder: (any PluginSettingsDecoder)?

    /// A view; the broker builds one from the app's policy.
    public init(
        id: String, name: String, isConfidential: Bool = false, identityProviders: [String] = [], authenticators: [String] = [],
        passwordPolicy: PasswordPolicy = PasswordPolicy(), flowLifetime: Seconds = Seconds(600), pluginSettings: [String: JSONValue] = [:],
        formerSettings: [String: JSONValue] = [:]
    ) {
        self.id = id
        self.name = name
        self.isConfidential = isConfidential
        self.identityProviders = identityProviders
        self.authenticators = authenticators
        self.passwordPolicy = passwordPolicy
        self.flowLifetime = flowLifetime
        self.pluginSettings = pluginSettings
        self.formerSettings = formerSettings
    }

    /// Whether the app's policy uses the plugin instance `instanceID`, in either role.
    public func uses(_ instanceID: String) -> Bool {
        identityProviders.contains(instanceID) || authenticators.contains(instanceID)
    }

    /// The verified addresses of an account that this app trusts: those vouched for by the app's own
    /// identity providers, and those enrolled with its authenticators. An address some other app's
    /// provider vouches for does not count here.
    public func verifiedEmails(in links: [IdentityLink]) -> [EmailAddress] {
        // Identity providers may enrol addresses too: an activation emailed to an address proves it.
        let trusted = Set(identityProviders + (authenticators + identityProviders).map(IdentityLink.enrolledAddressProvider))
        var addresses: [EmailAddress] = []
        for link in links where trusted.contains(link.providerID) {
            if let address = link.verifiedEmail, !addresses.contains(address) { addresses.append(address) }
        }
        return addresses
    }
}
