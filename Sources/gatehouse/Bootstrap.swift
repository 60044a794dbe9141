import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseHTTP
import GatehouseMail
import GatehousePlugins
import GatehouseStore
import Logging

/// Exit statuses an operator (or systemd's `RestartPreventExitStatus=`) can tell apart: restarting
/// does not help with either, the message says what to change.
enum ExitStatus {
    /// A mistake in the config (every mistake is printed with its path).
    static let configMistake: Int32 = 2
    /// The database was migrated by a newer Gatehouse.
    static let newerSchema: Int32 = 3
    /// Copying the database before an upgrade, or migrating it, failed.
    static let migrationFailed: Int32 = 4

    /// The error a command ends with for a store that cannot be opened or migrated: the statuses
    /// above for the failures a restart cannot mend, else argument-parser's usage status (64).
    static func ending(_ error: StoreOpenError) -> any Error {
        let status: Int32? = error.newerSchema ? newerSchema : error.migrationFailed ? migrationFailed : nil
        guard let status else { return ValidationError(error.message) }
        var standardError = FileHandle.standardError
        print("Error: \(error.message)", to: &standardError)
        return ExitCode(status)
    }
}

/// Wires the broker together for every command: the built-in plugins, the config, the store.
enum Bootstrap {
    /// The built-in plugin types (GatehousePlugins lists them).
    static var registry: PluginRegistry { BuiltInPlugins.registry }

    static func logger(level: String) throws -> Logger {
        guard let level = Logger.Level(rawValue: level) else {
            throw ValidationError("--log-level must be one of: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var logger = Logger(label: "gatehouse")
        logger.logLevel = level
        return logger
    }

    /// The sign-in page theme of `server.themeDir`; its mistakes stop the start like the config's.
    static func theme(_ config: BrokerConfig, source: String) throws -> PageTheme {
        guard let directory = config.server.themeDir else { return PageTheme() }
        do {
            return try PageTheme.load(directory: directory)
        } catch {
            var standardError = FileHandle.standardError
            print("\(source): \(error.issues.count) mistake(s):", to: &standardError)
            for issue in error.issues { print("  \(issue)", to: &standardError) }
            throw ExitCode(ExitStatus.configMistake)
        }
    }

    /// Reads and checks the config; on mistakes prints every one with its path and exits with status 2.
    static func loadConfig(_ options: ConfigOptions) throws -> (config: BrokerConfig, source: String) {
        let environment = ProcessInfo.processInfo.environment
        let path = options.config ?? environment["GATEHOUSE_CONFIG"] ?? (FileManager.default.fileExists(atPath: "config/gatehouse.yaml") ? "config/gatehouse.yaml" : nil)
        let text: String
        let source: String
        if let path {
            guard let data = FileManager.default.contents(atPath: path) else {
                var standardError = FileHandle.standardError
                print("Error: Cannot read the config file '\(path)': it does not exist or is not readable.", to: &standardError)
                throw ExitCode(ExitStatus.configMistake)
            }
            text = String(decoding: data, as: UTF8.self)
            source = path
        } else {
            text = DefaultConfig.yaml
            source = "(embedded default)"
        }
        do {
            return (try ConfigLoader(registry: registry).load(yaml: text, environment: environment), source)
        } catch {
            var standardError = FileHandle.standardError
            print("\(source): \(error.issues.count) mistake(s):", to: &standardError)
            for issue in error.issues { print("  \(issue)", to: &standardError) }
            throw ExitCode(ExitStatus.configMistake)
        }
    }

    /// Opens (and migrates) the configured database. With `retrying`, a database that does not answer
    /// yet is tried again, every 2 s growing to 10 s, with the reason logged each time (`serve`: the
    /// broker waits for its database rather than exit); other failures (a wrong password, a schema
    /// newer than this code) end the command at once with the message.
    static func openStore(_ config: BrokerConfig, logger: Logger = Logger(label: "gatehouse"), migrate: Bool = true, retrying: Bool = false) async throws
        -> any OperatedStore
    {
        var delay = 2
        while true {
            do {
                return try await StoreOpener.open(config.storage, logger: logger, migrate: migrate)
            } catch let error as StoreOpenError where error.retryable && retrying {
                logger.error("the database cannot be reached; trying again", metadata: ["error": .string(error.message), "retryInSeconds": .stringConvertible(delay)])
                try await Task.sleep(for: .seconds(delay))
                delay = min(delay * 2, 10)
            } catch let error as StoreOpenError {
                throw ExitStatus.ending(error)
            }
        }
    }

    /// The broker an operator command works with: the config, the store, the plugins, with the log
    /// quieter than `serve`'s (warnings and up) unless `--log-level` says otherwise.
    static func openBroker(_ options: ConfigOptions) async throws -> Broker {
        let logger = try logger(level: options.logLevel == "info" ? "warning" : options.logLevel)
        let (config, _) = try loadConfig(options)
        return try await broker(config, store: try await openStore(config, logger: logger), logger: logger)
    }

    /// The SMTP mailer when `mail.transport` is smtp.
    static func mailer(_ config: BrokerConfig) throws -> SMTPMailer? {
        do {
            return try SMTPMailer.configured(by: config.mail)
        } catch {
            throw ValidationError("mail.smtp.rootCA: cannot load the CA certificates: \(error)")
        }
    }

    static func broker(_ config: BrokerConfig, store: any BrokerStore, logger: Logger, metrics: BrokerMetrics = BrokerMetrics()) async throws -> Broker {
        do {
            return try await Broker.start(
                config: config, registry: registry, store: store, logger: logger, metrics: metrics, http: AsyncHTTPOutbound(), mailer: try mailer(config)
            )
        } catch let error as ConfigIssues {
            // Mistakes only a started broker sees (a plugin's production rules): the config's status.
            var standardError = FileHandle.standardError
            print("Error: \(error.description)", to: &standardError)
            throw ExitCode(ExitStatus.configMistake)
        }
    }
}

extension FileHandle: @retroactive TextOutputStream {
    public func write(_ string: String) { write(Data(string.utf8)) }
}
