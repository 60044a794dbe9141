import Foundation

/// What the admin console needs beyond the admin API's first version, for the console, the admin API
/// and the CLI alike: admin roles, signing keys, provider checks, user search and audit queries.
extension AdminService {
    // MARK: - Admin roles

    /// An account holding the admin role, as admins see it.
    public struct AdminView: Sendable, Codable, Hashable {
        public var accountID: String
        public var username: String?
        public var grantedBy: String
        public var grantedAt: Date
    }

    public func admins() async throws -> [AdminView] {
        var views: [AdminView] = []
        for grant in try await AdminRoleBook(store: store, clock: clock).grants() {
            let account = try await store.account(id: grant.accountID)
            views.append(AdminView(accountID: grant.accountID, username: account?.username, grantedBy: grant.grantedBy, grantedAt: grant.grantedAt))
        }
        return views.sorted { ($0.username ?? $0.accountID) < ($1.username ?? $1.accountID) }
    }

    /// The account an admin means by `name`: its id, or its username when exactly one account has it.
    public func accountID(named name: String) async throws -> String {
        if try await store.account(id: name) != nil { return name }
        let matches = try await store.accounts(matching: name, limit: 50, offset: 0).filter { $0.username == name }
        guard matches.count == 1, let account = matches.first else {
            throw BrokerError(
                .notFound, .notFound,
                matches.isEmpty
                    ? "No user '\(name)'." : "\(matches.count) accounts are named '\(name)'; name one by its id (\(matches.map(\.id).joined(separator: ", ")))."
            )
        }
        return account.id
    }

    /// The accounts holding the role, without looking each one up (for marking them in a list).
    public func adminAccountIDs() async throws -> Set<String> {
        Set(try await AdminRoleBook(store: store, clock: clock).grants().map(\.accountID))
    }

    public func isAdmin(accountID: String) async throws -> Bool {
        try await AdminRoleBook(store: store, clock: clock).isAdmin(accountID)
    }

