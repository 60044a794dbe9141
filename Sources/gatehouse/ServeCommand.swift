import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import Logging
import Prometheus
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the broker until SIGTERM or SIGINT.")

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "HOST:PORT to listen on, overriding server.listen.")
    var listen: String?

    func run() async throws {
        let logger = try Bootstrap.logger(level: options.logLevel)
        var (config, source) = try Bootstrap.loadConfig(options)
        if let listen {
            guard let address = ListenAddress(parsing: listen) else { throw ValidationError("--listen must be HOST:PORT, e.g. 127.0.0.1:8080") }
            config.server.listen = address
        }
        if config.environment == .development {
            logger.warning("running in development mode (environment: development); do not expose this broker")
        }
        let store = try Bootstrap.openStore(config)
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5)]
        let broker = try await Bootstrap.broker(config, store: store, logger: logger, metrics: BrokerMetrics(factory: factory))
        if config.admin.tokens.isEmpty {
            logger.notice("the admin API is off (no admin.tokens and no GATEHOUSE_ADMIN_TOKEN)")
        }
        logger.notice(
            "gatehouse starting",
            metadata: [
                "version": .string(GatehouseVersion.current), "config": .string(source), "listen": .string(config.server.listen.description),
                "issuer": .string(config.server.issuer), "database": .string(store.path),
            ]
        )
        let app = GatehouseServer.makeApplication(broker: broker, listen: config.server.listen, logger: logger, metrics: registry)
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await services.run()
    }
}

struct CheckConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config", abstract: "Check the config and print every mistake with its path; exit status 2 if there is one."
    )

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let (config, source) = try Bootstrap.loadConfig(options)
        // Building the plugins checks the rules that depend on the deployment mode. Without a database
        // yet, they get a throw-away one: checking must not create the real one.
        let hasDatabase = FileManager.default.fileExists(atPath: config.storage.sqlitePath)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-check-\(UUID().uuidString).sqlite").path
        let store = try hasDatabase ? Bootstrap.openStore(config) : SQLiteStore(path: scratch)
        defer {
            if !hasDatabase {
                try? store.close()
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: scratch + suffix) }
            }
        }
        let quiet = try Bootstrap.logger(level: "error")
        let mailer = try Bootstrap.mailer(config)
        var issues: [ConfigIssue] = []
        // The key-encryption key (a development key file is not created by checking); the plugins
        // are checked with a throw-away one either way, so every mistake is reported at once.
        do {
            _ = try KeyEncryptionSetup.sealer(for: config, create: false)
        } catch {
            issues += error.issues
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
        // Drift between the file's apps and the database, when there is a database to compare with.
        guard hasDatabase else {
            print("no database at \(config.storage.sqlitePath) yet: nothing to compare the apps with")
            return
        }
        let findings = try ConfigDrift.compare(seeds: config.apps, stored: try await store.apps())
        if findings.isEmpty {
            print("apps: the file and the database agree")
        } else {
            print("apps: drift between the file and the database (\(findings.count)):")
            for finding in findings { print("  \(finding)") }
        }
    }
}

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Create or upgrade the database schema, then exit.")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let (config, _) = try Bootstrap.loadConfig(options)
        let store = try Bootstrap.openStore(config)
        print("\(store.path): schema up to date (\(try store.appliedMigrations().joined(separator: ", ")))")
    }
}
