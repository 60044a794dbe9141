import Foundation
import Logging
import Synchronization

/// The assembled broker: store, plugin instances, signing keys and flow engine, built from a config.
/// The server and the CLI both work through this; nothing here knows about HTTP.
public struct Broker: Sendable, CustomStringConvertible {
    /// Never the config or the plugins (they hold secrets): a broker may end up in a log by accident.
    public var description: String { "Broker(issuer: \(config.server.issuer))" }

    public let config: BrokerConfig
    public let store: any BrokerStore
    public let plugins: PluginInstances
    public let keyring: SigningKeyring
    public let engine: FlowEngine
    public let oauth: OAuthService
    public let authorizations: AuthorizationValidator
    public let admin: AdminService
    public let provisionalIdentities: ProvisionalIdentityService
    public let devices: DeviceService
    public let accountOperations: AccountOperationService
    public let adminGate: AdminGate
    /// The endpoints plugins declare (`/v1/plugins/<instance>/<path>`).
    public var pluginEndpoints: PluginEndpointService {
        PluginEndpointService(store: store, oauth: oauth, plugins: plugins, adminGate: adminGate, clock: clock)
    }
    /// The admin console's sign-in and sessions; nil when `admin.console.enabled` is false.
    public let console: AdminConsoleService?
    /// The account page's sign-in and sessions; nil when `accountPage.enabled` is false.
    public let accountPage: AdminConsoleService?
    public let clock: any BrokerClock
    public let logger: Logger
    /// `GET /v1/registration-state` and `POST /v1/logout`.
    /// SCIM provisioning at `/scim/v2`.
    public var scim: ScimService {
        ScimService(store: store, clock: clock, oauth: oauth, issuer: config.server.issuer, enabled: config.scim.enabled, links: config.scim.links)
    }
    public var registrationState: RegistrationState { RegistrationState(oauth: oauth, plugins: plugins, clock: clock) }
    /// What readiness last reported, so that a change is logged once.
    let healthLog = HealthLog()

