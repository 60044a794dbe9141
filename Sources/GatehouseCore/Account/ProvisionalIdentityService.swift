import Foundation

/// Provisional identities end to end: an app's back end (or an admin for it) creates one for an
/// address and grants it things; a signed-in account of that app attaches it, at once when the account
/// already has that verified address, else after proving the address with an emailed code (through
/// the app's `AddressVerifying` plugin). Every step is audited.
public struct ProvisionalIdentityService: Sendable {
    public let store: any BrokerStore
    public let oauth: OAuthService
    public let plugins: PluginInstances
    /// The flow engine's: wrong codes count against the client address as in a flow.
    public let attempts: AttemptGuard
    public let clock: any BrokerClock

    public init(store: any BrokerStore, oauth: OAuthService, plugins: PluginInstances, attempts: AttemptGuard, clock: any BrokerClock) {
        self.store = store
        self.oauth = oauth
        self.plugins = plugins
        self.attempts = attempts
        self.clock = clock
    }

    /// Who manages provisional identities: an app's back end with its client credentials, or an admin
    /// acting for an app.
    public enum Manager: Sendable {
        case app(ClientCredentials, clientIP: String?)
        case admin(AdminIdentity, appID: String)
    }

    /// What attaching answers.
    public enum AttachOutcome: Sendable {
        /// Attached: the account already had the verified address.
        case ready(ProvisionalIdentity)
        /// A code went to the address; `verify` with it attaches.
        case verificationNeeded(email: EmailAddress, delivery: CodeDelivery)
    }

    static let maxEntries = 100

    // MARK: - For the app

    /// Creates the app's provisional identity for an address, or answers the existing one (then
    /// `created` is false and the grants given here are added to it).
    public func create(email: String, grants: [String], groups: [String], by manager: Manager) async throws -> (identity: ProvisionalIdentity, created: Bool) {
        let (appID, creator) = try await resolve(manager)
        guard let address = EmailAddress(email) else {
            throw BrokerError(.invalidEmail, .badRequest, "'email' is not an email address.", issues: [ConfigIssue(path: "email", "not an email address")])
        }
        try Self.check(grants, field: "grants")
        try Self.check(groups, field: "groups")
        let candidate = ProvisionalIdentity(
            id: ProvisionalIdentity.newID(), appID: appID, email: address, grants: grants.uniqued(), groups: groups.uniqued(),
            createdAt: clock.now, createdBy: creator
        )
        var (identity, created) = try await store.createProvisionalIdentity(candidate)
        if !created, !(grants.isEmpty && groups.isEmpty) {
            identity = try await store.addProvisionalGrants(id: identity.id, grants: grants, groups: groups) ?? identity
        }
        if created {
            try await audit("provisional_identity.created", identity, details: ["by": creator])
        }
        return (identity, created)
    }

    /// The app's provisional identity; `not_found` for another app's.
    public func identity(id: String, by manager: Manager) async throws -> ProvisionalIdentity {
        let (appID, _) = try await resolve(manager)
        return try await existing(id, appID: appID)
    }

    /// Grants more to an identity; once attached, what it is granted belongs to the account.
    public func grant(id: String, grants: [String], groups: [String], by manager: Manager) async throws -> ProvisionalIdentity {
        let (appID, creator) = try await resolve(manager)
        try Self.check(grants, field: "grants")
        try Self.check(groups, field: "groups")
        _ = try await existing(id, appID: appID)
        guard let identity = try await store.addProvisionalGrants(id: id, grants: grants, groups: groups) else { throw Self.notFound }
        try await audit(
            "provisional_identity.granted", identity, details: ["by": creator, "grants": grants.joined(separator: " "), "groups": groups.joined(separator: " ")])
        return identity
    }

    // MARK: - For the signed-in account

    /// Attaches an identity of the token's app to the token's account: at once when the account has
    /// the identity's verified address, else after `verify` with the code sent now (asking again sends
    /// a new code, within the resend limits).
    public func attach(id: String, accessToken: PresentedToken, clientIP: String?) async throws -> AttachOutcome {
        let (account, app) = try await signedIn(accessToken)
        let identity = try await attachable(id, app: app)
        if app.policy.verifiedEmails(in: try await store.identityLinks(accountID: account.id)).contains(identity.email) {
            return .ready(try await attach(identity, to: account, method: "verified_email"))
        }
        let verifier = try addressVerifier(of: app)
        let delivery = try await verifier.sendCode(to: identity.email, binding: Self.binding(identity, account), app: app.view, clientIP: clientIP)
        return .verificationNeeded(email: identity.email, delivery: delivery)
    }

