import Foundation
import GatehouseCore
import GatehouseStore
import Logging
import Testing

/// A throw-away PostgreSQL 15 server for a test suite, driven through Tests/postgres/postgres.sh
/// (127.0.0.1, a port of its own, its data in a temporary folder). Each test takes a database of its
/// own with `database()`, so tests run in parallel.
public final class PostgresServer: SharedTestPeer {
    public let folder: URL
    public let port: Int

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/postgres/postgres.sh").path

    private init(folder: URL, port: Int) {
        self.folder = folder
        self.port = port
    }

    /// Starts a server on a free port, with a migrated template database that `database()` copies
    /// (so that each test's database costs a file copy, not the whole schema's DDL).
    public static func start() async throws -> PostgresServer {
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("gatehouse-pg-\(UUID().uuidString.prefix(8))")
        var lastError = ""
        for _ in 0..<5 {
            let port = Int.random(in: 20000...45000)
            let (status, output) = await run(["start", folder.path, String(port)])
            if status == 0 {
                let server = PostgresServer(folder: folder, port: port)
                do {
                    let template = try await server.database(named: Self.template, fromTemplate: false)
                    try await PostgresStore(settings: template, logger: Logger(label: "test")).close()
                    // A template must have no session left (the closed pool ends its connections
                    // in the background).
                    for _ in 0..<50 {
                        let left = try await server.psql(
                            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(Self.template)'", database: "postgres"
                        )
                        if left == "0" { break }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                } catch {
                    await server.remove()
                    throw error
                }
                return server
            }
            lastError = output
            await run(["remove", folder.path])
        }
        throw ChildProcessError(message: "could not start PostgreSQL: \(lastError)")
    }

    static let template = "gatehouse_template"

    public func remove() async { await Self.run(["remove", folder.path]) }

    /// A new, empty database; its settings. The wait for a connection is long by default: the whole
    /// test suite runs in parallel on two cores, and a test that wants outages sets its own.
    /// `migrated` false gives an empty database (for the migration tests themselves).
    public func database(poolSize: Int = 10, connectTimeout: Int = 15, migrated: Bool = true) async throws -> PostgresSettings {
        var settings = try await database(named: "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""), fromTemplate: migrated)
        settings.poolSize = poolSize
        settings.connectTimeout = Seconds(connectTimeout)
        return settings
    }

    private func database(named name: String, fromTemplate: Bool) async throws -> PostgresSettings {
        let (status, output) = await Self.run(["createdb", folder.path, name] + (fromTemplate ? [Self.template] : []))
        guard status == 0, let url = output.split(separator: "\n").last.map(String.init) else {
            throw ChildProcessError(message: "could not create a database: \(output)")
        }
        var settings = try PostgresSettings(url: url)
        settings.connectTimeout = Seconds(15)
        return settings
    }

    public func dropDatabase(_ settings: PostgresSettings) async {
        await Self.run(["dropdb", folder.path, settings.database])
    }

    /// Runs SQL as the superuser on `database`; answers psql's unaligned output.
    public func psql(_ sql: String, database: String) async throws -> String {
        let (status, output) = await Self.run(["psql", folder.path, "-d", database, "-tA", "-c", sql])
        guard status == 0 else { throw ChildProcessError(message: "psql failed: \(output)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Kills the server (as a crash would); `restart()` starts it again with its data.
    public func kill() async { await Self.run(["kill", folder.path]) }

    public func restart() async throws {
        let (status, output) = await Self.run(["start", folder.path, String(port)])
        if status != 0 { throw ChildProcessError(message: "could not restart PostgreSQL: \(output)") }
    }

    @discardableResult
    private static func run(_ arguments: [String]) async -> (Int32, String) {
        await ChildProcess.run(["/bin/bash", script] + arguments)
    }

    public static let suitePeer = TaskLocal<PostgresServer?>(wrappedValue: nil)
}

/// The two databases the store runs on; store tests take it as their argument.
public enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    public var testDescription: String { rawValue }
}

/// A throw-away database of either kind, with its store open. PostgreSQL needs the suite's
/// `PostgresServer` (`.shared(PostgresServer.self)`).
public struct TestDatabase: Sendable {
    public let kind: StoreKind
    public let store: any OperatedStore
    public let sqlite: TemporaryStore?
    public let postgres: PostgresSettings?

    public static func make(_ kind: StoreKind) async throws -> TestDatabase {
        switch kind {
        case .sqlite:
            let temporary = try TemporaryStore()
            return TestDatabase(kind: kind, store: temporary.store, sqlite: temporary, postgres: nil)
        case .postgres:
            let settings = try await PostgresServer.shared.database()
            return TestDatabase(kind: kind, store: try await PostgresStore(settings: settings, logger: Logger(label: "test")), sqlite: nil, postgres: settings)
        }
    }

    /// Another store on the same database: a restarted process, or a second broker node.
    public func open() async throws -> any OperatedStore {
        if let sqlite { return try SQLiteStore(path: sqlite.path) }
        return try await PostgresStore(settings: postgres!, logger: Logger(label: "test"))
    }

    /// Closes the store and deletes the database.
    public func remove() async {
        if let sqlite { sqlite.remove() }
        if let postgres {
            try? store.close()
            await PostgresServer.shared.dropDatabase(postgres)
        }
    }

    /// Runs `body` with a new database of `kind`, removed afterwards whatever happens.
    public static func with(_ kind: StoreKind, _ body: (TestDatabase) async throws -> Void) async throws {
        let database = try await make(kind)
        do {
            try await body(database)
        } catch {
            await database.remove()
            throw error
        }
        await database.remove()
    }
}
