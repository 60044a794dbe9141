import Foundation
import GatehouseCore
@testable import GatehouseStore
import GatehouseTesting
import Testing

/// PostgreSQL's prepared statements: the hot lookups keep working on connections that prepared them
/// before a newer node's migration changed the tables.
extension GatehouseStoreTests {
    @Test func preparedLookupsKeepWorkingAfterAMigrationAddsColumns() async throws {
        try await TestDatabase.with(.postgres) { database in
            let store = database.store
            let owner = try await account(store)
            try await store.insertRefreshToken(refreshToken("rt-1", account: owner.id))
            let now = Date()
            #expect(try await store.insertPluginRecord(namespace: "local", key: "k", value: Data("v".utf8), expiresAt: nil, now: now))
            #expect(try await store.insertApp(App(id: "a", name: "A", policy: Policy(identityProviders: ["local"]), createdAt: now, updatedAt: now)))
            // Every prepared statement once, on the pool's connections.
            for _ in 0..<4 {
                #expect(try await store.refreshToken(digest: "rt-1")?.accountID == owner.id)
                #expect(try await store.account(id: owner.id)?.username == owner.username)
                #expect(try await store.identityLinks(accountID: owner.id).count == 1)
                #expect(try await store.attemptCounter(key: "k") == nil)
                #expect(try await store.pluginRecord(namespace: "local", key: "k", now: now)?.value == Data("v".utf8))
                #expect(try await store.app(id: "a")?.policy.identityProviders == ["local"])
            }
            // A newer node adds columns to every table these statements read.
            let settings = try #require(database.postgres)
            for table in ["refresh_tokens", "accounts", "identity_links", "attempt_counters", "plugin_data", "apps"] {
                _ = try await PostgresServer.shared.psql("ALTER TABLE \(table) ADD COLUMN from_the_future TEXT", database: settings.database)
            }
            for _ in 0..<4 {
                #expect(try await store.refreshToken(digest: "rt-1")?.accountID == owner.id)
                #expect(try await store.account(id: owner.id)?.username == owner.username)
                #expect(try await store.identityLinks(accountID: owner.id).count == 1)
                #expect(try await store.attemptCounter(key: "k") == nil)
                #expect(try await store.pluginRecord(namespace: "local", key: "k", now: now)?.value == Data("v".utf8))
                #expect(try await store.app(id: "a")?.policy.identityProviders == ["local"])
            }
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
