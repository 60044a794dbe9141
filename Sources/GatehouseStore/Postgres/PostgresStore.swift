import Foundation
import GatehouseCore
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

/// The broker's store on PostgreSQL, for any number of broker nodes sharing one database: every
/// table and query of `SQLiteStore`, with the same meaning under concurrency from several processes.
///
/// Concurrency, operation by operation (READ COMMITTED unless said otherwise):
/// - single-use writes (authorization codes, refresh rotation, flow versions, plugin records such as
///   jti replay entries and one-time codes) are one conditional `UPDATE`/`DELETE ... WHERE <still
///   unused / same version> RETURNING`, or `INSERT ... ON CONFLICT DO NOTHING RETURNING`: PostgreSQL
///   re-checks the condition on the newest row version after a concurrent writer commits, so exactly
///   one of two racing requests wins;
/// - rate buckets, and attempt reservations that are allowed, are one `INSERT ... ON CONFLICT DO
///   UPDATE` with the window arithmetic (and the limit) in SQL, under the row lock the upsert takes;
///   other read-modify-writes of one row (locking a key, provisional grants, app seeding) lock the
///   row first with `SELECT ... FOR UPDATE` inside a transaction;
/// - a first sign-in inserts its identity link with `ON CONFLICT DO NOTHING`, so two nodes signing the
///   same new person in at once make one account;
/// - revoking a refresh family repeats its update until a pass changes nothing, so a rotation
///   committing at the same moment cannot leave a live replacement behind;
/// - a serialization failure or deadlock (SQLSTATE 40001, 40P01) is retried, up to three times.
///
/// A database that cannot be reached answers `BrokerError` `temporarily_unavailable` (503) within
/// `connectTimeout`; from then on requests fail at once instead of queueing, except one a second
/// that tries the database, and the first answer from it ends the outage. One connection that
/// breaks fails only its own request.
public final class PostgresStore: BrokerStore, Sendable {
    let client: PostgresClient
    let settings: PostgresSettings
    let logger: Logger
    private let runner: Task<Void, Never>
    /// When the database last failed to answer (monotonic nanoseconds), or 0.
    private let lastOutage = Atomic<UInt64>(0)
    /// Why the database last failed to answer, for the start-up message.
    let lastFailure = Mutex<String?>(nil)

