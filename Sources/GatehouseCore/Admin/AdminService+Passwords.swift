import Foundation

/// People of the providers that keep passwords (type `local`), as administrators manage them: a new
/// user gets an account at once (listed before their first sign-in), with a password the admin
/// typed or one generated here; a reset replaces it. Either may be temporary: the person must choose
/// their own at the next sign-in before any token is issued. The console, the admin API and the CLI
/// all come here, and every change is audited (never the password).
extension AdminService {
    /// A provider that keeps passwords, and whether it can hold a temporary one.
    public struct PasswordProviderView: Sendable, Codable, Hashable {
        public var id: String
        public var temporaryPasswords: Bool
    }

    public var passwordProviders: [PasswordProviderView] {
        plugins.passwordKeepers.keys.sorted().map { id in
            PasswordProviderView(id: id, temporaryPasswords: plugins.temporaryPasswords[id] != nil)
        }
    }

    /// What a new user or a reset should be: the password (nil: generate one) and whether the person
    /// must change it at the next sign-in.
    public struct PasswordChoice: Sendable {
        public var password: String?
        public var mustChange: Bool
        public init(password: String?, mustChange: Bool) {
            self.password = password
            self.mustChange = mustChange
        }
    }

    /// The admin API's body for a new user: `username`, and optionally `provider`, `password` (else
    /// one is generated), `mustChange` (default true) and `app` (whose password policy applies).
    struct NewPasswordUser: Decodable {
        var provider: String?
        var username: String
        var password: String?
        var mustChange: Bool?
        var app: String?
    }

    /// The admin API's body for a reset: optionally `provider`, `password`, `mustChange` (default true).
    struct PasswordResetBody: Decodable {
        var provider: String?
        var password: String?
        var mustChange: Bool?
    }

    /// `POST /admin/v1/users`.
    public func createPasswordUser(_ body: JSONValue, by admin: AdminIdentity) async throws -> (user: UserView, generatedPassword: String?) {
        let request = try decode(NewPasswordUser.self, body, at: [])
        return try await createPasswordUser(
            providerID: request.provider, username: request.username, choice: PasswordChoice(password: request.password, mustChange: request.mustChange ?? true),
            app: request.app, by: admin, via: "api")
    }

    /// `POST /admin/v1/users/{id}/password`.
    public func resetPassword(accountID: String, _ body: JSONValue, by admin: AdminIdentity) async throws -> String? {
        let request = try decode(PasswordResetBody.self, body, at: [])
        return try await resetPassword(
            accountID: accountID, providerID: request.provider, choice: PasswordChoice(password: request.password, mustChange: request.mustChange ?? true), by: admin,
            via: "api")
    }

