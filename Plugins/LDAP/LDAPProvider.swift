import Foundation
import GatehousePluginKit
import GatehouseSupport
import Logging

/// Signs people in against an LDAP directory with their directory username and password
/// (search-then-bind), and maps their entry and groups to claims.
public struct LDAPProvider: IdentityProvider, DirectorySearching {
    public var traits: PluginTraits { PluginTraits(registration: .password) }
    public let id: String
    let directory: LDAPDirectory
    let pool: LDAPConnectionPool
    let logger: Logger
    let clock: any BrokerClock
    let audit: AuditLog?
    let lockouts: LockoutBook
    let healthCache = SharedResult<PluginHealth>(lifetime: 1)
    /// One administrator's directory search at a time: sign-ins keep the other connections.
    let searches = ConcurrencyLimit(limit: 1)

    init(id: String, config: LDAPConfig, environment: PluginEnvironment) {
        self.id = id
        self.directory = LDAPDirectory(config: config)
        self.pool = LDAPConnectionPool(
            settings: LDAPConnectionSettings(
                urls: config.urls, startTLS: config.startTLS, rootCA: config.rootCA, insecureSkipVerify: config.insecureSkipVerify,
                connectTimeout: config.connectTimeout.value, operationTimeout: config.operationTimeout.value
            ),
            maxConnections: config.maxConnections
        )
        self.logger = environment.logger
        self.clock = environment.clock
        self.audit = environment.audit
        self.lockouts = environment.lockouts
    }

    var config: LDAPConfig { directory.config }

    /// Usernames longer than this are refused before the directory is asked.
    static let maxUsernameLength = 256

    public func begin(in context: FlowContext) async throws -> FlowStep {
        guard context.purpose == .authenticate else {
            throw BrokerError(.registrationDisabled, .forbidden, "Accounts of '\(id)' are created in the directory, not here; sign in instead.")
        }
        return .challenge(.credentials(for: id, in: context))
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        if context.hasState { return try await changePassword(answer, in: context) }
        let username = try answer.string("username").trimmingCharacters(in: .whitespaces)
        let password = try answer.string("password")
        switch try await attempt(username: username, password: password) {
        case .identified(let identity):
            return .identified(identity)
        case .restricted(let restriction, let dn, let lockKey):
            guard restriction.passwordChangeHelps, try context.app.settings(LDAPSettings.self, for: id).passwordChange else { throw restriction.error }
            let challenge = Challenge(type: Self.changePasswordChallenge.type, fields: ["reason": .string(restriction.rawValue), "username": .string(username)])
            let counted = config.countsFailuresPerEntry ? lockKey : nil
            return .challenge(challenge, state: PasswordChangeState(username: username, dn: dn, restriction: restriction, lockKey: counted))
        }
    }

    /// The identity for a directory username and password, or a refusal (a restriction AD gives for
    /// the right password is thrown as its own error).
    func signIn(username: String, password: String) async throws -> ExternalIdentity {
        switch try await attempt(username: username, password: password) {
        case .identified(let identity): return identity
        case .restricted(let restriction, _, _): throw restriction.error
        }
    }

    /// How a sign-in with the right password ended.
    enum Attempt: Sendable {
        case identified(ExternalIdentity)
        /// Active Directory refused the sign-in for a reason the person may know (they proved the password).
        case restricted(ActiveDirectoryRestriction, dn: String, lockKey: String)
    }

    /// Signs in with a directory username and password. Every refusal that could tell someone without
    /// the password anything looks the same on the wire (the reason goes to the audit log).
    func attempt(username: String, password: String) async throws -> Attempt {
        let refused = BrokerError(.invalidCredentials, .failedAttempt, "Wrong username or password.")
        guard !username.isEmpty else { throw BrokerError.invalidAnswer("The answer needs a username.") }
        // A simple bind with an empty password is an unauthenticated bind, which many directories answer
        // with success: it must never reach the directory.
        guard !password.isEmpty else { throw refused.because("empty_password") }
        // libldap's callers often measure passwords with strlen: a NUL would cut one short, down to empty.
        guard !password.utf8.contains(0) else { throw refused.because("invalid_password") }
        guard username.count <= Self.maxUsernameLength, !username.contains("\0") else { throw refused.because("invalid_username") }

        let directory = directory
        let outcome: LDAPDirectory.SignIn
        do {
            if config.countsFailuresPerEntry {
                outcome = try await signInCountingPerEntry(username: username, password: password, refused: refused)
            } else {
                outcome = try await pool.run { connection throws(LDAPFailure) in try directory.signIn(connection, username: username, password: password) }
            }
        } catch let failure as LDAPFailure {
            throw unavailable(failure)
        }
        switch outcome {
        case .refused(let reason):
            if reason == "ambiguous_user" {
                logger.error("several directory entries match one username; make userSearch.filter or userSearch.username unique", metadata: ["provider": .string(id)])
            }
            throw refused.because(reason)
        case .restricted(let restriction, let entry):
            return .restricted(restriction, dn: entry.dn, lockKey: lockKey(entry))
        case .identified(let entry, let groups):
            return .identified(try identity(entry, groups: groups, typedUsername: username))
        }
    }

