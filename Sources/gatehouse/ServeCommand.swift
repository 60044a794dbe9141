import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the broker until SIGTERM or SIGINT.")

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "HOST:PORT to listen on, overriding server.listen.")
    var listen: String?

    func run() async throws {
        // Swift concurrency's tasks run on the server's event loops instead of a pool of their own
        // (`GatehouseCommand.main` moved them before the first task): a request's handler then runs
        // on the thread that read it, without two thread hand-overs (and their wake-ups) per
        // request. Blocking work already goes to `BlockingWork`'s threads. Linux only.
        let onEventLoops = ConcurrencyOnEventLoops.installed
        let logger = try Bootstrap.logger(level: options.logLevel)
        if !onEventLoops {
            logger.info(
                "Swift concurrency keeps its own thread pool (moving it onto the event loops needs Linux, a Swift compiler below 6.6 and no other global-executor hook)")
        }
        var (config, source) = try Bootstrap.loadConfig(options)
        if let listen {
            guard let address = ListenAddress(parsing: listen) else { throw ValidationError("--listen must be HOST:PORT, e.g. 127.0.0.1:8080") }
            config.server.listen = address
        }
        if config.environment == .development {
            logger.warning("running in development mode (environment: development); do not expose this broker")
        }
        let theme = try Bootstrap.theme(config, source: source)
        SystemdNotification.send("STATUS=opening the database (an upgrade copies and migrates it first)")
        let store = try await Bootstrap.openStore(config, logger: logger, retrying: true)
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5),
        ]
        let broker = try await Bootstrap.broker(config, store: store, logger: logger, metrics: BrokerMetrics(factory: factory))
        if config.admin.tokens.isEmpty {
            logger.notice("the admin API is off (no admin.tokens and no GATEHOUSE_ADMIN_TOKEN)")
        } else {
            // What admins who are no longer configured added goes with them (Sudo Platform's rule).
            let removed = try await broker.admin.removeWhatDepartedAdminsAdded(remaining: Set(config.admin.tokens.map(\.name)))
            if removed > 0 { logger.notice("removed what departed admins had added", metadata: ["items": .stringConvertible(removed)]) }
        }
        // Users an earlier version added with `users add` got their account only at their first sign-in.
        let linked = try await broker.admin.createMissingPasswordAccounts()
        if linked > 0 { logger.notice("created the accounts of users added before their first sign-in", metadata: ["accounts": .stringConvertible(linked)]) }
        logger.notice(
            "gatehouse starting",
            metadata: [
                "version": .string(GatehouseVersion.current), "config": .string(source), "listen": .string(config.server.listen.description),
                "issuer": .string(config.server.issuer), "database": .string(store.summary),
            ]
        )
        let listening = config.server.listen.description
        let app = GatehouseServer.makeApplication(broker: broker, listen: config.server.listen, logger: logger, metrics: registry, theme: theme) {
            // Ready means migrated, keys loaded, plugins started and the socket open (Type=notify).
            SystemdNotification.send("READY=1\nSTATUS=serving on \(listening)")
        }
        // Last in the group, so the first to hear of a shutdown: systemd learns of it before the
        // server stops accepting connections.
        let stoppingNotice = ServiceGroupConfiguration.ServiceConfiguration(service: SystemdStoppingNotice(), successTerminationBehavior: .ignore)
        let services = ServiceGroup(
            configuration: .init(services: [.init(service: app), stoppingNotice], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        )
        try await services.run()
        // Checkpoints SQLite's WAL into the database file, so a stopped broker leaves one file.
        try? store.close()
    }
}

