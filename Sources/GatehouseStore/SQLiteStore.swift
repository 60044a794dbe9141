import Foundation
import GRDB
import GatehouseCore

/// The broker's store on SQLite: one file, WAL journal (readers never wait for the writer), every
/// write in a transaction, migrations run on open. Suited to one broker node; several nodes share
/// PostgreSQL instead.
public final class SQLiteStore: BrokerStore, Sendable {
    let pool: DatabasePool
    /// Every write of the store goes through it (see `write`).
    let commits: GroupCommit
    public let path: String
    /// What migrating at open did (nil when opened with `migrate` false): the migrations applied and
    /// the copy of the database taken before them.
    public let openingMigration: SQLiteMigrationReport?

    /// Opens (creating when missing, with its folder) and migrates the database at `path`.
    /// `durability` `.full` syncs every commit to disk (survives power loss); `.normal` syncs at WAL
    /// checkpoints only (survives a process crash; a power cut may lose the last commits).
    /// Refuses (`StoreOpenError`) a database migrated by a newer Gatehouse. `migrate` false leaves the
    /// schema as it is (for `gatehouse migrate`, which reports what it applies).
    public init(path: String, durability: StorageConfig.Durability = .full, migrate: Bool = true) throws {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // Key lookups read on the event loops (`readOneStatement`, `readNow`) and wait there for a free reader: leave
        // room for them beside scans (`readLater`) even when every event loop reads at once.
        configuration.maximumReaderCount = ProcessInfo.processInfo.activeProcessorCount + 8
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
        }
        self.pool = try DatabasePool(path: path, configuration: configuration)
        self.commits = GroupCommit(pool: pool)
        self.path = path
        if try pool.read({ db in try SQLiteMigrations.migrator.hasBeenSuperseded(db) }) {
            let unknown = try pool.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
                .filter { !SQLiteMigrations.names.contains($0) }
            try? pool.close()
            throw StoreOpenError(
                "the database \(path) has a newer schema than this Gatehouse (migrations it does not know: \(unknown.sorted().joined(separator: ", "))). "
                    + "Run the Gatehouse version that upgraded it, or a newer one; do not downgrade a migrated database.",
                newerSchema: true
            )
        }
        openingMigration = migrate ? try Self.migrate(pool, path: path) : nil
    }

    /// Applies the migrations the database lacks; returns their names.
    @discardableResult
    public func migrate() throws -> [String] {
        try migrateReporting().applied
    }

    /// Applies the migrations the database lacks, first copying a database that has a schema
    /// already (an upgrade) beside it; says what it applied and where the copy is.
    public func migrateReporting() throws -> SQLiteMigrationReport {
        try Self.migrate(pool, path: path)
    }

    static func migrate(_ pool: DatabasePool, path: String) throws -> SQLiteMigrationReport {
        let before = try pool.read { db in try SQLiteMigrations.migrator.appliedMigrations(db) }
        let pending = SQLiteMigrations.names.filter { !before.contains($0) }
        guard let next = pending.first else { return SQLiteMigrationReport(applied: [], backup: nil) }
        // A new database has nothing to keep; an upgraded one can be rolled back from the copy.
        let backup = before.isEmpty ? nil : try SQLiteUpgradeBackup.take(of: pool, at: path, before: next)
        do {
            try SQLiteMigrations.migrator.migrate(pool)
        } catch {
            // Each migration is its own transaction: the database may be part-way. Say where the way back is.
            let copy = backup.map { "; the database as it was before is in '\($0)'" } ?? ""
            throw StoreOpenError("migrating the database \(path) failed: \(error)\(copy)", migrationFailed: true)
        }
        let after = try pool.read { db in try SQLiteMigrations.migrator.appliedMigrations(db) }
        return SQLiteMigrationReport(applied: after.filter { !before.contains($0) }, backup: backup)
    }

    public var summary: String { "SQLite \(path)" }

    /// Runs a write in a transaction, committed together with the writes that arrive meanwhile
    /// (`GroupCommit`); returns once it is durable.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await commits.write(body)
    }

    /// Runs a read on the calling thread. The store's lookups by key (an app, a counter, a token, a
    /// flow) use it: such a read takes microseconds in WAL mode (readers never wait for the writer),
    /// less than handing it to a reader thread and waking the caller's thread when it is done.
    func readNow<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.read(body)
    }

    /// Runs a read of one statement on the calling thread, outside any transaction: one SELECT is
    /// atomic in SQLite on its own, and the deferred transaction and savepoint `readNow` wraps around
    /// it cost more than the statement. Only for bodies that run exactly one statement.
    func readOneStatement<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.unsafeRead(body)
    }

    /// Runs a read that may scan (lists, searches, counts) on a reader's own thread, so that it never
    /// holds up the event loop that asked. Not GRDB's `async` `read`: that one keeps its reader until
    /// the awaiting task resumes, and a task resumes on an event loop, which may itself be waiting
    /// in `readNow` for a free reader (a deadlock once every reader is held so). This one gives its
    /// reader back before the task is resumed.
    func readLater<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            pool.asyncRead { database in
                continuation.resume(with: Result { try body(database.get()) })
            }
        }
    }

    /// Closes the database (checkpointing the WAL). The store must not be used afterwards.
    public func close() throws {
        try pool.close()
    }

    /// Names of the migrations applied so far, oldest first.
    public func appliedMigrations() throws -> [String] {
        try pool.read { db in try SQLiteMigrations.migrator.appliedMigrations(db) }
    }

    public func ping() async throws {
        _ = try await readLater { db in try Int.fetchOne(try db.cachedStatement(sql: "SELECT 1")) }
    }

    /// Checkpoints and truncates the write-ahead log, then rebuilds the file (VACUUM) so that no free
    /// page keeps an old row version, then truncates the log VACUUM wrote.
    public func scrubReplacedData() async throws {
        try await pool.barrierWriteWithoutTransaction { db in
            try Self.checkpoint(db)
            try db.execute(sql: "VACUUM")
            try Self.checkpoint(db)
        }
    }

    /// A truncating checkpoint, retried while readers of other processes hold old frames (its first
    /// column, `busy`, is 1 then): the log is only empty once it succeeds.
    static func checkpoint(_ db: Database) throws {
        for attempt in 0..<50 {
            guard let busy = try Int.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)"), busy != 0 else { return }
            if attempt < 49 { usleep(20_000) }
        }
        throw DatabaseError(message: "the write-ahead log could not be checkpointed: another process keeps reading old data")
    }

    /// Rows in a table, for operators and tests that prove what a flow did or did not write.
    public func count(table: StoreTable) async throws -> Int {
        try await readLater { db in try Int.fetchOne(try db.cachedStatement(sql: "SELECT COUNT(*) FROM \(table.rawValue)")) ?? 0 }
    }
}

/// The tables of the SQLite schema.
public enum StoreTable: String, CaseIterable, Sendable {
    case apps, accounts, identityLinks = "identity_links", flows, refreshTokens = "refresh_tokens"
    case signingKeys = "signing_keys", auditEvents = "audit_events", pluginData = "plugin_data"
    case authorizationCodes = "authorization_codes", revocations, attemptCounters = "attempt_counters"
    case provisionalIdentities = "provisional_identities"
    case devices
    case installations
    case signInKeys = "sign_in_keys"
    case browserSessions = "browser_sessions", browserSessionApps = "browser_session_apps"
    case deviceAuthorizations = "device_authorizations"
    case scimClients = "scim_clients", scimResources = "scim_resources", scimMembers = "scim_members"
}

/// Dates are stored as seconds since 1970 (REAL), so that expiry comparisons are plain SQL.
extension Date {
    var storeValue: Double { timeIntervalSince1970 }
    init(storeValue: Double) { self.init(timeIntervalSince1970: storeValue) }
}