    /// The lockout key of a directory entry: its subject, else its DN.
    func lockKey(_ entry: LDAPEntry) -> String {
        "entry:" + (entry.first(config.userSearch.idAttr) ?? entry.dn.lowercased())
    }

    /// A sign-in whose wrong passwords count against the entry found, whichever of its usernames was
    /// typed. A locked entry is refused like a wrong password: `locked_out` would tell anyone that
    /// the username exists.
    private func signInCountingPerEntry(username: String, password: String, refused: BrokerError) async throws -> LDAPDirectory.SignIn {
        let directory = directory
        let entry: LDAPEntry
        switch try await pool.run({ connection throws(LDAPFailure) in try directory.find(connection, username: username) }) {
        case .refused(let reason): return .refused(reason: reason)
        case .entry(let found): entry = found
        }
        do {
            return try await lockouts.guess(lockKey(entry), what: "This account", rule: config.lockout) {
                let outcome = try await pool.run { connection throws(LDAPFailure) in try directory.signIn(connection, entry: entry, password: password) }
                if case .refused(let reason) = outcome { return .wrong(refused.because(reason)) }
                return .right(outcome)
            }
        } catch let error as BrokerError where error.code == .lockedOut {
            return .refused(reason: "too_many_failures")
        }
    }

    // MARK: - Password change (Active Directory)

    /// What the flow keeps while the person changes an expired password: who, never a password.
    struct PasswordChangeState: Codable, Sendable {
        var username: String
        var dn: String
        var restriction: ActiveDirectoryRestriction
        /// The entry's lockout key, when wrong passwords count per entry.
        var lockKey: String?
    }

    /// Changes the password with the current one (asked again: the flow keeps no password), under the
    /// app's password policy and then the domain's, and signs in with the new one.
    func changePassword(_ answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let state = try context.state(PasswordChangeState.self)
        let current = try answer.string("currentPassword")
        let new = try answer.string("newPassword")
        let wrongCurrent = BrokerError(.invalidCredentials, .failedAttempt, "The current password is wrong.")
        guard !current.isEmpty, !current.utf8.contains(0) else { throw wrongCurrent.because("invalid_password") }
        guard !new.utf8.contains(0) else { throw BrokerError(.passwordDenied, .badRequest, "The new password must not contain NUL.") }
        guard new != current else { throw BrokerError(.passwordDenied, .badRequest, "The new password must differ from the current one.") }
        try context.app.passwordPolicy.check(new, username: state.username)

        let directory = directory
        let dn = state.dn
        let change = try await countingPerEntry(state.lockKey, wrong: wrongCurrent) {
            do {
                return try await pool.run { connection throws(LDAPFailure) in try directory.changePassword(connection, dn: dn, current: current, new: new) }
            } catch let failure as LDAPFailure {
                throw unavailable(failure)
            }
        }
        switch change {
        case .wrongCurrentPassword:
            throw wrongCurrent.because("wrong_password")
        case .refusedByPolicy:
            // The current password was right: the person may know which rule (they choose again).
            throw BrokerError(
                .passwordDenied, .badRequest,
                "The directory refused the new password: it is too short or too simple, was used before, or the password was changed too recently."
            ).publicly(because: "directory_password_policy")
        case .notAllowed:
            throw BrokerError(.accessDenied, .forbidden, "The directory does not let this account change its password here. Ask your administrator.")
                .publicly(because: "password_change_not_allowed").endingFlow()
        case .changed:
            // Changed for good: whatever happens next, this flow has nothing more to do.
            do {
                try await audit?.append(
                    "ldap.password_changed", appID: context.app.id,
                    details: ["provider": id, "username": state.username, "reason": state.restriction.rawValue])
                switch try await attempt(username: state.username, password: new) {
                case .identified(let identity): return .identified(identity)
                case .restricted(let restriction, _, _): throw restriction.error
                }
            } catch let error as BrokerError {
                throw error.endingFlow()
            }
        }
    }

    /// Runs `body` as one guess on the entry's lockout key, when there is one.
    private func countingPerEntry(
        _ key: String?, wrong: BrokerError, _ body: () async throws -> LDAPDirectory.PasswordChange
    ) async throws -> LDAPDirectory.PasswordChange {
        guard let key else { return try await body() }
        do {
            return try await lockouts.guess(key, what: "This account", rule: config.lockout) {
                let change = try await body()
                return change == .wrongCurrentPassword ? .wrong(wrong.because("wrong_password")) : .right(change)
            }
        } catch let error as BrokerError where error.code == .lockedOut {
            throw wrong.because("too_many_failures")
        }
    }

    static let changePasswordChallenge = ChallengeDescription(
        type: "change_directory_password",
        summary:
            "The directory password is right but expired or must be changed (`reason`): the current one again and a new one, which the app's password policy and then the directory's must accept.",
        title: "Change your password", prompt: "Your password must be changed before you sign in. Choose a new one.", submitLabel: "Change password",
        elements: [
            .secret("currentPassword", label: "Current password", autocomplete: "current-password", maxLength: 256),
            .secret("newPassword", label: "New password", autocomplete: "new-password", maxLength: 256),
            .detail("reason", .string, "`password_expired` or `password_must_change`."),
            .detail("username", .string, "The username the person signed in with."),
        ])

