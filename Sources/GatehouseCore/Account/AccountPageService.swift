import Foundation

/// What a person does with their own account on the account page (`/account`), signed in there
/// through the broker (`AdminConsoleService` for the `.account` site): read it, rename or remove a
/// device, end a browser session or every other one, take back an app's consent, change a password
/// the broker keeps, and set up or remove a credential a plugin keeps for them. Each call names the
/// account the page's session proved; nothing here takes an account from the request.
public struct AccountPageService: Sendable {
    let broker: Broker

    public init(broker: Broker) { self.broker = broker }

    /// Everything the page shows.
    public struct Overview: Sendable {
        public var user: AdminService.UserView
        public var devices: [DeviceRecord]
        public var sessions: [BrowserSession]
        public var consents: [ConsentBook.Grant]
        public var credentials: [(offered: AdminService.OfferedResource, items: [JSONValue])]
        /// The providers that keep a password for this account.
        public var passwordProviders: [String]
    }

    public func overview(accountID: String) async throws -> Overview {
        let user = try await broker.admin.user(id: accountID)
        return Overview(
            user: user, devices: try await broker.store.devices(accountID: accountID), sessions: try await broker.oauth.sessions.sessions(accountID: accountID),
            consents: try await ConsentBook(store: broker.store, clock: broker.clock).grants(accountID: accountID),
            credentials: try await broker.admin.accountResourceItems(accountID: accountID),
            passwordProviders: user.identities.map(\.provider).filter { broker.plugins.passwordKeepers[$0] != nil }
        )
    }

    /// Ends one of the person's browser sessions, on every node.
    public func endSession(_ sessionID: String, accountID: String) async throws {
        guard try await broker.oauth.sessions.end(sessionID: sessionID, accountID: accountID, reason: "person") else {
            throw BrokerError(.notFound, .notFound, "No session '\(sessionID)' of this account is open.")
        }
    }

    /// Ends every session of the person but `current` (the one the page was signed in with).
    public func endOtherSessions(accountID: String, current: String?) async throws -> Int {
        var ended = 0
        for session in try await broker.oauth.sessions.sessions(accountID: accountID) where session.id != current {
            if try await broker.oauth.sessions.end(sessionID: session.id, accountID: accountID, reason: "person") { ended += 1 }
        }
        return ended
    }

    /// A new password for the person's identity at a provider that keeps passwords (the app
    /// policies' strictest rules apply). Every other browser session ends and every refresh and
    /// access token of the account is revoked; devices with registered sign-in keys stay (the page
    /// lists them to remove).
    /// `methods`: how the page's session signed in; an account with a second factor (a credential a
    /// plugin keeps for it) changes its password only after a sign-in that passed one of them.
    public func changePassword(accountID: String, providerID: String?, to password: String, currentSession: String?, methods: [String]) async throws {
        let user = try await broker.admin.user(id: accountID)
        let candidates = user.identities.filter { broker.plugins.passwordKeepers[$0.provider] != nil && (providerID == nil || $0.provider == providerID) }
        guard let identity = candidates.first, let keeper = broker.plugins.passwordKeepers[identity.provider] else {
            throw BrokerError(.invalidRequest, .badRequest, "This account has no password kept here: change it where you sign in.")
        }
        guard candidates.count == 1 else {
            throw BrokerError(.invalidRequest, .badRequest, "This account has passwords at several providers; an administrator resets them one by one.")
        }
        try await requireSecondFactor(accountID: accountID, methods: methods)
        let policy = try await broker.admin.passwordPolicy(forProvider: identity.provider, app: nil)
        try await keeper.resetPassword(subject: identity.subject, to: password, policy: policy)
        let ended = try await endOtherSessions(accountID: accountID, current: currentSession)
        let revoked = try await broker.oauth.revoker.subject(accountID)
        try await broker.store.appendAudit(
            AuditEvent(
                time: broker.clock.now, type: "password.changed", appID: ConsoleConfig.accountAppID, accountID: accountID, providerID: identity.provider,
                details: ["sessionsEnded": String(ended), "refreshTokensRevoked": String(revoked)]))
    }

