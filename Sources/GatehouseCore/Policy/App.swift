import Foundation

/// An application that delegates sign-in to the broker (an OAuth client), with its policy.
public struct App: Sendable, Hashable, Codable {
    /// Who last wrote the app: the config file seeds `config` apps on every start; an app an admin
    /// changed at run time is `admin` and the file no longer overwrites it.
    public enum ManagedBy: String, Sendable, Codable { case config, admin }

    /// The client id.
    public var id: String
    /// The name people see.
    public var name: String
    /// SHA-256 digest of the client secret (hex); nil for a public client (a native or browser app).
    public var secretDigest: String?
    /// Where authorization answers may go; compared exactly.
    public var redirectURIs: [String]
    /// What the app may do.
    public var policy: Policy
    /// Who last wrote it: the config file or an admin.
    public var managedBy: ManagedBy
    /// When it was created.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// Bumped on every write; an update names the version it read, so two admins cannot overwrite
    /// each other unseen.
    public var version: Int
    /// A disabled app cannot authenticate, start flows or get tokens; its tokens were revoked when it
    /// was disabled. Enabling it again does not bring them back.
    public var disabled: Bool

    /// An app.
    public init(
        id: String, name: String, secretDigest: String? = nil, redirectURIs: [String] = [], policy: Policy,
        managedBy: ManagedBy = .config, createdAt: Date, updatedAt: Date, version: Int = 0, disabled: Bool = false
    ) {
        self.id = id
        self.name = name
        self.secretDigest = secretDigest
        self.redirectURIs = redirectURIs
        self.policy = policy
        self.managedBy = managedBy
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
        self.disabled = disabled
    }

    /// Whether it has a client secret (a confidential client).
    public var isConfidential: Bool { secretDigest != nil }
}

extension App {
    /// What plugins see of the app: no secret digest, no broker policy beyond the facts they act on.
    public var view: AppView {
        var view = AppView(
            id: id, name: name, isConfidential: isConfidential, identityProviders: policy.identityProviders, authenticators: policy.authenticators,
            passwordPolicy: policy.passwordPolicy, flowLifetime: policy.flowLifetime, pluginSettings: policy.plugins, formerSettings: policy.formerSettings
        )
        view.settingsDecoder = ConfigSettingsDecoder()
        view.language = policy.branding.defaultLanguage ?? "en"
        return view
    }
}

extension App {
    /// What plugins see of the app during `flow`: the flow's language is the one its people read.
    func view(in flow: FlowRecord) -> AppView {
        var view = view
        if let language = flow.language { view.language = language }
        return view
    }
}

/// Plugin settings decoded as config is: durations with units, the exact path in every error.
struct ConfigSettingsDecoder: PluginSettingsDecoder {
    func decode<Settings: PluginSettings>(_ type: Settings.Type, from json: JSONValue, instanceID: String) throws -> Settings {
        do {
            return try ConfigNodeDecoder.decode(Settings.self, from: ConfigNode(json: json), at: [ConfigIssue.Key("plugins"), ConfigIssue.Key(instanceID)])
        } catch {
            throw BrokerError.internalFailure(error.issues.map(\.description).joined(separator: "; "))
        }
    }
}

extension Policy {
    /// The settings JSON of an instance: its `plugins` entry with what former keys hold laid over it.
    func settingsJSON(for instanceID: String, formerKeys: [FormerPolicyKey]) -> JSONValue? {
        AppView.settingsJSON(for: instanceID, formerKeys: formerKeys, plugins: plugins, formerSettings: formerSettings)
    }
}

extension Policy {
    /// The verified addresses of an account that an app with this policy trusts (`AppView.verifiedEmails(in:)`).
    public func verifiedEmails(in links: [IdentityLink]) -> [EmailAddress] {
        AppView(id: "", name: "", identityProviders: identityProviders, authenticators: authenticators).verifiedEmails(in: links)
    }
}