    private func identity(_ entry: LDAPEntry, groups: [String], typedUsername: String) throws -> ExternalIdentity {
        let search = config.userSearch
        guard let subject = entry.first(search.idAttr), !subject.isEmpty else {
            logger.error("a directory entry has no value for userSearch.idAttr", metadata: ["provider": .string(id), "attribute": .string(search.idAttr)])
            throw BrokerError(.providerUnavailable, .unavailable, "The directory entry has no identifier; an administrator must fix the provider's config.").because(
                "missing_id_attribute")
        }
        let username = entry.first(search.username) ?? typedUsername
        let email = search.emailAttr.flatMap(entry.first)
        let claims = IdentityClaims(
            // The directory is the organisation's own record of the address.
            email: email, emailVerified: email != nil, name: search.nameAttr.flatMap(entry.first),
            preferredUsername: search.preferredUsernameAttr.flatMap(entry.first) ?? username, groups: config.groupSearch != nil ? groups : nil
        )
        return ExternalIdentity(providerID: id, subject: subject, username: username, claims: claims, methods: ["pwd"])
    }

    private func unavailable(_ failure: LDAPFailure) -> BrokerError {
        logger.warning("directory call failed", metadata: ["provider": .string(id), "stage": .string(failure.stage.rawValue), "error": .string(failure.description)])
        return BrokerError(.providerUnavailable, .unavailable, "The directory is not reachable right now; try again shortly.", retryAfter: 1)
            .because("directory_\(failure.stage.rawValue.replacingOccurrences(of: " ", with: "_"))")
    }

    // MARK: - Directory search

    /// People in the directory whose username, name or address contains `text`, for an
    /// administrator's search; entries without the identifier attribute are left out.
    public func searchDirectory(_ text: String, limit: Int) async throws -> DirectorySearch {
        let (directory, pool) = (directory, pool)
        let found: (entries: [LDAPEntry], limited: Bool)
        do {
            found = try await searches.run(waitingAtMost: 2) {
                try await pool.run { connection throws(LDAPFailure) in try directory.search(connection, containing: text, limit: limit) }
            }
        } catch is ConcurrencyLimit.Timeout {
            throw BrokerError(.rateLimited, .tooManyRequests, "Another directory search is running; try again in a moment.", retryAfter: 2)
        } catch let failure as LDAPFailure {
            throw unavailable(failure)
        }
        let search = config.userSearch
        let people = found.entries.compactMap { entry -> DirectoryPerson? in
            guard let subject = entry.first(search.idAttr), !subject.isEmpty else { return nil }
            return DirectoryPerson(
                subject: subject, username: entry.first(search.username) ?? subject, name: search.nameAttr.flatMap(entry.first),
                email: search.emailAttr.flatMap(entry.first))
        }
        return DirectorySearch(people: people, truncated: found.limited)
    }

    // MARK: - Rechecks

    /// Someone removed or locked in the directory, or on Active Directory disabled or expired, stops
    /// refreshing tokens.
    public func recheck(subject: String) async throws -> IdentityRecheck {
        guard let entry = try await currentEntry(subject: subject) else { return .refused(reason: "identity_refused") }
        if config.activeDirectory, let restriction = ActiveDirectoryAccountState(entry).refusal(at: clock.now) {
            return .refused(reason: restriction.rawValue)
        }
        return .valid(freshClaims: nil)
    }

    /// Whether the directory still has the person (and does not filter them out).
    public func isStillValid(subject: String) async throws -> Bool {
        if case .valid = try await recheck(subject: subject) { return true }
        return false
    }

    private func currentEntry(subject: String) async throws -> LDAPEntry? {
        let directory = directory
        do {
            return try await pool.run { connection throws(LDAPFailure) in try directory.entry(connection, subject: subject) }
        } catch {
            throw unavailable(error)
        }
    }

    // MARK: - Health

    /// A service bind and a read of the user search base, one at a time and shared by all callers for a
    /// second after it finished, so that polling `/readyz` cannot take connections away from sign-ins.
    /// While the directory is known to be unreachable (a sign-in just found it so), unhealthy at once,
    /// whatever the shared result still says.
    public func health() async -> PluginHealth {
        if let outage = pool.currentOutage { return PluginHealth(healthy: false, detail: outage.description) }
        let directory = directory
        let pool = pool
        return await healthCache.value {
            do {
                try await pool.run { connection throws(LDAPFailure) in try directory.probe(connection) }
                return PluginHealth(healthy: true)
            } catch {
                return PluginHealth(healthy: false, detail: String(describing: error))
            }
        }
    }

    // MARK: - Diagnosis

    public func diagnose(username: String?, password: String?) async -> [DiagnosticStep] {
        await LDAPDiagnosis(directory: directory, pool: pool).run(username: username, password: password)
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension LDAPProvider: Diagnosable {}
extension LDAPProvider: Rechecking {}
extension LDAPProvider: HealthReporting {}