    /// Adds a user to a password-keeping provider (the only one when `providerID` is nil) and creates
    /// their account. Returns the user, and the password when it was generated here (shown once).
    /// `app`: whose password policy applies (default: the strictest of the apps using the provider).
    public func createPasswordUser(
        providerID: String?, username: String, choice: PasswordChoice, app: String? = nil, by admin: AdminIdentity, via: String
    ) async throws -> (user: UserView, generatedPassword: String?) {
        let (id, keeper) = try passwordKeeper(providerID)
        let policy = try await passwordPolicy(forProvider: id, app: app)
        let (password, generated) = try Self.password(choice, policy: policy, username: username)
        let subject: String
        if choice.mustChange {
            guard let temporary = plugins.temporaryPasswords[id] else { throw Self.noTemporaryPasswords(id) }
            subject = try await temporary.addUser(username: username, temporaryPassword: password, policy: policy)
        } else {
            subject = try await keeper.addUser(username: username, password: password, policy: policy)
        }
        // The username as the provider keeps it (it may normalize case or spaces).
        let username = try await keeper.listUsers().first { $0.subject == subject }?.username ?? username
        // The account exists from now on: admins find it, disable it, reset it, before any sign-in.
        let identity = ExternalIdentity(
            providerID: id, subject: subject, username: username, claims: IdentityClaims(preferredUsername: username), methods: []
        )
        let account: Account
        if let provisioned = try await oauth.provisioned.linkedAccount(for: identity),
            try await store.addIdentityLink(identity, accountID: provisioned, now: clock.now), let existing = try await store.account(id: provisioned)
        {
            // A SCIM client provisioned this person already: the new identity joins that account,
            // as the first sign-in would have joined it.
            account = existing
            try await store.appendAudit(
                AuditEvent(
                    time: clock.now, type: "account.linked", accountID: provisioned, providerID: id,
                    details: admin.auditDetails.merging(["by": "scim", "subject": subject, "via": via]) { first, _ in first }))
        } else {
            let creation = AuditEvent(time: clock.now, type: "account.created", providerID: id, details: admin.auditDetails.merging(["via": via]) { first, _ in first })
            account = try await IdentityLinker(store: store, clock: clock).link(identity, audit: creation).account
        }
        try await FirstSignInMarks(store: store, clock: clock).mark(account.id)
        var details = admin.auditDetails
        details["username"] = username
        details["via"] = via
        details["temporaryPassword"] = choice.mustChange ? "true" : "false"
        try await store.appendAudit(AuditEvent(time: clock.now, type: "user.added", accountID: account.id, providerID: id, details: details))
        return (try await user(id: account.id), generated ? password : nil)
    }

    /// Replaces the password of an account's identity at a password-keeping provider (the only one
    /// the account has there, or `providerID`). The account's sessions end and its tokens are
    /// revoked: whoever knew the old password is out. Returns the generated password, if any.
    public func resetPassword(accountID: String, providerID: String?, choice: PasswordChoice, by admin: AdminIdentity, via: String) async throws -> String? {
        let account = try await user(id: accountID)
        let candidates = account.identities.filter { plugins.passwordKeepers[$0.provider] != nil && (providerID == nil || $0.provider == providerID) }
        guard candidates.count == 1, let identity = candidates.first, let keeper = plugins.passwordKeepers[identity.provider] else {
            if candidates.isEmpty {
                throw BrokerError(
                    .invalidRequest, .badRequest,
                    providerID.map { "The account has no identity at '\($0)', or that provider keeps no passwords." }
                        ?? "The account has no password at a provider that keeps passwords (it signs in elsewhere).")
            }
            throw BrokerError(
                .invalidRequest, .badRequest, "The account has passwords at several providers; name one.", issues: [ConfigIssue(path: "provider", "required")])
        }
        let policy = try await passwordPolicy(forProvider: identity.provider, app: nil)
        let (password, generated) = try Self.password(choice, policy: policy, username: account.username)
        if choice.mustChange {
            guard let temporary = plugins.temporaryPasswords[identity.provider] else { throw Self.noTemporaryPasswords(identity.provider) }
            try await temporary.resetPassword(subject: identity.subject, toTemporary: password, policy: policy)
        } else {
            try await keeper.resetPassword(subject: identity.subject, to: password, policy: policy)
        }
        let ended = try await oauth.sessions.endAll(accountID: accountID, reason: "password_reset", actor: admin.name)
        let revoked = try await oauth.revoker.subject(accountID)
        var details = admin.auditDetails
        details["via"] = via
        details["temporaryPassword"] = choice.mustChange ? "true" : "false"
        details["sessionsEnded"] = String(ended)
        details["refreshTokensRevoked"] = String(revoked)
        try await store.appendAudit(
            AuditEvent(time: clock.now, type: "password.reset_by_admin", accountID: accountID, providerID: identity.provider, details: details))
        return generated ? password : nil
    }