    /// Attaches the identity once the code sent by `attach` is right. Wrong codes count against the
    /// address (in the plugin), and against this attachment and the client address like a flow's
    /// wrong answers (the app's lockout policy).
    public func verify(id: String, code: String, accessToken: PresentedToken, clientIP: String?) async throws -> ProvisionalIdentity {
        let (account, app) = try await signedIn(accessToken)
        let identity = try await attachable(id, app: app)
        let verifier = try addressVerifier(of: app)
        let binding = Self.binding(identity, account)
        try await attempts.reserve(clientIP: clientIP, accountKey: binding, policy: app.policy.lockout, appID: app.id, providerID: verifier.id)
        let address: EmailAddress
        do {
            address = try await verifier.checkCode(code, binding: binding)
        } catch let error as BrokerError where error.isWrongAnswer {
            let locked = try await attempts.recordFailure(clientIP: clientIP, accountKey: binding, policy: app.policy.lockout, appID: app.id, providerID: verifier.id)
            throw locked ?? error
        } catch {
            try? await attempts.release(clientIP: clientIP, accountKey: binding)
            throw error
        }
        try await attempts.recordSuccess(clientIP: clientIP, accountKey: binding)
        guard address == identity.email else { throw BrokerError.internalFailure("A code verified another address.") }
        return try await attach(identity, to: account, method: verifier.proofMethod)
    }

    /// The identities attached to the token's account, with their grants and groups.
    public func attached(accessToken: PresentedToken) async throws -> [ProvisionalIdentity] {
        let (account, app) = try await signedIn(accessToken)
        return try await store.provisionalIdentities(accountID: account.id).filter { $0.appID == app.id }
    }

    // MARK: - Rules

    private func attach(_ identity: ProvisionalIdentity, to account: Account, method: String) async throws -> ProvisionalIdentity {
        guard try await store.attachProvisionalIdentity(id: identity.id, accountID: account.id, now: clock.now) else { throw Self.alreadyAttached }
        var attached = identity
        attached.accountID = account.id
        attached.attachedAt = clock.now
        try await audit("provisional_identity.attached", attached, details: ["method": method])
        return attached
    }

    /// The identity, of this app, not attached yet.
    private func attachable(_ id: String, app: App) async throws -> ProvisionalIdentity {
        let identity = try await existing(id, appID: app.id)
        guard identity.accountID == nil else { throw Self.alreadyAttached }
        return identity
    }

    private func existing(_ id: String, appID: String) async throws -> ProvisionalIdentity {
        guard let identity = try await store.provisionalIdentity(id: id), identity.appID == appID else { throw Self.notFound }
        return identity
    }

    /// The account and app of a (stateful) access token.
    private func signedIn(_ accessToken: PresentedToken) async throws -> (Account, App) {
        let claims = try await oauth.authorize(accessToken)
        guard !claims.stateless else {
            throw BrokerError(.statelessUnsupported, .badRequest, "A stateless sign-in has no account to attach a provisional identity to.")
        }
        guard let account = try await store.account(id: claims.sub.value), let app = try await oauth.clients.apps.app(id: claims.clientID) else {
            throw BrokerError(.invalidToken, .unauthenticated, "The account no longer exists.")
        }
        return (account, app)
    }

    /// The first plugin of the app's policy that can verify addresses.
    private func addressVerifier(of app: App) throws -> any AddressVerifying {
        if let verifier = plugins.addressVerifier(for: app) { return verifier }
        throw BrokerError(.providerUnavailable, .unavailable, "The app '\(app.id)' allows no email-code plugin to verify the address with.")
    }

    private func resolve(_ manager: Manager) async throws -> (appID: String, creator: String) {
        switch manager {
        case .app(let presented, let clientIP):
            let app = try await oauth.clients.authenticate(presented, clientIP: clientIP)
            guard app.isConfidential else {
                throw BrokerError(.unauthorizedClient, .forbidden, "Only a confidential app's back end may manage provisional identities.")
            }
            return (app.id, "app:\(app.id)")
        case .admin(let admin, let appID):
            guard try await store.app(id: appID) != nil else {
                throw BrokerError(.notFound, .notFound, "No app '\(appID)'.", issues: [ConfigIssue(path: "app", "no such app")])
            }
            return (appID, "admin:\(admin.name)")
        }
    }

    /// The code of an attachment is bound to this identity and this account.
    static func binding(_ identity: ProvisionalIdentity, _ account: Account) -> String { "attach:\(identity.id):\(account.id)" }

    static func check(_ entries: [String], field: String) throws {
        if entries.count > maxEntries {
            throw BrokerError(
                .invalidRequest, .badRequest, "At most \(maxEntries) \(field) at once.", issues: [ConfigIssue(path: field, "more than \(maxEntries) entries")])
        }
        for (index, entry) in entries.enumerated()
        where entry.isEmpty || entry.utf8.count > 200 || entry.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw BrokerError(
                .invalidRequest, .badRequest, "\(field)[\(index)] must be 1-200 characters without control characters.",
                issues: [ConfigIssue(path: "\(field)[\(index)]", "must be 1-200 characters without control characters")]
            )
        }
    }

    static let notFound = BrokerError(.notFound, .notFound, "No such provisional identity.")
    static let alreadyAttached = BrokerError(
        .provisionalIdentityAttached, .conflict, "This provisional identity is already attached to an account; it cannot be attached again."
    )

    private func audit(_ type: String, _ identity: ProvisionalIdentity, details: [String: String]) async throws {
        var details = details
        details["provisionalIdentity"] = identity.id
        try await store.appendAudit(AuditEvent(time: clock.now, type: type, appID: identity.appID, accountID: identity.accountID, details: details))
    }
}
