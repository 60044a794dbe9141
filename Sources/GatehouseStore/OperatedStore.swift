import Foundation
import GatehouseCore
import Logging

/// A store as the `gatehouse` commands hold it: either database, with what operators need beyond
/// `BrokerStore` (migrations, row counts, closing).
public protocol OperatedStore: BrokerStore {
    /// The database in one line, without a password.
    var summary: String { get }
    /// Names of the migrations applied, oldest first.
    func appliedMigrations() async throws -> [String]
    /// Applies the migrations the database lacks; returns their names.
    func migrate() async throws -> [String]
    /// Rows in a table.
    func count(table: StoreTable) async throws -> Int
    /// Releases the database. The store must not be used afterwards.
    func close() throws
}

extension SQLiteStore: OperatedStore {}

extension PostgresStore: OperatedStore {
    public var summary: String { "PostgreSQL \(settings.summary)" }
}

extension OperatedStore {
    /// Rows per table, for tests that prove what an operation wrote or did not write, and for copies.
    public func rowCounts(_ tables: [StoreTable] = StoreTable.allCases) async throws -> [StoreTable: Int] {
        var counts: [StoreTable: Int] = [:]
        for table in tables { counts[table] = try await count(table: table) }
        return counts
    }
}

/// Opens the store `storage:` names.
public enum StoreOpener {
    /// Opens, and unless `migrate` is false migrates, the configured database. Errors are
    /// `StoreOpenError`s naming the config key at fault.
    public static func open(_ storage: StorageConfig, logger: Logger, migrate: Bool = true) async throws -> any OperatedStore {
        if let postgres = storage.postgres {
            return try await PostgresStore(settings: postgres, logger: logger, migrate: migrate)
        }
        do {
            let store = try SQLiteStore(path: storage.sqlitePath, durability: storage.durability, migrate: migrate)
            if let report = store.openingMigration, !report.applied.isEmpty {
                var metadata: Logger.Metadata = ["applied": .string(report.applied.joined(separator: ", "))]
                if let backup = report.backup { metadata["backup"] = .string(backup) }
                logger.notice(
                    report.backup == nil ? "created the database schema" : "upgraded the database schema; the copy taken before is the way back", metadata: metadata)
            }
            return store
        } catch let error as StoreOpenError {
            throw error
        } catch {
            throw StoreOpenError("cannot open the database at '\(storage.sqlitePath)' (storage.sqlite.path): \(error)")
        }
    }
}
