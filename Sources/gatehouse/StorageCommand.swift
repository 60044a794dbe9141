import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseStore
import Logging

/// `gatehouse storage`: moving a deployment between databases.
struct StorageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "storage", abstract: "Move the broker's data between databases.", subcommands: [Copy.self])

    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a whole database into an empty one (SQLite into PostgreSQL, or back), then compare the row counts table by table.",
            discussion: """
                FROM and TO are each a PostgreSQL URL (postgres://user:password@host:5432/db), an SQLite file (sqlite:PATH, or a path \
                ending in .sqlite or .db), or a config file (.yaml) whose storage section is used. The target is created and migrated \
                if needed; the source is only read, and must be at the same schema version (run `gatehouse migrate` on it first). \
                Stop the brokers that write to the source first: rows written during the copy are not copied.
                """
        )

        @Option(help: "Where the data are now.") var from: String
        @Option(help: "Where they go.") var to: String
        @Flag(help: "Delete what the target holds before copying (otherwise a target with any row is refused).") var replace = false

        func run() async throws {
            let logger = try Bootstrap.logger(level: "warning")
            let source = try await Self.open(from, logger: logger, migrate: false, role: "--from")
            defer { try? source.close() }
            let target = try await Self.open(to, logger: logger, migrate: true, role: "--to")
            defer { try? target.close() }
            print("copying \(source.summary) into \(target.summary)")
            let counts: [StoreCopy.TableCount]
            do {
                counts = try await StoreCopy.copy(from: source, to: target, replace: replace)
            } catch let refusal as StoreCopy.Refusal {
                throw ValidationError(refusal.description)
            }
            for count in counts {
                print("  \(count.table.rawValue): \(count.source) → \(count.target) \(count.matches ? "ok" : "MISMATCH")")
            }
            let mismatched = counts.filter { !$0.matches }
            guard mismatched.isEmpty else {
                var standardError = FileHandle.standardError
                print(
                    "the row counts differ in \(mismatched.map(\.table.rawValue).joined(separator: ", ")): was the source written to during the copy?", to: &standardError
                )
                throw ExitCode(1)
            }
            print("copied \(counts.map(\.source).reduce(0, +)) rows; point storage: at \(target.summary) and start the brokers")
        }

        /// The store an argument names.
        static func open(_ argument: String, logger: Logger, migrate: Bool, role: String) async throws -> any OperatedStore {
            let storage: StorageConfig
            if argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://") {
                do {
                    storage = StorageConfig(postgres: try PostgresSettings(url: argument))
                } catch {
                    throw ValidationError("\(role): \(error)")
                }
            } else if argument.hasPrefix("sqlite:") || [".sqlite", ".db", ".sqlite3"].contains(where: argument.hasSuffix) {
                let path = argument.hasPrefix("sqlite:") ? String(argument.dropFirst("sqlite:".count)) : argument
                if !migrate, !FileManager.default.fileExists(atPath: path) { throw ValidationError("\(role): there is no SQLite database at '\(path)'") }
                storage = StorageConfig(sqlitePath: path)
            } else if [".yaml", ".yml"].contains(where: argument.hasSuffix) {
                storage = try Bootstrap.loadConfig(try ConfigOptions.parse(["--config", argument])).config.storage
            } else {
                throw ValidationError("\(role) must be a postgres:// URL, sqlite:PATH (or a .sqlite/.db file), or a .yaml config file; got '\(argument)'")
            }
            do {
                return try await StoreOpener.open(storage, logger: logger, migrate: migrate)
            } catch let error as StoreOpenError {
                throw ValidationError("\(role): \(error.message)")
            }
        }
    }
}