    /// Builds every plugin instance, seeds the config's apps, seals any secret an older version
    /// stored in clear, and loads (or makes) the signing keys. The key-encryption key comes from the
    /// config (`KeyEncryptionSetup`) unless `sealer` is given (tests).
    public static func start(
        config: BrokerConfig, registry: PluginRegistry, store: any BrokerStore, clock: any BrokerClock = SystemClock(), logger: Logger,
        metrics: BrokerMetrics = BrokerMetrics(), http: any OutboundHTTP = NoOutboundHTTP(), mailer: (any Mailer)? = nil, sealer: SecretSealer? = nil
    ) async throws -> Broker {
        let sealer = try sealer ?? KeyEncryptionSetup.sealer(for: config)
        let plugins = try makePlugins(
            config: config, registry: registry, store: store, clock: clock, logger: logger, metrics: metrics, http: http, mailer: mailer, sealer: sealer
        )
        try await seedApps(config.apps, into: store, settings: plugins.settings, clock: clock, logger: logger)
        for (site, settings) in [(ConsoleSite.admin, config.admin.console), (.account, config.accountPage)] where settings.enabled {
            let app = settings.app(issuer: config.server.issuer, identityProviders: plugins.identityProviders.keys.sorted(), now: clock.now, site: site)
            let stored = try await store.seedApp(app)
            if stored.managedBy == .admin {
                // An app an admin made with this id before it was the broker's own: never adopt it.
                let section = site == .admin ? "admin.console" : "accountPage"
                throw ConfigIssues([
                    ConfigIssue(
                        path: "\(section).enabled",
                        "an app '\(app.id)' made at run time exists and would become this page's: set \(section).enabled: false, delete it (gatehouse apps delete \(app.id)), then enable \(section) again"
                    )
                ])
            }
        }
        let upgraded = try await SecretRewrap(store: store, sealer: sealer, clock: clock).run(everything: false)
        if upgraded.signingKeys > 0 {
            logger.notice("signing keys stored in clear are now encrypted under the key-encryption key", metadata: ["keys": .stringConvertible(upgraded.signingKeys)])
        }
        let keyring = SigningKeyring(store: store, clock: clock, algorithm: config.tokens.signingAlgorithm, sealer: sealer)
        try await keyring.prepare()
        let issuer = TokenIssuer(
            issuer: config.server.issuer, keyring: keyring, refreshTokens: store, clock: clock,
            successors: RefreshTokenSuccessors(storage: PluginStorage(namespace: Self.refreshNamespace, store: store, clock: clock, sealer: sealer))
        )
        let apps = AppCache(store: store, clock: clock)
        let dpop = DPoPVerifier(storage: PluginStorage(namespace: Self.dpopNamespace, store: store, clock: clock, sealer: sealer), clock: clock)
        let oauth = OAuthService(
            store: store, tokens: issuer, plugins: plugins, clock: clock, logger: logger, apps: apps, defaultLockout: config.lockout, metrics: metrics, dpop: dpop,
            http: http, sealer: sealer, events: config.events, scim: config.scim
        )
        let engine = FlowEngine(
            store: store, plugins: plugins, challenges: registry.challenges, tokens: issuer, clock: clock, logger: logger, metrics: metrics, apps: apps, dpop: dpop,
            revoker: oauth.revoker, sessions: oauth.sessions, defaultLockout: config.lockout, sealer: sealer, provisioned: oauth.provisioned
        )
        let adminGate = AdminGate(
            credentials: AdminCredentials(tokens: config.admin.tokens.map { ($0.name, $0.token) }),
            failures: FailedAuthenticationLimit(store: store, clock: clock, metrics: metrics), policy: config.lockout
        )
        return Broker(
            config: config, store: store, plugins: plugins, keyring: keyring, engine: engine, oauth: oauth,
            authorizations: AuthorizationValidator(
                apps: store, issuer: config.server.issuer, pushed: PushedAuthorizations(store: store, clock: clock), clients: oauth.clients, clock: clock
            ),
            admin: AdminService(store: store, plugins: plugins, oauth: oauth, clock: clock),
            provisionalIdentities: ProvisionalIdentityService(store: store, oauth: oauth, plugins: plugins, attempts: engine.attempts, clock: clock),
            devices: DeviceService(store: store, oauth: oauth, plugins: plugins, clock: clock),
            accountOperations: AccountOperationService(store: store, oauth: oauth, plugins: plugins, clock: clock),
            adminGate: adminGate,
            console: config.admin.console.enabled
                ? AdminConsoleService(
                    admin: config.admin, issuer: config.server.issuer, store: store, oauth: oauth, gate: adminGate, sealer: sealer, clock: clock, logger: logger)
                : nil,
            accountPage: config.accountPage.enabled
                ? AdminConsoleService(
                    admin: config.admin, issuer: config.server.issuer, store: store, oauth: oauth, gate: adminGate, sealer: sealer, clock: clock, logger: logger,
                    site: .account, account: config.accountPage)
                : nil,
            clock: clock, logger: logger
        )
    }

