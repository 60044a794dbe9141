import Foundation

/// What administrators can do, from the admin API or the CLI: manage apps and their policies (the
/// stateless toggle among them), see providers and their health, manage users, read the audit log.
/// Every input is checked by the same strict decoder as the config file, so a mistake is reported
/// with its exact path; every change is audited with the admin's name and the values before and after.
public struct AdminService: Sendable {
    public let store: any BrokerStore
    public let plugins: PluginInstances
    public let oauth: OAuthService
    public let clock: any BrokerClock

    public init(store: any BrokerStore, plugins: PluginInstances, oauth: OAuthService, clock: any BrokerClock) {
        self.store = store
        self.plugins = plugins
        self.oauth = oauth
        self.clock = clock
    }

    /// An app as admins see it (never its secret).
    public struct AppView: Sendable, Codable, Equatable {
        public var id: String
        public var name: String
        public var confidential: Bool
        public var redirectURIs: [String]
        public var policy: Policy
        public var managedBy: App.ManagedBy
        public var createdAt: Date
        public var updatedAt: Date
        public var version: Int
        public var disabled: Bool

        init(_ app: App) {
            id = app.id
            name = app.name
            confidential = app.isConfidential
            redirectURIs = app.redirectURIs
            policy = app.policy
            managedBy = app.managedBy
            createdAt = app.createdAt
            updatedAt = app.updatedAt
            version = app.version
            disabled = app.disabled
        }
    }

    /// The body that creates an app.
    struct AppDefinition: Decodable {
        var id: String
        var name: String
        var confidential: Bool
        var redirectURIs: [String]
        var policy: Policy