struct CheckConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config", abstract: "Check the config and print every mistake with its path; exit status 2 if there is one."
    )

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let (config, source) = try Bootstrap.loadConfig(options)
        // Building the plugins checks the rules that depend on the deployment mode. They get a
        // throw-away SQLite database: checking must create, migrate or change nothing.
        let quiet = try Bootstrap.logger(level: "error")
        var existing: (any OperatedStore)?
        var unreachable: String?
        if let postgres = config.storage.postgres {
            do {
                existing = try await StoreOpener.open(config.storage, logger: quiet, migrate: false)
            } catch {
                unreachable = "cannot reach the database at \(postgres.summary): \(error)"
            }
        } else if FileManager.default.fileExists(atPath: config.storage.sqlitePath) {
            existing = try await Bootstrap.openStore(config, logger: quiet, migrate: false)
        }
        defer { try? existing?.close() }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-check-\(UUID().uuidString).sqlite").path
        let store = try SQLiteStore(path: scratch)
        defer {
            try? store.close()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: scratch + suffix) }
        }
        let mailer = try Bootstrap.mailer(config)
        var issues: [ConfigIssue] = []
        // The key-encryption key (a development key file is not created by checking); the plugins
        // are checked with a throw-away one either way, so every mistake is reported at once.
        do {
            _ = try KeyEncryptionSetup.sealer(for: config, create: false)
        } catch {
            issues += error.issues
        }
        if let directory = config.server.themeDir {
            do { _ = try PageTheme.load(directory: directory) } catch { issues += error.issues }
        }
        let scratchSealer = SecretSealer(current: try KeyEncryptionKey(text: KeyEncryptionKey.generateText()))
        do {
            _ = try Broker.makePlugins(config: config, registry: Bootstrap.registry, store: store, logger: quiet, mailer: mailer, sealer: scratchSealer)
        } catch {
            issues += error.issues
        }
        if !issues.isEmpty {
            var standardError = FileHandle.standardError
            print("\(source): \(issues.count) mistake(s):", to: &standardError)
            for issue in issues { print("  \(issue)", to: &standardError) }
            throw ExitCode(2)
        }
        print("\(source): OK (\(config.providers.count) provider(s), \(config.apps.count) app(s))")
        // Plugin settings written the old way still work; show the form to write instead.
        let settings = Bootstrap.registry.settingsBook(for: config.providers)
        for (index, seed) in config.apps.enumerated() where !seed.policy.formerSettings.isEmpty {
            let old = seed.policy.formerSettings.keys.sorted().joined(separator: ", ")
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let new = (try? encoder.encode(settings.normalized(seed.policy).plugins)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            print("apps[\(index)].policy: \(old) is the old form of plugin settings; it reads as plugins: \(new)")
        }
        // Drift between the file's apps and the database, when there is a database to compare with.
        guard let existing else {
            print(unreachable ?? "no database at \(config.storage.sqlitePath) yet: nothing to compare the apps with")
            return
        }
        // A database not migrated yet has no schema at all: say so, rather than the driver's error
        // about a missing table.
        let applied = (try? await existing.appliedMigrations()) ?? []
        guard !applied.isEmpty else {
            print("\(existing.summary): not migrated yet (no Gatehouse schema): run `gatehouse migrate` (or start the broker); nothing to compare the apps with")
            return
        }
        let stored: [App]
        do {
            stored = try await existing.apps()
        } catch {
            var standardError = FileHandle.standardError
            print("error: \(existing.summary): cannot read the apps: \(PostgresStore.explain(error))", to: &standardError)
            throw ExitCode(1)
        }
        let findings = try ConfigDrift.compare(seeds: config.apps, stored: stored, settings: Bootstrap.registry.settingsBook(for: config.providers))
        if findings.isEmpty {
            print("apps: the file and the database agree")
        } else {
            print("apps: drift between the file and the database (\(findings.count)):")
            for finding in findings { print("  \(finding)") }
        }
    }
}

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Create or upgrade the database schema, then exit. Safe to run while other nodes start: PostgreSQL migrations run under an advisory lock."
    )

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let (config, _) = try Bootstrap.loadConfig(options)
        let store = try await Bootstrap.openStore(config, logger: try Bootstrap.logger(level: "warning"), migrate: false)
        defer { try? store.close() }
        let applied: [String]
        var backup: String?
        do {
            if let sqlite = store as? SQLiteStore {
                let report = try sqlite.migrateReporting()
                (applied, backup) = (report.applied, report.backup)
            } else {
                applied = try await store.migrate()
            }
        } catch let error as StoreOpenError {
            throw ExitStatus.ending(error)
        }
        print("\(store.summary): " + (applied.isEmpty ? "nothing to do" : "applied \(applied.joined(separator: ", "))"))
        if let backup { print("copy of the database before the upgrade: \(backup)") }
        print("schema: \(try await store.appliedMigrations().joined(separator: ", "))")
    }
}
