import Foundation
import GatehouseCore
@testable import GatehouseStore
import GatehouseTesting
import Testing

/// PostgreSQL's prepared statements: the hot lookups keep working on the connection that prepared them
/// after a newer node's migration added columns (a `SELECT *` statement does not: the control).
extension GatehouseStoreTests {
    /// What the store's statements must not be.
    enum EveryAccountColumn: PreparedSQL {
        static let sql = "SELECT * FROM accounts WHERE id = $1"
    }

    @Test func preparedLookupsKeepWorkingAfterAMigrationAddsColumns() async throws {
        try await TestDatabase.with(.postgres) { database in
            // One connection: whatever ran before the migration runs after it on the same connection.
            var settings = try #require(database.postgres)
            settings.poolSize = 1
            let store = try await PostgresStore(settings: settings, migrate: false)
            defer { store.close() }
            let owner = try await account(store)
            let now = Date()
            try await store.insertRefreshToken(refreshToken("rt-1", account: owner.id))
            #expect(try await store.insertPluginRecord(namespace: "local", key: "k", value: Data("v".utf8), expiresAt: nil, now: now))
            #expect(try await store.insertApp(App(id: "a", name: "A", policy: Policy(identityProviders: ["local"]), createdAt: now, updatedAt: now)))
            _ = try await store.reserveAttempt(key: "k", now: now, window: 60, threshold: 5, lockDuration: { _ in 60 })
            func lookUpEverything() async throws {
                #expect(try await store.refreshToken(digest: "rt-1")?.accountID == owner.id)
                #expect(try await store.account(id: owner.id)?.username == owner.username)
                #expect(try await store.identityLinks(accountID: owner.id).count == 1)
                #expect(try await store.linkedAccount(providerID: "local", subject: "s-1")?.id == owner.id)
                #expect(try await store.attemptCounter(key: "k")?.failures == 1)
                #expect(try await store.pluginRecord(namespace: "local", key: "k", now: now)?.value == Data("v".utf8))
                #expect(try await store.app(id: "a")?.policy.identityProviders == ["local"])
            }
            try await lookUpEverything()
            #expect(try await store.rows(EveryAccountColumn.self) { $0.append(owner.id) }.count == 1)
            // A newer node adds a column to every table these statements read.
            for table in ["refresh_tokens", "accounts", "identity_links", "attempt_counters", "plugin_data", "apps"] {
                _ = try await PostgresServer.shared.psql("ALTER TABLE \(table) ADD COLUMN from_the_future TEXT", database: settings.database)
            }
            try await lookUpEverything()
            // The control: the same connection's `SELECT *` statement breaks ("cached plan must not
            // change result type"), and the connection it broke is replaced, so the next call works.
            await #expect(throws: (any Error).self) { _ = try await store.rows(EveryAccountColumn.self) { $0.append(owner.id) } }
            #expect(try await store.rows(EveryAccountColumn.self) { $0.append(owner.id) }.count == 1)
            try await lookUpEverything()
            // The prepared rotation still rotates exactly once.
            let replacement = refreshToken("rt-2", account: owner.id)
            #expect(try await store.rotateRefreshToken(usedDigest: "rt-1", replacement: replacement, now: now))
            #expect(try await !store.rotateRefreshToken(usedDigest: "rt-1", replacement: refreshToken("rt-3", account: owner.id), now: now))
            let rotated = try #require(try await store.refreshToken(digest: "rt-2"))
            #expect(rotated.scopes == replacement.scopes && rotated.methods == replacement.methods && rotated.sessionID == replacement.sessionID)
            #expect(try await store.refreshToken(digest: "rt-1")?.usedAt != nil)
            #expect(try await store.refreshToken(digest: "rt-3") == nil)
        }
    }
}