    /// Starts setting up a credential of `provider` for the person (a new passkey, a new
    /// authenticator app), through that plugin's own flow in this browser (`binding`): its first
    /// page. Like a password change, it needs a sign-in that passed one of the account's second
    /// factors when it has any: a stolen password alone adds no passkey to sign in with later.
    /// `sessionID`: the single sign-on session the page was signed in with; the setup ends with it,
    /// and lasts at most `reauthenticateAfter` (5 minutes at least).
    public func beginEnrolment(
        provider: String, accountID: String, methods: [String], sessionID: String?, binding: BrowserBinding, clientIP: String?, language: String
    ) async throws -> FlowOutcome {
        try await requireSecondFactor(accountID: accountID, methods: methods)
        let lifetime = Seconds(max(broker.config.accountPage.reauthenticateAfter.value, 300))
        return try await broker.engine.startEnrolment(
            accountID: accountID, providerID: provider, signedInWith: methods, sessionID: sessionID, lifetime: lifetime, binding: binding, clientIP: clientIP,
            language: language)
    }

    /// Removes a credential a plugin keeps for the person (a passkey, an authenticator app): only an
    /// item of this account's, named by its key.
    /// A sign-in that passed one of the account's own second factors, when it has any: a password
    /// alone must not take them away, or replace the password they guard.
    func requireSecondFactor(accountID: String, methods: [String]) async throws {
        let factors = Set(try await broker.admin.accountResourceItems(accountID: accountID).filter { !$0.items.isEmpty }.map(\.offered.provider))
        guard !factors.isEmpty, factors.isDisjoint(with: methods) else { return }
        throw BrokerError(
            .reauthenticationRequired, .unauthenticated,
            "Sign in with your second factor (\(factors.sorted().joined(separator: ", "))) first: a password alone does not change this.")
    }

    /// Whether removing a credential of `provider` is allowed for a sign-in that passed `methods`:
    /// only one that passed that very provider (a stolen password cannot strip a second factor).
    public static func mayRemove(provider: String, methods: [String]) -> Bool { methods.contains(provider) }

    public func removeCredential(provider: String, resource: String, key: [String], accountID: String, methods: [String]) async throws {
        guard Self.mayRemove(provider: provider, methods: methods) else {
            throw BrokerError(
                .reauthenticationRequired, .unauthenticated, "Sign in with it first (\(provider)): only a sign-in that passed a credential's own provider removes it.")
        }
        guard
            let (offered, items) = try await broker.admin.accountResourceItems(accountID: accountID).first(where: {
                $0.offered.provider == provider && $0.offered.resource.name == resource
            })
        else { throw BrokerError(.notFound, .notFound, "No such credential.") }
        let declaration = offered.resource
        let owned = items.contains { item in
            declaration.itemKey.enumerated().allSatisfy { index, name in index < key.count && Self.text(item.objectValue?[name]) == key[index] }
        }
        guard owned else { throw BrokerError(.notFound, .notFound, "This account has no such credential.") }
        // Audited under the person's own name (`account:<id>`), not an admin's.
        _ = try await broker.admin.deleteResourceItem(resource, of: .provider(provider), key: key, by: AdminIdentity(name: "account:\(accountID)", accountID: accountID))
    }

    /// A resource item's field as pages show it and as removals name it by: text as it is, whole
    /// numbers without a fraction, `yes`/`no`, other JSON serialized. One rule, so a key read from a
    /// page always finds its item.
    public static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: text
        case .number(let number)?: Int(exactly: number).map(String.init) ?? String(number)
        case .bool(let flag)?: flag ? "yes" : "no"
        case nil, .null?: ""
        case let other?: String(decoding: other.serialized(), as: UTF8.self)
        }
    }
}