    /// Builds every plugin instance the config declares, each with its own environment. Some rules
    /// are only checked here (they depend on the deployment mode), so `check-config` calls it too.
    public static func makePlugins(
        config: BrokerConfig, registry: PluginRegistry, store: any BrokerStore, clock: any BrokerClock = SystemClock(), logger: Logger,
        metrics: BrokerMetrics = BrokerMetrics(), http: any OutboundHTTP = NoOutboundHTTP(), mailer: (any Mailer)? = nil, sealer: SecretSealer
    ) throws(ConfigIssues) -> PluginInstances {
        // Also here, not only in the loader: a config built in code must not print codes in production.
        let mailIssues = config.mail.issues(in: config.environment)
        if !mailIssues.isEmpty { throw ConfigIssues(mailIssues) }
        // The log transport is the core's own; SMTP comes from the executable's driver.
        let mailer: any Mailer =
            switch config.mail.transport {
            case .none: NoMailer()
            case .log: LogMailer(logger: logger)
            case .smtp: mailer ?? NoMailer()
            }
        let plugins = try registry.instantiate(config.providers) { declaration in
            var pluginLogger = logger
            pluginLogger[metadataKey: "provider"] = .string(declaration.id)
            return PluginEnvironment(
                clock: clock, logger: pluginLogger,
                storage: PluginStorage(namespace: declaration.id, typeName: declaration.type, store: store, clock: clock, sealer: sealer),
                lockouts: LockoutBook(namespace: declaration.id, store: store, audit: store, clock: clock, metrics: metrics),
                development: config.environment == .development, http: http, mailer: mailer, callbackURL: config.server.issuer + Self.callbackPath,
                issuer: config.server.issuer, devices: DeviceDirectory(store), accounts: AccountDirectory(store), apps: AppDirectory(store),
                audit: AuditLog(store, providerID: declaration.id, clock: clock)
            )
        }
        // The rules that need the plugins' roles (the loader knows only their ids).
        var issues: [ConfigIssue] = []
        for (index, app) in config.apps.enumerated() {
            issues +=
                app.policy.referenceIssues(
                    identityProviders: Set(plugins.identityProviders.keys), authenticators: Set(plugins.authenticators.keys),
                    statelessCapable: plugins.statelessCapableIdentityProviders, path: "apps[\(index)].policy"
                ) + plugins.settings.issues(app.policy, path: "apps[\(index)].policy")
        }
        if !issues.isEmpty { throw ConfigIssues(issues) }
        return plugins
    }

    /// Writes the config's apps into the store. An app an admin has changed at run time keeps the
    /// admin's version; the file does not overwrite it (see docs/configuration.md).
    /// Policies are stored in the new form (`policy.plugins`); an admin-managed policy an earlier
    /// version stored the old way is rewritten in it here (a concurrent change wins: the next start
    /// tries again, and the old form reads the same meanwhile).
    static func seedApps(_ seeds: [AppSeed], into store: any AppStore, settings: PolicySettingsBook, clock: any BrokerClock, logger: Logger) async throws {
        let now = clock.now
        for seed in seeds {
            let app = App(
                id: seed.id, name: seed.name, secretDigest: seed.secret.map(SecretDigest.sha256Hex), redirectURIs: seed.redirectURIs,
                policy: settings.normalized(seed.policy), managedBy: .config, createdAt: now, updatedAt: now
            )
            let stored = try await store.seedApp(app)
            if stored.managedBy == .admin {
                logger.notice("app is managed by an admin; its config entry is not applied", metadata: ["app": .string(seed.id)])
            }
        }
        for var app in try await store.apps() where !app.policy.formerSettings.isEmpty {
            let normalized = settings.normalized(app.policy)
            guard normalized != app.policy else { continue }
            app.policy = normalized
            if try await store.updateApp(app) {
                logger.notice("app policy rewritten with its plugin settings under plugins", metadata: ["app": .string(app.id)])
            }
        }
    }

    /// The core's own slice of plugin storage for DPoP (used proof ids, the nonce key): a name no
    /// plugin instance can have (instance ids have no colons).
    static let dpopNamespace = "gatehouse:dpop"
    /// The store namespace of the refresh-token successor key (a colon: no plugin instance id has one).
    static let refreshNamespace = "gatehouse:refresh"

    /// Where upstream sign-in pages send the browser back (`PluginEnvironment.callbackURL`).
    public static let callbackPath = "/oauth2/callback"

    /// The OpenID Provider metadata for this broker.
    public func discovery() -> DiscoveryDocument {
        DiscoveryDocument(issuer: config.server.issuer, signingAlgorithms: keyring.idTokenAlgorithms(), dpopAlgorithms: DPoPVerifier.algorithms)
    }