    /// Gives an account the admin role (the console admits it from its next request on any node);
    /// false when it had it already.
    @discardableResult
    public func grantAdmin(accountID: String, by admin: AdminIdentity) async throws -> Bool {
        guard let account = try await store.account(id: accountID) else { throw BrokerError(.notFound, .notFound, "No user '\(accountID)'.") }
        guard try await AdminRoleBook(store: store, clock: clock).add(accountID, by: admin.name) else { return false }
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: "admin.role_granted", accountID: accountID,
                details: admin.auditDetails.merging(["username": account.username, "role": AdminRoleBook.admin]) { first, _ in first }
            )
        )
        return true
    }

    /// Takes the admin role away; the person's console sessions stop at their next request. False
    /// when the account did not have it.
    @discardableResult
    public func revokeAdmin(accountID: String, by admin: AdminIdentity) async throws -> Bool {
        // An admin who took their own role away would be locked out mid-session; another admin does it.
        guard admin.accountID != accountID else {
            throw BrokerError(.invalidRequest, .badRequest, "You cannot take your own admin role away; ask another admin.")
        }
        guard try await AdminRoleBook(store: store, clock: clock).remove(accountID) else { return false }
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: "admin.role_revoked", accountID: accountID,
                details: admin.auditDetails.merging(["role": AdminRoleBook.admin]) { first, _ in first }
            )
        )
        return true
    }

    // MARK: - Signing keys

    /// A signing key as admins see it (never the private key).
    public struct SigningKeyView: Sendable, Codable, Hashable {
        public var kid: String
        public var algorithm: String
        public var createdAt: Date
        /// `active`, `pending` (published, signs later), `retired` (published until `publishedUntil`)
        /// or `superseded`.
        public var state: String
        /// Whether access tokens are signed with this algorithm (`tokens.signingAlgorithm`).
        public var signsAccessTokens: Bool
        public var activatesAt: Date?
        public var publishedUntil: Date?
    }

    public func signingKeys() async throws -> [SigningKeyView] {
        let now = clock.now
        func from(_ record: SigningKeyRecord) -> Date { record.activatesAt ?? record.createdAt }
        let records = try await store.signingKeys().sorted { from($0) > from($1) }
        let active = SigningSchedule(records).activeKids(at: now)
        return records.compactMap { record in
            let state: String
            var publishedUntil: Date?
            if active[record.algorithm] == record.kid {
                state = "active"
            } else if from(record) > now {
                state = "pending"
            } else if let retired = record.retiredAt {
                publishedUntil = retired.addingTimeInterval(SigningKeyring.retiredKeyGrace)
                guard publishedUntil! > now else { return nil }
                state = "retired"
            } else {
                state = "superseded"
            }
            return SigningKeyView(
                kid: record.kid, algorithm: record.algorithm.rawValue, createdAt: record.createdAt, state: state,
                signsAccessTokens: record.algorithm == oauth.keyring.accessTokenAlgorithm, activatesAt: record.activatesAt, publishedUntil: publishedUntil
            )
        }
    }

    /// New signing keys for every algorithm (`SigningKeyring.rotate`), audited.
    public func rotateSigningKeys(immediately: Bool, by admin: AdminIdentity, via: String) async throws -> [SigningKeyRecord] {
        let keys = try await oauth.keyring.rotate(immediately: immediately)
        for key in keys {
            try await store.appendAudit(
                AuditEvent(
                    time: clock.now, type: "key.rotated",
                    details: admin.auditDetails.merging(["kid": key.kid, "alg": key.algorithm.rawValue, "via": via, "immediately": "\(immediately)"]) { first, _ in first
                    }
                )
            )
        }
        return keys
    }

    /// Revokes a signing key believed compromised: replaced at once if it signs, no longer published,
    /// and every token it signed refused on every node (the revocation list, within a second; the
    /// keys themselves within `SigningKeyring.reloadInterval`). Audited as `key.revoked`.
    public func revokeSigningKey(kid: String, by admin: AdminIdentity, via: String) async throws -> [SigningKeyRecord] {
        guard try await store.signingKeys().contains(where: { $0.kid == kid }) else {
            throw BrokerError(.notFound, .notFound, "No signing key '\(kid)'; `gatehouse keys list` shows them.")
        }
        let replacements = try await oauth.revoker.signingKey(kid, in: oauth.keyring)
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: "key.revoked",
                details: admin.auditDetails.merging(["kid": kid, "via": via, "replacedBy": replacements.map(\.kid).joined(separator: " ")]) { first, _ in first }
            )
        )
        return replacements
    }

    // MARK: - Providers

    /// Checks a provider against its upstream step by step (`gatehouse providers test`); audited
    /// with the username tried and whether a password was (never the password).
    public func diagnoseProvider(_ id: String, username: String?, password: String?, by admin: AdminIdentity) async throws -> [DiagnosticStep] {
        guard plugins.all[id] != nil else { throw BrokerError(.notFound, .notFound, "No provider '\(id)'.") }
        guard let plugin = plugins.diagnosables[id] else {
            throw BrokerError(.invalidRequest, .badRequest, "The provider '\(id)' (type \(plugins.typeNames[id] ?? "?")) has no upstream to check.")
        }
        let steps = await plugin.diagnose(username: username, password: password)
        var details = admin.auditDetails
        details["username"] = username ?? ""
        details["password"] = password == nil ? "no" : "yes"
        details["failedStep"] = steps.first { !$0.passed }?.name ?? ""
        try await store.appendAudit(
            AuditEvent(time: clock.now, type: "provider.tested", providerID: id, outcome: steps.allSatisfy(\.passed) ? nil : "failed", details: details)
        )
        return steps
    }

    // MARK: - Users and audit

    /// Users whose username contains `search` (any case) or whose id it is.
    public func users(matching search: String, limit: Int, offset: Int) async throws -> [UserView] {
        var views: [UserView] = []
        for account in try await store.accounts(matching: search, limit: min(max(limit, 1), 1000), offset: max(offset, 0)) {
            views.append(try await view(account))
        }
        return views
    }

    public func audit(_ query: AuditQuery) async throws -> [AuditEvent] {
        var query = query
        query.limit = min(max(query.limit, 1), 1000)
        query.offset = max(query.offset, 0)
        return try await store.auditEvents(query)
    }
}