    /// Connects (lazily: the first operation opens the first connection) and, unless `migrate` is
    /// false, brings the schema up to date under an advisory lock. Throws `StoreOpenError` with an
    /// actionable message when the database cannot be reached or its schema is newer than this code.
    public init(settings: PostgresSettings, logger: Logger = Logger(label: "gatehouse.postgres"), migrate: Bool = true) async throws {
        var configuration = PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.user, password: settings.password, database: settings.database,
            tls: try Self.tls(settings)
        )
        configuration.options.maximumConnections = settings.poolSize
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(Int64(settings.connectTimeout.value))
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(30))
        // No lock wait or forgotten transaction may hold a pooled connection for long (a lock held
        // elsewhere would otherwise fill the pool); migrations wait for their advisory lock without
        // it. Statements themselves are not cut short: the purge's deletes and a copy may be long.
        configuration.options.additionalStartupParameters = [
            ("application_name", "gatehouse"), ("lock_timeout", "10s"), ("idle_in_transaction_session_timeout", "60s"),
        ]
        // The pool logs every failed connection attempt at info; during an outage that is one line per
        // retry. This store logs the outage once (and its end) instead.
        var poolLogger = logger
        poolLogger.logLevel = .error
        let client = PostgresClient(configuration: configuration, backgroundLogger: poolLogger)
        self.client = client
        self.settings = settings
        self.logger = logger
        self.runner = Task { await client.run() }
        if migrate {
            do {
                _ = try await self.migrate()
            } catch {
                close()
                throw error
            }
        }
    }

    /// Stops the connection pool. The store must not be used afterwards.
    public func close() {
        runner.cancel()
    }

    static func tls(_ settings: PostgresSettings) throws -> PostgresClient.Configuration.TLS {
        switch settings.tls {
        case .disable:
            return .disable
        case .require:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            return .require(configuration)
        case .verifyFull:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .fullVerification
            if let rootCA = settings.rootCA {
                do {
                    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCA))
                } catch {
                    throw StoreOpenError("storage.postgres.rootCA: cannot read the CA certificates in '\(rootCA)': \(error)")
                }
            }
            return .require(configuration)
        }
    }

    // MARK: - Running statements

    /// Runs `body` on one pooled connection, with the outage rules above.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await guarded { leased in
            try await self.client.withConnection { connection in
                leased.note()
                return try await body(connection)
            }
        }
    }

    /// Runs `body` in one transaction (`BEGIN` ... `COMMIT`, rolled back when it throws), retried on
    /// serialization failures and deadlocks.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await guarded { leased in
            try await self.client.withConnection { connection in
                leased.note()
                do {
                    return try await connection.withTransaction(logger: self.logger) { connection in try await body(connection) }
                } catch let error as PostgresTransactionError {
                    // What went wrong, not the wrapper: the outage and retry rules look at it.
                    throw error.beginError ?? error.closureError ?? error.commitError ?? error
                }
            }
        }
    }

    /// Runs one statement and answers its rows.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRandomAccessRow] {
        try await withConnection { connection in try await Self.rows(query, on: connection, logger: self.logger) }
    }

    /// Runs one statement and answers how many rows it returned (statements that write end in
    /// `RETURNING 1`, so this is the number of rows they changed).
    @discardableResult
    func run(_ query: PostgresQuery) async throws -> Int {
        try await rows(query).count
    }

    static func rows(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws -> [PostgresRandomAccessRow] {
        try await connection.query(query, logger: logger).collect().map { $0.makeRandomAccess() }
    }

    /// Runs one operation with the outage rules: while the database is known to be out of reach,
    /// requests fail at once, except one per second that tries (waiting up to `connectTimeout`); its
    /// success ends the outage for everyone.
    private func guarded<T: Sendable>(_ operation: @escaping @Sendable (Leased) async throws -> T) async throws -> T {
        let outage = lastOutage.load(ordering: .relaxed)
        if outage != 0 {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now &- outage >= 1_000_000_000, lastOutage.compareExchange(expected: outage, desired: now, ordering: .relaxed).exchanged else {
                throw Self.unavailable
            }
        }
        let timeout = settings.connectTimeout.value
        var attempt = 0
        while true {
            attempt += 1
            // `connectTimeout` bounds the wait for a connection, not the statements: once the
            // operation holds one, a slow statement (a migration on a busy machine) may finish.
            let leased = Leased()
            do {
                let result = try await withThrowingTaskGroup(of: T?.self) { group in
                    group.addTask { try await operation(leased) }
                    group.addTask {
                        try await Task.sleep(for: .seconds(timeout))
                        return nil
                    }
                    defer { group.cancelAll() }
                    while let next = try await group.next() {
                        if let value = next { return value }
                        if !leased.happened { throw PostgresStoreTimeout() }
                    }
                    throw PostgresStoreTimeout()
                }
                if outage != 0 { endOutage() }
                return result
            } catch let error as PSQLError where error.code == .server {
                // The database answered: whatever the statement's fate, it is reachable.
                if outage != 0 { endOutage() }
                let state = error.serverInfo?[.sqlState] ?? ""
                if ["40001", "40P01"].contains(state), attempt < 3 { continue }
                if Self.transientStates.contains(state) || state.hasPrefix("08") {
                    // Out of connections, read-only after a failover: the database cannot serve now.
                    // A terminated session, lost races after three tries, timeouts: this request only
                    // (a real shutdown trips the circuit through the next requests' connections).
                    if state.hasPrefix("53") || state == "25006" || (!leased.happened && (state.hasPrefix("57P") || state.hasPrefix("08"))) { noteOutage(error) }
                    throw Self.unavailable
                }
                throw error
            } catch let error as PSQLError where [.serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .queryCancelled].contains(error.code) {
                // One connection went away (a stale one in the pool, a cancelled request): this
                // request fails, the node does not stop using the database.
                throw Self.unavailable
            } catch let error as PSQLError where [.connectionError, .sslUnsupported, .failedToAddSSLHandler, .poolClosed].contains(error.code) {
                // A connection that broke while in use fails its own request only; no connection
                // to be had is an outage.
                if !leased.happened { noteOutage(error) }
                throw Self.unavailable
            } catch is PostgresStoreTimeout {
                noteOutage(PostgresStoreTimeout())
                throw Self.unavailable
            } catch let error
                where error is PSQLError || error is BrokerError || error is StoreOpenError || error is DecodingError
                || error is EncodingError || error is PostgresDecodingError || error is CancellationError
            {
                // Programming errors and the operation's own refusals: the database answered.
                if outage != 0, !(error is CancellationError) { endOutage() }
                throw error
            } catch {
                // The pool's own errors (no connection could be made in time, the pool closed), NIO's
                // connection errors: the database is out of reach (unless the connection was had).
                if !leased.happened { noteOutage(error) }
                throw Self.unavailable
            }
        }
    }

    /// SQLSTATEs that mean "not now" rather than a mistake: serialization failure and deadlock (after
    /// the retries), statement and lock timeouts, read-only transaction, shutdown, too many connections.
    static let transientStates: Set<String> = ["40001", "40P01", "57014", "55P03", "25006", "57P01", "57P02", "57P03", "53300", "53400", "53000", "53100", "53200"]

    private func endOutage() {
        lastFailure.withLock { $0 = nil }
        if lastOutage.exchange(0, ordering: .relaxed) != 0 {
            logger.notice("the database answers again", metadata: ["database": .string(settings.summary)])
        }
    }

    private func noteOutage(_ error: any Error) {
        lastFailure.withLock { $0 = error is PostgresStoreTimeout ? "no connection within \(settings.connectTimeout)" : Self.explain(error) }
        if lastOutage.exchange(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed) == 0 {
            logger.error("the database does not answer", metadata: ["database": .string(settings.summary), "error": .string(String(describing: error))])
        }
    }

    static let unavailable = BrokerError(
        .temporarilyUnavailable, .unavailable, "The broker's database is unavailable; try again shortly.", retryAfter: 1
    )

    // MARK: - BrokerStore

    public func ping() async throws {
        try await run("SELECT 1")
    }

    /// Vacuums the tables that hold sealed secrets, so the row versions replaced by a rewrap are
    /// removed and their space reused. Plain `VACUUM` takes no lock that stops the running nodes;
    /// the old bytes may stay in free space until overwritten, and old versions stay in the
    /// write-ahead log and backups until those are recycled (docs/operations.md says how to rewrite
    /// the tables with `VACUUM FULL` in a quiet moment).
    public func scrubReplacedData() async throws {
        try await run("VACUUM signing_keys, plugin_data")
    }

    /// Rows in a table.
    public func count(table: StoreTable) async throws -> Int {
        let rows = try await rows(PostgresQuery(unsafeSQL: "SELECT COUNT(*) FROM \(table.rawValue)"))
        return try rows.first.map { try $0[0].decode(Int.self) } ?? 0
    }
}

