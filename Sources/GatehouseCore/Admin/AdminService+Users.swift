import Foundation

/// Administration of providers and people: provider health, accounts with their identities, and
/// removing them.
extension AdminService {
    // MARK: - Providers

    /// A provider instance as admins see it.
    public struct ProviderView: Sendable, Codable {
        public var id: String
        public var type: String
        public var roles: [String]
        public var health: PluginHealth?
    }

    public func providers() async -> [ProviderView] {
        await providers(health: nil)
    }

    /// The providers with health already probed (`Broker.readiness()`'s checks), so that a page
    /// which also wants the last errors the probe records does not probe every upstream twice.
    public func providers(health probed: [String: PluginHealth]?) async -> [ProviderView] {
        var views: [ProviderView] = []
        for id in plugins.all.keys.sorted() {
            let plugin = plugins.all[id]!
            var roles: [String] = []
            if plugins.identityProviders[id] != nil { roles.append("identity_provider") }
            if plugins.authenticators[id] != nil { roles.append("authenticator") }
            if plugin.traits.statelessCapable { roles.append("stateless") }
            let health: PluginHealth?
            if let probed { health = probed[id] } else { health = await plugins.healthReporters[id]?.health() }
            views.append(ProviderView(id: id, type: plugins.typeNames[id] ?? "", roles: roles, health: health))
        }
        return views
    }

    // MARK: - Users

    /// An account with its linked identities.
    public struct UserView: Sendable, Codable {
        public struct Identity: Sendable, Codable {
            public var provider: String
            public var subject: String
            public var claims: [String: JSONValue]
            public var createdAt: Date
            public var lastSignInAt: Date
        }

        public var id: String
        public var username: String
        public var createdAt: Date
        public var testAccount: Bool
        /// Whether the account is disabled (signs in nowhere, renews nothing), and since when.
        public var disabled: Bool
        public var disabledAt: Date?
        /// Who disabled it: `admin`, or `scim:<client>`.
        public var disabledBy: String?
        public var identities: [Identity]
        /// Provisional identities attached to the account, with what was granted to them.
        public var provisionalIdentities: [ProvisionalIdentity.View]
    }

    public func users(limit: Int, offset: Int) async throws -> [UserView] {
        var views: [UserView] = []
        for account in try await store.accounts(limit: min(max(limit, 1), 1000), offset: max(offset, 0)) {
            views.append(try await view(account))
        }
        return views
    }

    public func user(id: String) async throws -> UserView {
        guard let account = try await store.account(id: id) else { throw BrokerError(.notFound, .notFound, "No user '\(id)'.") }
        return try await view(account)
    }

    func view(_ account: Account) async throws -> UserView {
        let identities = try await store.identityLinks(accountID: account.id).map {
            UserView.Identity(provider: $0.providerID, subject: $0.subject, claims: $0.claims.claims, createdAt: $0.createdAt, lastSignInAt: $0.lastSignInAt)
        }
        return UserView(
            id: account.id, username: account.username, createdAt: account.createdAt, testAccount: account.isTest, disabled: account.isDisabled,
            disabledAt: account.disabledAt, disabledBy: account.disabledBy, identities: identities,
            provisionalIdentities: try await store.provisionalIdentities(accountID: account.id).map(ProvisionalIdentity.View.init)
        )
    }

    /// Deregisters a user like the user could: account, links, provider data and tokens go.
    public func deregisterUser(id: String, by admin: AdminIdentity) async throws {
        guard try await oauth.deleteAccount(id: id, appID: nil, admin: admin) else {
            throw BrokerError(.notFound, .notFound, "No user '\(id)'.")
        }
    }

    /// Disables a user: every sign-in and grant is refused, and their sessions and tokens end
    /// (`account.disabled`, naming the admin).
    public func disableUser(id: String, reason: String?, by admin: AdminIdentity) async throws -> UserView {
        guard try await oauth.disableAccount(id: id, reason: reason ?? "admin", by: "admin", actor: admin.auditDetails) else {
            throw BrokerError(.notFound, .notFound, "No user '\(id)'.")
        }
        return try await user(id: id)
    }

    /// Enables a disabled user again (`account.enabled`); what was revoked stays revoked.
    public func enableUser(id: String, reason: String?, by admin: AdminIdentity) async throws -> UserView {
        guard try await oauth.enableAccount(id: id, reason: reason ?? "admin", actor: admin.auditDetails) else {
            throw BrokerError(.notFound, .notFound, "No user '\(id)'.")
        }
        return try await user(id: id)
    }

    /// Removes a user of a password-keeping provider (`gatehouse users remove`): the password, and the
    /// account with every token it holds when this was its only identity, else just the link.
    /// False when there is no such user.
    public func removePasswordUser(providerID: String, username: String, by admin: AdminIdentity) async throws -> Bool {
        guard let provider = plugins.passwordKeepers[providerID] else {
            throw BrokerError(.notFound, .notFound, "The provider '\(providerID)' does not keep passwords.")
        }
        guard let subject = try await provider.removeUser(username: username) else { return false }
        let link = try await store.identityLink(providerID: providerID, subject: subject)
        // An account left with no identity that can sign in (an enrolled address cannot) goes.
        if let accountID = link?.accountID, try await store.identityLinks(accountID: accountID).filter({ plugins.identityProviders[$0.providerID] != nil }).count <= 1 {
            _ = try await oauth.deleteAccount(id: accountID, appID: nil, admin: admin)
        } else {
            _ = try await store.unlinkIdentity(providerID: providerID, subject: subject)
        }
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: "user.removed", accountID: link?.accountID, providerID: providerID,
                details: admin.auditDetails.merging(["username": username]) { first, _ in first })
        )
        return true
    }
}