        enum CodingKeys: String, CodingKey { case id, name, confidential, redirectURIs, policy }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            name = try container.decodeIfPresent(String.self, forKey: .name) ?? id
            confidential = try container.decodeIfPresent(Bool.self, forKey: .confidential) ?? true
            redirectURIs = try container.decodeIfPresent([String].self, forKey: .redirectURIs) ?? []
            policy = try container.decodeIfPresent(Policy.self, forKey: .policy) ?? Policy()
            guard Identifier.isValid(id) else { throw ConfigIssue(path: [CodingKeys.id], Identifier.rule) }
            try AppNameRule.check(name, path: [CodingKeys.name])
            try RedirectURIRule.check(redirectURIs, path: [CodingKeys.redirectURIs])
        }
    }

    /// The body that changes an app's name or redirect URIs, or disables or enables it.
    struct AppChanges: Decodable {
        var name: String?
        var redirectURIs: [String]?
        var disabled: Bool?

        enum CodingKeys: String, CodingKey { case name, redirectURIs, disabled }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            disabled = try container.decodeIfPresent(Bool.self, forKey: .disabled)
            redirectURIs = try container.decodeIfPresent([String].self, forKey: .redirectURIs)
            if let name { try AppNameRule.check(name, path: [CodingKeys.name]) }
            if let redirectURIs { try RedirectURIRule.check(redirectURIs, path: [CodingKeys.redirectURIs]) }
        }
    }

    // MARK: - Apps

    public func apps() async throws -> [AppView] {
        try await store.apps().map(AppView.init)
    }

    public func app(id: String) async throws -> AppView {
        AppView(try await existingApp(id))
    }

    /// Creates an app; a confidential one gets a generated secret, returned here once and never again.
    public func createApp(_ body: JSONValue, by admin: AdminIdentity) async throws -> (app: AppView, secret: String?) {
        var definition = try decode(AppDefinition.self, body, at: [])
        if ConsoleConfig.isBuiltIn(definition.id) {
            throw BrokerError(
                .invalidRequest, .badRequest, "'\(definition.id)' is the id of one of the broker's own apps; choose another.",
                issues: [ConfigIssue(path: "id", "reserved")])
        }
        try checkReferences(definition.policy, path: "policy")
        definition.policy = plugins.settings.normalized(definition.policy)
        let now = clock.now
        let secret = definition.confidential ? Self.newSecret() : nil
        let app = App(
            id: definition.id, name: definition.name, secretDigest: secret.map(SecretDigest.sha256Hex), redirectURIs: definition.redirectURIs,
            policy: definition.policy, managedBy: .admin, createdAt: now, updatedAt: now
        )
        guard try await store.insertApp(app) else {
            throw BrokerError(.conflict, .conflict, "An app with id '\(app.id)' already exists.", issues: [ConfigIssue(path: "id", "already exists")])
        }
        try await audit("app.created", app: app.id, admin: admin, before: nil, after: AppView(app))
        return (AppView(app), secret)
    }

    /// Changes an app's name or redirect URIs, or disables (or enables) it. Disabling revokes the
    /// app's refresh tokens and makes its access tokens inactive at once, on every node (within the
    /// revocation list's second); the app can no longer authenticate, start flows or get tokens.
    public func updateApp(id: String, changes body: JSONValue, by admin: AdminIdentity) async throws -> AppView {
        let changes = try decode(AppChanges.self, body, at: [])
        let before = try await existingApp(id)
        let event =
            switch (before.disabled, changes.disabled) {
            case (false, true?): "app.disabled"
            case (true, false?): "app.enabled"
            default: "app.updated"
            }
        let view = try await change(id, by: admin, event: event) { app in
            if let name = changes.name { app.name = name }
            if let redirectURIs = changes.redirectURIs { app.redirectURIs = redirectURIs }
            if let disabled = changes.disabled { app.disabled = disabled }
        }
        // Every request to disable revokes, even of an app already disabled: a disable whose
        // revocation failed half-way is finished by asking again.
        if changes.disabled == true { try await revokeTokens(of: id) }
        return view
    }

    /// Every token an app holds stops working (`Revoker.client`); this node forgets the app at once.
    func revokeTokens(of appID: String) async throws {
        oauth.clients.apps.forget(appID)
        try await oauth.revoker.client(appID)
    }

    /// Applies a JSON merge patch to the app's policy (e.g. `{"statelessAuthentication": true}`).
    /// Takes effect on the next request on every node.
    public func patchPolicy(id: String, patch: JSONValue, by admin: AdminIdentity) async throws -> AppView {
        guard case .object = patch else {
            throw BrokerError(.invalidRequest, .badRequest, "The policy patch must be a JSON object.", issues: [ConfigIssue(path: "policy", "expected an object")])
        }
        return try await change(id, by: admin, event: "policy.updated") { app in
            // The stored policy in the new form first: a former key an earlier version stored must not
            // override what this patch sets under `plugins`.
            var base = plugins.settings.normalized(app.policy)
            if case .object(let changes) = patch, case .object(let named)? = changes["plugins"] {
                base = plugins.settings.droppingFormerKeys(claimedBy: Set(named.keys), from: base)
            }
            let current = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(base))
            let merged = JSONMergePatch.apply(patch, to: current)
            let policy = try decode(Policy.self, merged, at: [ConfigIssue.Key("policy")])
            try checkReferences(policy, path: "policy")
            app.policy = plugins.settings.normalized(policy)
        }
    }

    /// A new secret for a confidential app, returned once; the old one stops working at once
    /// (within a second on the token endpoints).
    public func rotateSecret(id: String, by admin: AdminIdentity) async throws -> String {
        let secret = Self.newSecret()
        _ = try await change(id, by: admin, event: "app.secret_rotated") { app in
            guard app.isConfidential else {
                throw BrokerError(.invalidRequest, .badRequest, "'\(app.id)' is a public app; it has no secret.")
            }
            app.secretDigest = SecretDigest.sha256Hex(secret)
        }
        return secret
    }

    public func deleteApp(id: String, by admin: AdminIdentity) async throws {
        let app = try await existingApp(id)
        // One of the broker's own apps is the config file's; one an admin made with such an id
        // before it was reserved may go (the broker refuses to start beside it).
        if app.managedBy != .admin { try Self.refuseConsoleApp(id) }
        guard try await store.deleteApp(id: id) else { throw Self.appNotFound(id) }
        // The store deleted its refresh tokens; its access tokens must stop verifying too.
        try await revokeTokens(of: id)
        // Its consents, deliveries and webhook secrets go too (before the plugins, whose failure must
        // not leave them for an app made later with this id), and then what each plugin keeps.
        try await ConsentBook(store: store, clock: clock).revokeAll(appID: id)
        _ = try await store.deleteOutboxItems(appID: id)
        _ = try await oauth.events.secrets.delete(key: id)
        for (pluginID, plugin) in plugins.forgetting {
            for change in try await plugin.forget(.app(id: id)) { try await audit(change, plugin: pluginID, appID: id, admin: admin) }
        }
        try await audit("app.deleted", app: id, admin: admin, before: AppView(app), after: nil)
    }

    /// Returns an app to the config file's management: the next start applies its `apps[]` entry again.
    public func returnToConfig(id: String, by admin: AdminIdentity) async throws -> AppView {
        try await change(id, by: admin, event: "app.returned_to_config", managedBy: .config) { _ in }
    }

    /// Reads, changes and writes an app with optimistic concurrency, marks it admin-managed, and
    /// audits the values before and after.
    func change(_ id: String, by admin: AdminIdentity, event: String, managedBy: App.ManagedBy = .admin, _ body: (inout App) throws -> Void) async throws -> AppView {
        try Self.refuseConsoleApp(id)
        let before = try await existingApp(id)
        var app = before
        try body(&app)
        app.managedBy = managedBy
        app.updatedAt = clock.now
        guard try await store.updateApp(app) else {
            throw BrokerError(.conflict, .conflict, "The app was changed by someone else at the same time; read it again and retry.")
        }
        app.version += 1
        try await audit(event, app: id, admin: admin, before: AppView(before), after: AppView(app))
        return AppView(app)
    }

    /// The console's own app follows `admin.console` in the config file alone: changed at run time it
    /// could lock every admin out (disabled), or let one drop the console's second factor.
    static func refuseConsoleApp(_ id: String) throws {
        guard id != ConsoleConfig.appID else {
            throw BrokerError(.invalidRequest, .badRequest, "'\(id)' is the admin console's app: change admin.console in the config file instead.")
        }
        guard id != ConsoleConfig.accountAppID else {
            throw BrokerError(.invalidRequest, .badRequest, "'\(id)' is the account page's app: change accountPage in the config file instead.")
        }
    }

    func existingApp(_ id: String) async throws -> App {
        guard let app = try await store.app(id: id) else { throw Self.appNotFound(id) }
        return app
    }

    static func appNotFound(_ id: String) -> BrokerError { BrokerError(.notFound, .notFound, "No app '\(id)'.") }

    /// 256 bits from the system CSPRNG.
    static func newSecret() -> String { RandomToken.make(byteCount: 32) }

    func decode<T: Decodable>(_ type: T.Type, _ body: JSONValue, at path: [any CodingKey]) throws -> T {
        do {
            return try ConfigNodeDecoder.decode(T.self, from: ConfigNode(json: body), at: path)
        } catch {
            throw Self.invalid(error.issues)
        }
    }

    func checkReferences(_ policy: Policy, path: String) throws {
        let issues =
            policy.referenceIssues(
                identityProviders: Set(plugins.identityProviders.keys), authenticators: Set(plugins.authenticators.keys),
                statelessCapable: plugins.statelessCapableIdentityProviders, path: path
            ) + plugins.settings.issues(policy, path: path)
        if !issues.isEmpty { throw Self.invalid(issues) }
    }

    static func invalid(_ issues: [ConfigIssue]) -> BrokerError {
        BrokerError(.invalidRequest, .badRequest, issues.map(\.description).joined(separator: "; "), issues: issues)
    }

    // MARK: - Audit

    func audit(_ type: String, app: String, admin: AdminIdentity, before: AppView?, after: AppView?) async throws {
        var details = admin.auditDetails
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        if let before { details["before"] = String(decoding: try encoder.encode(before), as: UTF8.self) }
        if let after { details["after"] = String(decoding: try encoder.encode(after), as: UTF8.self) }
        try await store.appendAudit(AuditEvent(time: clock.now, type: type, appID: app, details: details))
    }
}