    /// The password policy that applies to a provider's users: `app`'s, or the strictest (longest
    /// minimum) of the apps that use the provider, or the default.
    public func passwordPolicy(forProvider providerID: String, app: String?) async throws -> PasswordPolicy {
        let apps = try await store.apps()
        if let app {
            guard let chosen = apps.first(where: { $0.id == app }) else { throw Self.appNotFound(app) }
            return chosen.policy.passwordPolicy
        }
        let users = apps.filter { $0.policy.identityProviders.contains(providerID) }.map(\.policy.passwordPolicy)
        return users.max { $0.minLength < $1.minLength } ?? PasswordPolicy()
    }

    func passwordKeeper(_ providerID: String?) throws -> (String, any PasswordKeeping) {
        if let providerID {
            guard let keeper = plugins.passwordKeepers[providerID] else {
                throw BrokerError(
                    .invalidRequest, .badRequest, "The provider '\(providerID)' does not keep passwords.", issues: [ConfigIssue(path: "provider", "keeps no passwords")])
            }
            return (providerID, keeper)
        }
        guard plugins.passwordKeepers.count == 1, let only = plugins.passwordKeepers.first else {
            throw BrokerError(
                .invalidRequest, .badRequest, "There are \(plugins.passwordKeepers.count) providers that keep passwords; name one.",
                issues: [ConfigIssue(path: "provider", "required")])
        }
        return (only.key, only.value)
    }

    static func noTemporaryPasswords(_ providerID: String) -> BrokerError {
        BrokerError(
            .invalidRequest, .badRequest, "The provider '\(providerID)' cannot make a password temporary; give a password without 'must change'.",
            issues: [ConfigIssue(path: "mustChange", "not supported by \(providerID)")])
    }

    /// The password to set, and whether it was generated.
    static func password(_ choice: PasswordChoice, policy: PasswordPolicy, username: String) throws -> (String, Bool) {
        if let password = choice.password, !password.isEmpty {
            try policy.check(password, username: username)
            return (password, false)
        }
        return (try generatedPassword(policy: policy, username: username), true)
    }

    /// A password to read out or paste: letters and digits that cannot be confused (no 0/o, 1/l/i),
    /// or digits for a PIN-like policy, 20 of them (about 99 bits) or as many as the policy asks,
    /// drawn again in the rare case the policy refuses one (a run such as `abcd`).
    static func generatedPassword(policy: PasswordPolicy, username: String) throws -> String {
        let alphabet = Array(policy.numericOnly ? "0123456789" : "abcdefghjkmnpqrstuvwxyz23456789")
        let length = max(policy.minLength, min(policy.numericOnly ? 24 : 20, policy.maxLength))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let candidate = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            if (try? policy.check(candidate, username: username)) != nil { return candidate }
        }
        throw BrokerError(
            .invalidRequest, .badRequest, "The password policy refuses every password this broker could generate; give one.",
            issues: [ConfigIssue(path: "password", "required by this password policy")])
    }

    /// Creates the account of every password user that has none (added by a version that created it
    /// only at the first sign-in), so that every user is listed. Left to the first sign-in when SCIM
    /// is on, where a provisioned user may be waiting to be linked. Answers how many were created.
    public func createMissingPasswordAccounts() async throws -> Int {
        guard !oauth.provisioned.config.enabled else { return 0 }
        var created = 0
        for (id, keeper) in plugins.passwordKeepers {
            for user in try await keeper.listUsers() where try await store.identityLink(providerID: id, subject: user.subject) == nil {
                let identity = ExternalIdentity(
                    providerID: id, subject: user.subject, username: user.username, claims: IdentityClaims(preferredUsername: user.username), methods: [])
                let event = AuditEvent(time: clock.now, type: "account.created", providerID: id, details: ["via": "start"])
                let (account, made) = try await IdentityLinker(store: store, clock: clock).link(identity, audit: event)
                if made {
                    try await FirstSignInMarks(store: store, clock: clock).mark(account.id)
                    created += 1
                }
            }
        }
        return created
    }
}
