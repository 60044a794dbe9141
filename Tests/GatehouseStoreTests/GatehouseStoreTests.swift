import Foundation
import GatehouseCore
import GatehouseStore
import GatehouseTesting
import Testing

/// The SQLite store: schema, durability, and the compare-and-swap writes that keep concurrent
/// flows from losing updates.
@Suite("GatehouseStore")
struct GatehouseStoreTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func flow(_ id: String = "flow-1", expiresIn seconds: TimeInterval = 600) -> FlowRecord {
        FlowRecord(
            id: id, appID: "notes", providerID: "local", purpose: .authenticate, stateless: false, scopes: ["openid"], phase: .identify,
            pluginState: FlowState(), challenge: .credentials(), createdAt: now, expiresAt: now.addingTimeInterval(seconds)
        )
    }

    @Test func appliesMigrationsOnOpenAndUsesWriteAheadLog() throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        #expect(try temporary.store.appliedMigrations() == ["v1-foundation", "v2-openid-provider", "v3-lockouts-admin", "v4-test-accounts", "v5-provisional-identities", "v6-disabled-apps"])
        // Opening again runs nothing twice.
        #expect(try SQLiteStore(path: temporary.path).appliedMigrations() == ["v1-foundation", "v2-openid-provider", "v3-lockouts-admin", "v4-test-accounts", "v5-provisional-identities", "v6-disabled-apps"])
        // SQLite's file header says WAL with read and write versions 2 (bytes 18 and 19).
        let header = try #require(FileManager.default.contents(atPath: temporary.path)).prefix(20)
        #expect(Array(header.suffix(2)) == [2, 2])
    }

    @Test func keepsEverythingAcrossReopen() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let identity = ExternalIdentity(providerID: "local", subject: "s-1", username: "alice", claims: IdentityClaims(email: "a@example.com"))
        let (account, created) = try await temporary.store.linkIdentity(identity, now: now)
        #expect(created)
        try await temporary.store.insertFlow(flow())
        #expect(try await temporary.store.insertPluginRecord(namespace: "local", key: "user:alice", value: Data("x".utf8), expiresAt: nil, now: now))
        try await temporary.store.appendAudit(AuditEvent(time: now, type: "signin.success", appID: "notes", accountID: account.id))

        let reopened = try SQLiteStore(path: temporary.path)
        #expect(try await reopened.account(id: account.id) == account)
        #expect(try await reopened.identityLink(providerID: "local", subject: "s-1")?.claims.email == "a@example.com")
        #expect(try await reopened.flow(id: "flow-1", now: now)?.appID == "notes")
        #expect(try await reopened.pluginRecord(namespace: "local", key: "user:alice", now: now)?.value == Data("x".utf8))
        #expect(try await reopened.auditEvents(type: nil, appID: "notes", accountID: nil, since: nil, limit: 5).count == 1)
    }

    @Test func flowWriteWithStaleVersionLoses() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        try await temporary.store.insertFlow(flow())
        var first = try #require(try await temporary.store.flow(id: "flow-1", now: now))
        var second = first
        first.failedAttempts = 1
        second.failedAttempts = 7
        #expect(try await temporary.store.updateFlow(first))
        #expect(try await !temporary.store.updateFlow(second))
        let stored = try #require(try await temporary.store.flow(id: "flow-1", now: now))
        #expect(stored.failedAttempts == 1)
        #expect(stored.version == 1)
        #expect(try await !temporary.store.deleteFlow(id: "flow-1", version: 0))
        #expect(try await temporary.store.deleteFlow(id: "flow-1", version: 1))
    }

    @Test func expiredFlowIsInvisibleAndPurged() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        try await temporary.store.insertFlow(flow("old", expiresIn: 60))
        try await temporary.store.insertFlow(flow("new", expiresIn: 600))
        let later = now.addingTimeInterval(61)
        #expect(try await temporary.store.flow(id: "old", now: later) == nil)
        #expect(try await temporary.store.countFlows(now: later) == 1)
        #expect(try await temporary.store.deleteExpiredFlows(now: later) == 1)
        #expect(try await temporary.store.count(table: .flows) == 1)
    }

    @Test func pluginRecordsAreInsertOnceAndCompareAndSwap() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let store = temporary.store
        #expect(try await store.insertPluginRecord(namespace: "a", key: "k", value: Data([1]), expiresAt: now.addingTimeInterval(10), now: now))
        #expect(try await !store.insertPluginRecord(namespace: "a", key: "k", value: Data([2]), expiresAt: nil, now: now))
        // The same key in another plugin's namespace is another record.
        #expect(try await store.insertPluginRecord(namespace: "b", key: "k", value: Data([3]), expiresAt: nil, now: now))
        // Once expired, the key can be taken again.
        #expect(try await store.insertPluginRecord(namespace: "a", key: "k", value: Data([4]), expiresAt: nil, now: now.addingTimeInterval(11)))
        let record = try #require(try await store.pluginRecord(namespace: "a", key: "k", now: now))
        #expect(record.value == Data([4]))
        #expect(try await store.replacePluginRecord(namespace: "a", key: "k", value: Data([5]), expiresAt: nil, expectedVersion: record.version))
        #expect(try await !store.replacePluginRecord(namespace: "a", key: "k", value: Data([6]), expiresAt: nil, expectedVersion: record.version))
        #expect(try await store.pluginRecord(namespace: "a", key: "k", now: now)?.value == Data([5]))
    }

    @Test func concurrentFirstSignInsOfOneIdentityMakeOneAccount() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let identity = ExternalIdentity(providerID: "ldap", subject: "uid=alice", username: "alice")
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await temporary.store.linkIdentity(identity, now: now).account.id } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(try await temporary.store.count(table: .accounts) == 1)
    }

    @Test func unlinkingTheLastIdentityDeletesAccountAndItsTokens() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let store = temporary.store
        let (account, _) = try await store.linkIdentity(ExternalIdentity(providerID: "local", subject: "s", username: "bob"), now: now)
        try await store.insertRefreshToken(
            RefreshTokenRecord(digest: "d", familyID: "f", accountID: account.id, appID: "notes", scopes: [], issuedAt: now, expiresAt: now.addingTimeInterval(60), authTime: now)
        )
        #expect(try await store.unlinkIdentity(providerID: "local", subject: "s"))
        #expect(try await store.account(id: account.id) == nil)
        #expect(try await store.refreshToken(digest: "d") == nil)
        #expect(try await !store.unlinkIdentity(providerID: "local", subject: "s"))
    }

    @Test func seedingNeverOverwritesAnAdminManagedApp() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        var app = App(id: "notes", name: "Notes", policy: Policy(identityProviders: ["local"]), createdAt: now, updatedAt: now)
        _ = try await temporary.store.seedApp(app)
        app.name = "Notes 2"
        #expect(try await temporary.store.seedApp(app).name == "Notes 2")
        var adminVersion = app
        adminVersion.managedBy = .admin
        adminVersion.policy.statelessAuthentication = true
        _ = try await temporary.store.seedApp(adminVersion)
        // The file's version (stateless off) is ignored once an admin manages the app.
        let kept = try await temporary.store.seedApp(app)
        #expect(kept.managedBy == .admin)
        #expect(kept.policy.statelessAuthentication == true)
        #expect(try await temporary.store.app(id: "notes")?.policy.statelessAuthentication == true)
    }

    @Test func auditFiltersByTypeAppAccountAndTime() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let store = temporary.store
        try await store.appendAudit(AuditEvent(time: now, type: "signin.success", appID: "a", accountID: "x"))
        try await store.appendAudit(AuditEvent(time: now.addingTimeInterval(10), type: "signin.failure", appID: "a", outcome: "invalid_credentials"))
        try await store.appendAudit(AuditEvent(time: now.addingTimeInterval(20), type: "signin.success", appID: "b", accountID: "y"))
        #expect(try await store.auditEvents(type: "signin.success", appID: nil, accountID: nil, since: nil, limit: 10).map(\.appID) == ["b", "a"])
        #expect(try await store.auditEvents(type: nil, appID: "a", accountID: nil, since: now.addingTimeInterval(5), limit: 10).map(\.type) == ["signin.failure"])
        #expect(try await store.auditEvents(type: nil, appID: nil, accountID: "y", since: nil, limit: 10).count == 1)
    }

    @Test func pluginRecordsMatchAKeyPrefixExactly() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let store = temporary.store
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for key in ["jti:1", "jti:2", "key:a%b", "key:a_b", "key:axb", "keys", "user:é1", "user:é2", "zzz"] {
            #expect(try await store.insertPluginRecord(namespace: "p", key: key, value: Data(key.utf8), expiresAt: nil, now: now))
        }
        #expect(try await store.insertPluginRecord(namespace: "other", key: "key:a%b", value: Data(), expiresAt: nil, now: now))
        func keys(_ prefix: String) async throws -> [String] { try await store.pluginRecords(namespace: "p", keyPrefix: prefix, now: now).map(\.key) }
        #expect(try await keys("key:") == ["key:a%b", "key:a_b", "key:axb"])
        // % and _ are not wildcards.
        #expect(try await keys("key:a%") == ["key:a%b"])
        #expect(try await keys("key:a_") == ["key:a_b"])
        #expect(try await keys("user:é") == ["user:é1", "user:é2"])
        #expect(try await keys("").count == 9)
        #expect(try await keys("nope").isEmpty)
    }
}