/// The store could not be opened: a message an operator can act on.
public struct StoreOpenError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// The database may answer later (it did not answer at all); other failures need an operator.
    public var retryable: Bool
    /// A newer Gatehouse migrated the database: only a newer version (or the copy taken before that
    /// upgrade) helps, so `serve` exits with its own status and the service is not restarted.
    public var newerSchema: Bool
    /// Copying the database before an upgrade, or a migration, failed: starting again would copy
    /// a part-migrated database, so an operator looks first.
    public var migrationFailed: Bool
    public init(_ message: String, retryable: Bool = false, newerSchema: Bool = false, migrationFailed: Bool = false) {
        self.message = message
        self.retryable = retryable
        self.newerSchema = newerSchema
        self.migrationFailed = migrationFailed
    }
    public var description: String { message }
}

struct PostgresStoreTimeout: Error {}

/// Set once an operation holds a connection.
final class Leased: Sendable {
    private let flag = Atomic<Bool>(false)
    func note() { flag.store(true, ordering: .relaxed) }
    var happened: Bool { flag.load(ordering: .relaxed) }
}

/// Dates are stored as seconds since 1970 (`double precision`), as in SQLite, so a copy between the
/// two is exact and expiry comparisons are plain SQL.
extension PostgresCell {
    func date() throws -> Date { Date(storeValue: try decode(Double.self)) }
    func optionalDate() throws -> Date? { try decode(Double?.self).map(Date.init(storeValue:)) }
    func string() throws -> String { try decode(String.self) }
    func optionalString() throws -> String? { try decode(String?.self) }
    func int() throws -> Int { try decode(Int.self) }
    func json<T: Decodable>(_ type: T.Type) throws -> T { try StoreJSON.decode(T.self, try decode(String.self)) }
}