    /// Removes what has expired: flows, plugin records, codes, refresh tokens, revocations, and keys
    /// retired long enough ago that no token they signed can still be valid. Re-reads the signing keys.
    public func purgeExpired() async throws -> Int {
        let now = clock.now
        var removed = try await store.deleteExpiredFlows(now: now)
        removed += try await store.deleteExpiredPluginRecords(now: now)
        removed += try await store.deleteExpiredAuthorizationCodes(before: now.addingTimeInterval(-3600))
        removed += try await store.deleteExpiredDeviceAuthorizations(before: now.addingTimeInterval(-3600))
        removed += try await store.deleteFinishedOutboxItems(
            deliveredBefore: now.addingTimeInterval(-config.events.keepDelivered.timeInterval), deadBefore: now.addingTimeInterval(-config.events.keepDead.timeInterval)
        )
        removed += try await store.deleteExpiredRefreshTokens(now: now)
        removed += try await store.deleteExpiredRevocations(now: now)
        // Ended and expired sessions are kept a day, for the person's and the admins' lists.
        removed += try await store.deleteExpiredBrowserSessions(before: now.addingTimeInterval(-86_400))
        removed += try await store.deleteSigningKeys(retiredBefore: now.addingTimeInterval(-SigningKeyring.retiredKeyGrace))
        // Lockout history is forgotten after a week without failures or locks.
        removed += try await store.deleteStaleCounters(before: now.addingTimeInterval(-7 * 86_400))
        engine.metrics.setActiveFlows(try await store.countFlows(now: now))
        try await keyring.reload()
        return removed
    }

    /// Whether the broker can serve: the store answers and every plugin that reports health is healthy.
    public func readiness() async -> Readiness {
        var checks: [String: PluginHealth] = [:]
        do {
            try await store.ping()
            checks["store"] = PluginHealth(healthy: true)
        } catch {
            checks["store"] = PluginHealth(healthy: false, detail: "the store does not answer")
        }
        // Every plugin at once: the slowest check (each caps its own probe at a few seconds), not
        // their sum, bounds how long a probe waits.
        await withTaskGroup(of: (String, PluginHealth?).self) { group in
            for (id, plugin) in plugins.healthReporters {
                group.addTask { (id, await plugin.health()) }
            }
            // A plugin without an upstream reports nothing (and never hides another check).
            for await (id, health) in group { if let health { checks[id] = health } }
        }
        healthLog.record(checks, at: clock.now, logger: logger)
        return Readiness(checks: checks)
    }

    /// The last failure this node saw of each check (plugins, the store), with its time: what the
    /// console's provider page shows as "last error" after the check is healthy again.
    public func lastProblems() -> [String: HealthProblem] { healthLog.problems() }
}

/// The readiness of the broker: one health entry per dependency. `/readyz` shows the status only;
/// admins see the checks with their detail (`/admin/v1/readiness`).
public struct Readiness: Sendable, Encodable {
    public var checks: [String: PluginHealth]
    public var ready: Bool { checks.values.allSatisfy(\.healthy) }
    public var status: String { ready ? "ready" : "unavailable" }

    public init(checks: [String: PluginHealth]) { self.checks = checks }

    enum CodingKeys: String, CodingKey { case status, checks }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(checks, forKey: .checks)
    }
}

/// A check's most recent failure, as one node saw it.
public struct HealthProblem: Sendable, Hashable {
    public var detail: String
    public var at: Date
}

/// Logs each check's change of health once (probes poll often; the log should not repeat itself),
/// and remembers each check's last failure.
final class HealthLog: Sendable {
    private let last = Mutex([String: Bool]())
    private let lastProblem = Mutex([String: HealthProblem]())

    func problems() -> [String: HealthProblem] { lastProblem.withLock { $0 } }

    func record(_ checks: [String: PluginHealth], at now: Date, logger: Logger) {
        lastProblem.withLock { problems in
            for (name, health) in checks where !health.healthy { problems[name] = HealthProblem(detail: health.detail ?? "unhealthy", at: now) }
        }
        let changed = last.withLock { last in
            let changed = checks.filter { last[$0.key] != $0.value.healthy && !(last[$0.key] == nil && $0.value.healthy) }
            for (name, health) in checks { last[name] = health.healthy }
            return changed
        }
        for (name, health) in changed.sorted(by: { $0.key < $1.key }) {
            if health.healthy {
                logger.notice("check is healthy again", metadata: ["check": .string(name)])
            } else {
                logger.warning("check is unhealthy", metadata: ["check": .string(name), "detail": .string(health.detail ?? "")])
            }
        }
    }
}
