import Foundation
import GatehousePluginKit
import GatehouseSupport
import Logging

/// Signs people in against an LDAP directory with their directory username and password
/// (search-then-bind), and maps their entry and groups to claims.
public struct LDAPProvider: IdentityProvider {
    public var traits: PluginTraits { PluginTraits(registration: .password) }
    public let id: String
    let directory: LDAPDirectory
    let pool: LDAPConnectionPool
    let logger: Logger
    let healthCache = SharedResult<PluginHealth>(lifetime: 1)

    init(id: String, config: LDAPConfig, logger: Logger) {
        self.id = id
        self.directory = LDAPDirectory(config: config)
        self.pool = LDAPConnectionPool(
            settings: LDAPConnectionSettings(
                urls: config.urls, startTLS: config.startTLS, rootCA: config.rootCA, insecureSkipVerify: config.insecureSkipVerify,
                connectTimeout: config.connectTimeout.value, operationTimeout: config.operationTimeout.value
            ),
            maxConnections: config.maxConnections
        )
        self.logger = logger
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
        let username = try answer.string("username").trimmingCharacters(in: .whitespaces)
        let password = try answer.string("password")
        return .identified(try await signIn(username: username, password: password))
    }

    /// The identity for a directory username and password, or a refusal that looks the same on the
    /// wire whatever its reason (the reason goes to the audit log).
    func signIn(username: String, password: String) async throws -> ExternalIdentity {
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
            outcome = try await pool.run { connection throws(LDAPFailure) in
                try directory.signIn(connection, username: username, password: password)
            }
        } catch {
            throw unavailable(error)
        }
        switch outcome {
        case .refused(let reason):
            if reason == "ambiguous_user" {
                logger.error("several directory entries match one username; make userSearch.filter or userSearch.username unique", metadata: ["provider": .string(id)])
            }
            throw refused.because(reason)
        case .identified(let entry, let groups):
            return try identity(entry, groups: groups, typedUsername: username)
        }
    }

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

    // MARK: - Rechecks

    /// Someone removed or locked in the directory stops refreshing tokens.
    public func recheck(subject: String) async throws -> IdentityRecheck {
        try await isStillValid(subject: subject) ? .valid(freshClaims: nil) : .refused(reason: "identity_refused")
    }

    /// Whether the directory still has the person (and does not filter them out).
    public func isStillValid(subject: String) async throws -> Bool {
        let directory = directory
        do {
            return try await pool.run { connection throws(LDAPFailure) in try directory.entry(connection, subject: subject) != nil }
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
