import Foundation
import GatehouseCore
@testable import GatehouseStore
import GatehouseTesting
import GRDB
import Testing

/// The one store suite: every store protocol, run against SQLite and against a real PostgreSQL
/// (each test takes its argument and a database of its own). Concurrency tests on PostgreSQL open a
/// second store on the same database: a second broker node.
@Suite("GatehouseStore", .shared(PostgresServer.self))
struct GatehouseStoreTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let allMigrations = [
        "v1-foundation", "v2-openid-provider", "v3-lockouts-admin", "v4-test-accounts", "v5-provisional-identities", "v6-disabled-apps", "v7-key-activation",
        "v8-verified-email-index", "v9-devices", "v10-activation-profiles", "v11-browser-sessions", "v12-policy-plugin-settings", "v13-flow-hand-offs",
        "v14-device-authorizations", "v15-event-outbox", "v16-account-disabled", "v17-scim",
    ]

    func flow(_ id: String = "flow-1", app: String = "notes", expiresIn seconds: TimeInterval = 600) -> FlowRecord {
        FlowRecord(
            id: id, appID: app, providerID: "local", purpose: .authenticate, stateless: false, scopes: ["openid"], phase: .identify,
            pluginState: FlowState(), challenge: .credentials(), createdAt: now, expiresAt: now.addingTimeInterval(seconds)
        )
    }

    func account(_ store: any BrokerStore, _ subject: String = "s-1") async throws -> Account {
        try await store.linkIdentity(ExternalIdentity(providerID: "local", subject: subject, username: subject), now: now).account
    }

    /// A provisional identity, an installation with its sign-in key, a browser session and a device
    /// code, all of the app `notes`: rows that name the app outside its own table.
    func insertWhatAnAppsDevicesAndSessionsHold(_ store: any BrokerStore, owner: Account) async throws {
        _ = try await store.createProvisionalIdentity(
            ProvisionalIdentity(id: "pi", appID: "notes", email: try #require(EmailAddress("p@x.example")), createdAt: now, createdBy: "admin:root"))
        _ = try await store.registerSignInKey(signInKey("sk", installation: "inst-1", vendor: "v1"), accountID: owner.id, appID: "notes", providerID: "device", now: now)
        try await store.insertBrowserSession(browserSession("sid-1", account: owner.id, apps: ["notes"]))
        #expect(
            try await store.insertDeviceAuthorization(
                DeviceAuthorizationRecord(
                    deviceCodeDigest: "dc", userCodeDigest: "uc", appID: "notes", scopes: ["openid"], createdAt: now, expiresAt: now.addingTimeInterval(600), interval: 5)
            )
        )
    }

    func refreshToken(_ digest: String, family: String = "f", account: String, app: String = "notes") -> RefreshTokenRecord {
        RefreshTokenRecord(
            digest: digest, familyID: family, accountID: account, appID: app, scopes: ["openid"], issuedAt: now, expiresAt: now.addingTimeInterval(60),
            authTime: now, methods: ["pwd"], identityProvider: "local"
        )
    }

    func code(_ digest: String, account: String, app: String = "notes") -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(
            digest: digest, appID: app, redirectURI: "https://app.example/cb", codeChallenge: "challenge", nonce: "n", scopes: ["openid"], accountID: account,
            authTime: now, methods: ["pwd"], identityProvider: "local", expiresAt: now.addingTimeInterval(60)
        )
    }

    /// `count` copies of `body` at once, each on its own store when `nodes` are given (round robin).
    func concurrently<T: Sendable>(_ count: Int, on nodes: [any BrokerStore], _ body: @escaping @Sendable (any BrokerStore, Int) async throws -> T) async throws -> [T] {
        try await withThrowingTaskGroup(of: T.self) { group in
            for index in 0..<count { group.addTask { try await body(nodes[index % nodes.count], index) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    // MARK: - Schema

    @Test(arguments: StoreKind.allCases) func appliesMigrationsOnceAndRefusesANewerSchema(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            #expect(try await database.store.appliedMigrations() == Self.allMigrations)
            // Opening again applies nothing.
            let again = try await database.open()
            #expect(try await again.migrate().isEmpty)
            try again.close()
            // A migration this code does not know: a newer Gatehouse upgraded the database.
            _ = try await database.store.insertPluginRecord(namespace: "x", key: "k", value: Data(), expiresAt: nil, now: now)
            switch kind {
            case .sqlite:
                let path = try #require(database.store as? SQLiteStore).path
                let script =
                    "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); db.execute(\"INSERT INTO grdb_migrations VALUES ('v99-from-the-future')\"); db.commit()"
                #expect(await ChildProcess.run(["python3", "-c", script, path]).status == 0)
                let error = await thrownError(StoreOpenError.self) { _ = try SQLiteStore(path: path) }
                #expect(error?.message.contains("v99-from-the-future") == true)
            case .postgres:
                let settings = try #require(database.postgres)
                _ = try await PostgresServer.shared.psql("INSERT INTO gatehouse_migrations VALUES ('v99-from-the-future', 0)", database: settings.database)
                let error = await thrownError(StoreOpenError.self) { _ = try await PostgresStore(settings: settings) }
                #expect(error?.message.contains("newer schema") == true)
                #expect(error?.message.contains("v99-from-the-future") == true)
                #expect(error?.retryable == false)
            }
            // Nothing was lost on the way.
            #expect(try await database.store.pluginRecord(namespace: "x", key: "k", now: now) != nil)
        }
    }

    @Test func anUpgradedSQLiteDatabaseIsCopiedFirstAndTheCopyOpensAtTheOlderSchema() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-upgrade-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("gatehouse.sqlite").path
        // The database as a release with migrations up to v13 left it, with a row in it.
        let older = Array(Self.allMigrations.prefix(13))
        do {
            let pool = try DatabasePool(path: path)
            try SQLiteMigrations.migrator.migrate(pool, upTo: older.last!)
            try await pool.write { db in
                try db.execute(sql: "INSERT INTO plugin_data (namespace, key, value, version, expires_at) VALUES ('x', 'k', X'01', 1, NULL)")
            }
            try pool.close()
        }
        // A copy an earlier start began and never finished (killed mid-copy) is removed.
        let abandoned = path + ".before-v14-device-authorizations.20260101T000000Z.partial"
        #expect(FileManager.default.createFile(atPath: abandoned, contents: Data("half".utf8)))
        let upgraded = try SQLiteStore(path: path)
        #expect(!FileManager.default.fileExists(atPath: abandoned))
        let report = try #require(upgraded.openingMigration)
        #expect(report.applied == Array(Self.allMigrations.dropFirst(13)))
        let copy = try #require(report.backup)
        #expect(copy.hasPrefix(path + ".before-v14-device-authorizations."))
        let mode = try #require(FileManager.default.attributesOfItem(atPath: copy)[.posixPermissions] as? Int)
        #expect(mode & 0o077 == 0)
        #expect(try upgraded.appliedMigrations() == Self.allMigrations)
        #expect(try await upgraded.pluginRecord(namespace: "x", key: "k", now: now) != nil)
        try upgraded.close()
        // The copy is the database before the upgrade: the older schema, the same row.
        let restored = try DatabaseQueue(path: copy)
        #expect(try await restored.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid") } == older)
        #expect(try await restored.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM plugin_data WHERE namespace = 'x'") } == 1)
        try restored.close()
        // A current database is opened without another copy; a new one needs none.
        let again = try SQLiteStore(path: path)
        #expect(again.openingMigration == SQLiteMigrationReport(applied: [], backup: nil))
        try again.close()
        let fresh = try SQLiteStore(path: folder.appendingPathComponent("new.sqlite").path)
        #expect(fresh.openingMigration?.backup == nil)
        #expect(fresh.openingMigration?.applied == Self.allMigrations)
        try fresh.close()
        let copies = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".before-") }
        #expect(copies.count == 1)
    }

    @Test func sqliteUsesTheWriteAheadLog() throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        // SQLite's file header says WAL with read and write versions 2 (bytes 18 and 19).
        let header = try #require(FileManager.default.contents(atPath: temporary.path)).prefix(20)
        #expect(Array(header.suffix(2)) == [2, 2])
    }

    @Test func nodesStartingTogetherMigrateOnce() async throws {
        let settings = try await PostgresServer.shared.database(migrated: false)
        defer { Task { await PostgresServer.shared.dropDatabase(settings) } }
        let applied = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<5 {
                group.addTask {
                    let store = try await PostgresStore(settings: settings, migrate: false)
                    defer { store.close() }
                    return try await store.migrate()
                }
            }
            return try await group.reduce(into: [[String]]()) { $0.append($1) }
        }
        // One node applied everything; the others waited on the advisory lock and found nothing to do.
        #expect(applied.filter { !$0.isEmpty } == [Self.allMigrations])
        #expect(try await PostgresServer.shared.psql("SELECT COUNT(*) FROM gatehouse_migrations", database: settings.database) == "\(Self.allMigrations.count)")
    }

    @Test func anUnreachableDatabaseIsARetryableOpenErrorAndA503LaterOn() async throws {
        var settings = try PostgresSettings(url: "postgres://gatehouse:x@127.0.0.1:1/none")
        settings.connectTimeout = Seconds(2)
        let error = await thrownError(StoreOpenError.self) { _ = try await PostgresStore(settings: settings) }
        #expect(error?.retryable == true)
        #expect(error?.message.contains("cannot reach the database at postgres://gatehouse@127.0.0.1:1/none") == true)
        #expect(error?.message.contains(":x@") == false)
        let store = try await PostgresStore(settings: settings, migrate: false)
        defer { store.close() }
        let unavailable = await thrownError { _ = try await store.app(id: "x") }
        #expect(unavailable?.code == .temporarilyUnavailable)
        #expect(unavailable?.httpStatus == 503)
    }

    @Test func aDatabaseLostMidRunAnswers503AndRecoversWithoutRestart() async throws {
        // A server of its own: this test kills it.
        try await PostgresServer.withOwn { server in
            var settings = try await server.database()
            // Migrated with the patient default (the whole suite loads the machine), then watched
            // with a short wait for connections.
            try await PostgresStore(settings: settings).close()
            settings.connectTimeout = Seconds(2)
            let store = try await PostgresStore(settings: settings, migrate: false)
            defer { store.close() }
            _ = try await store.insertApp(App(id: "a", name: "A", policy: Policy(identityProviders: ["local"]), createdAt: now, updatedAt: now))
            await server.kill()
            let error = await thrownError { _ = try await store.app(id: "a") }
            #expect(error?.code == .temporarilyUnavailable)
            try await server.restart()
            // The pool reconnects by itself (after the one-second fail-fast window).
            var recovered: App?
            for _ in 0..<50 where recovered == nil {
                recovered = try? await store.app(id: "a")
                if recovered == nil { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(recovered?.name == "A")
        }
    }

    // MARK: - Apps

    @Test(arguments: StoreKind.allCases) func appsInsertUpdateWithVersionsAndDelete(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            var app = App(
                id: "notes", name: "Notes", redirectURIs: ["https://n.example/cb"], policy: Policy(identityProviders: ["local"]), createdAt: now, updatedAt: now)
            #expect(try await store.insertApp(app))
            #expect(try await !store.insertApp(app))
            app.name = "Notes 2"
            #expect(try await store.updateApp(app))
            // A second writer holding the old version loses.
            #expect(try await !store.updateApp(app))
            var stored = try #require(try await store.app(id: "notes"))
            #expect(stored.name == "Notes 2" && stored.version == 1 && stored.redirectURIs == ["https://n.example/cb"])
            stored.disabled = true
            #expect(try await store.updateApp(stored))
            #expect(try await store.app(id: "notes")?.disabled == true)
            #expect(try await store.apps().map(\.id) == ["notes"])
            let owner = try await account(store)
            try await store.insertRefreshToken(refreshToken("rt", account: owner.id))
            try await store.insertAuthorizationCode(code("c", account: owner.id))
            try await store.insertFlow(flow())
            try await insertWhatAnAppsDevicesAndSessionsHold(store, owner: owner)
            #expect(try await store.deleteApp(id: "notes"))
            #expect(try await !store.deleteApp(id: "notes"))
            // What the app held went with it, and nothing an app made again with its id would inherit.
            #expect(try await store.refreshToken(digest: "rt") == nil)
            #expect(try await store.authorizationCode(digest: "c") == nil)
            #expect(try await store.flow(id: "flow-1", now: now) == nil)
            for table in [StoreTable.installations, .signInKeys, .provisionalIdentities, .deviceAuthorizations, .browserSessionApps] {
                #expect(try await store.count(table: table) == 0, "\(kind): \(table)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases) func seedingNeverOverwritesAnAdminManagedApp(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            var app = App(id: "notes", name: "Notes", policy: Policy(identityProviders: ["local"]), createdAt: now, updatedAt: now)
            _ = try await store.seedApp(app)
            app.name = "Notes 2"
            #expect(try await store.seedApp(app).name == "Notes 2")
            var adminVersion = app
            adminVersion.managedBy = .admin
            adminVersion.policy.statelessAuthentication = true
            _ = try await store.seedApp(adminVersion)
            // The file's version (stateless off) is ignored once an admin manages the app.
            let kept = try await store.seedApp(app)
            #expect(kept.managedBy == .admin)
            #expect(kept.policy.statelessAuthentication == true)
            #expect(try await store.app(id: "notes")?.policy.statelessAuthentication == true)
        }
    }

    @Test(arguments: StoreKind.allCases) func nodesSeedingTheSameAppsAtOnceAgree(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let app = App(id: "notes", name: "Notes", policy: Policy(identityProviders: ["local"]), createdAt: now, updatedAt: now)
            let seeded = try await concurrently(10, on: [database.store, other]) { store, _ in try await store.seedApp(app) }
            #expect(Set(seeded.map(\.name)) == ["Notes"])
            #expect(try await database.store.count(table: .apps) == 1)
        }
    }

    // MARK: - Accounts

    @Test(arguments: StoreKind.allCases) func keepsEverythingAcrossReopen(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let identity = ExternalIdentity(providerID: "local", subject: "s-1", username: "alice", claims: IdentityClaims(email: "a@example.com"))
            let (account, created) = try await store.linkIdentity(identity, now: now)
            #expect(created)
            try await store.insertFlow(flow())
            #expect(try await store.insertPluginRecord(namespace: "local", key: "user:alice", value: Data("x".utf8), expiresAt: nil, now: now))
            try await store.appendAudit(AuditEvent(time: now, type: "signin.success", appID: "notes", accountID: account.id))

            let reopened = try await database.open()
            defer { try? reopened.close() }
            #expect(try await reopened.account(id: account.id) == account)
            #expect(try await reopened.identityLink(providerID: "local", subject: "s-1")?.claims.email == "a@example.com")
            #expect(try await reopened.flow(id: "flow-1", now: now)?.appID == "notes")
            #expect(try await reopened.pluginRecord(namespace: "local", key: "user:alice", now: now)?.value == Data("x".utf8))
            #expect(try await reopened.auditEvents(type: nil, appID: "notes", accountID: nil, since: nil, limit: 5).count == 1)
        }
    }

    @Test(arguments: StoreKind.allCases) func findsAccountsByAVerifiedAddressOnlyWhateverItsCase(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let verified = try await store.linkIdentity(
                ExternalIdentity(providerID: "up", subject: "v", username: "v", claims: IdentityClaims(email: "Pat@Example.com", emailVerified: true)), now: now
            ).account
            _ = try await store.linkIdentity(
                ExternalIdentity(providerID: "up", subject: "u", username: "u", claims: IdentityClaims(email: "pat@example.com", emailVerified: false)), now: now
            )
            #expect(try await store.accountIDs(withVerifiedEmail: "pat@EXAMPLE.com") == [verified.id])
            #expect(try await store.accountIDs(withVerifiedEmail: "other@example.com").isEmpty)
            // A second account with the address makes the answer ambiguous: both are listed.
            let second = try await store.linkIdentity(
                ExternalIdentity(providerID: "mail", subject: "w", username: "w", claims: IdentityClaims(email: "pat@example.com", emailVerified: true)), now: now
            ).account
            #expect(try await store.accountIDs(withVerifiedEmail: "pat@example.com") == [verified.id, second.id].sorted())
        }
    }

    @Test(arguments: StoreKind.allCases) func concurrentFirstSignInsOfOneIdentityOnTwoNodesMakeOneAccount(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let identity = ExternalIdentity(providerID: "ldap", subject: "uid=alice", username: "alice")
            let results = try await concurrently(20, on: [database.store, other]) { store, _ in try await store.linkIdentity(identity, now: now) }
            #expect(Set(results.map(\.account.id)).count == 1)
            #expect(results.filter(\.created).count == 1)
            #expect(try await database.store.count(table: .accounts) == 1)
        }
    }

    @Test(arguments: StoreKind.allCases) func aReturningIdentityIsFoundWithoutAWriteAndItsLinkRefreshedApart(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let identity = ExternalIdentity(providerID: "up", subject: "pat", username: "pat", claims: IdentityClaims(email: "old@example.com"))
            #expect(try await store.linkedAccount(providerID: "up", subject: "pat") == nil)
            let pat = try await store.linkIdentity(identity, now: now).account
            #expect(try await store.linkedAccount(providerID: "up", subject: "pat")?.id == pat.id)
            #expect(try await store.linkedAccount(providerID: "other", subject: "pat") == nil)
            var changed = identity
            changed.claims.email = "new@example.com"
            let later = now.addingTimeInterval(90)
            try await store.refreshIdentityLink(changed, now: later)
            let link = try #require(try await store.identityLink(providerID: "up", subject: "pat"))
            #expect(link.claims.email == "new@example.com")
            #expect(link.lastSignInAt == later)
            // A recheck's fresh claims replace the link's without counting as a sign-in.
            var rechecked = changed.claims
            rechecked.groups = ["eng"]
            try await store.updateIdentityLinkClaims(providerID: "up", subject: "pat", claims: rechecked)
            let afterRecheck = try #require(try await store.identityLink(providerID: "up", subject: "pat"))
            #expect(afterRecheck.claims.groups == ["eng"] && afterRecheck.claims.email == "new@example.com")
            #expect(afterRecheck.lastSignInAt == later)
            // A link removed meanwhile stays removed.
            #expect(try await store.unlinkIdentity(providerID: "up", subject: "pat"))
            try await store.refreshIdentityLink(changed, now: later)
            #expect(try await store.identityLink(providerID: "up", subject: "pat") == nil)
            #expect(try await store.linkedAccount(providerID: "up", subject: "pat") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases) func linksListAndUnlinkingTheLastIdentityDeletesTheAccountAndItsTokens(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let bob = try await account(store, "bob")
            let second = ExternalIdentity(providerID: "email", subject: "bob@example.com", username: "bob")
            #expect(try await store.addIdentityLink(second, accountID: bob.id, now: now))
            #expect(try await store.addIdentityLink(second, accountID: bob.id, now: now))
            let carol = try await account(store, "carol")
            // An identity of another account cannot be linked again.
            #expect(try await !store.addIdentityLink(second, accountID: carol.id, now: now))
            #expect(try await store.identityLinks(accountID: bob.id).count == 2)
            #expect(try await store.accounts(limit: 10, offset: 0).count == 2)
            #expect(try await store.accounts(limit: 1, offset: 1).count == 1)
            try await store.insertRefreshToken(refreshToken("d", account: bob.id))
            #expect(try await store.unlinkIdentity(providerID: "local", subject: "bob"))
            #expect(try await store.account(id: bob.id) != nil)
            #expect(try await store.unlinkIdentity(providerID: "email", subject: "bob@example.com"))
            #expect(try await store.account(id: bob.id) == nil)
            #expect(try await store.refreshToken(digest: "d") == nil)
            #expect(try await !store.unlinkIdentity(providerID: "local", subject: "bob"))
            #expect(try await store.deleteAccount(id: carol.id))
            #expect(try await !store.deleteAccount(id: carol.id))
        }
    }

    // MARK: - Flows

    @Test(arguments: StoreKind.allCases) func flowWriteWithStaleVersionLoses(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            try await store.insertFlow(flow())
            var first = try #require(try await store.flow(id: "flow-1", now: now))
            var second = first
            first.failedAttempts = 1
            second.failedAttempts = 7
            #expect(try await store.updateFlow(first))
            #expect(try await !store.updateFlow(second))
            let stored = try #require(try await store.flow(id: "flow-1", now: now))
            #expect(stored.failedAttempts == 1)
            #expect(stored.version == 1)
            #expect(try await !store.deleteFlow(id: "flow-1", version: 0))
            #expect(try await store.deleteFlow(id: "flow-1", version: 1))
        }
    }

    /// What a plugin keeps in flow state and the challenge it sent may be secrets (an authenticator
    /// app's secret being enrolled): the store gets them sealed, so no copy of the files shows them,
    /// not while the flow runs, nor in the old versions and deleted rows the files keep afterwards.
    @Test(arguments: StoreKind.allCases) func aFlowsStateAndChallengeAreSealedInEveryCopyOfTheFiles(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let secrets = (0..<3).map { _ in "SECRET" + UUID().uuidString.replacingOccurrences(of: "-", with: "") }
            var record = flow()
            record.pluginState = try FlowState(encoding: ["secret": secrets[0]])
            record.challenge = Challenge(type: "totp_setup", fields: ["otpauthURI": .string("otpauth://totp/x?secret=\(secrets[1])")])
            try await store.insertFlow(record)
            let sealed = try #require(try await store.sealedFlow(id: record.id, now: now))
            #expect(sealed.payload.hasPrefix("gh-kek1:") && !sealed.payload.contains("SECRET"))
            var stored = try #require(try await store.flow(id: record.id, now: now))
            #expect(stored.challenge == record.challenge && stored.pluginState == record.pluginState, "it opens as it was")
            stored.challenge = Challenge(type: "totp_recovery_codes", fields: ["recoveryCodes": .array([.string(secrets[2])])])
            #expect(try await store.updateFlow(stored))
            #expect(try await store.flow(id: record.id, now: now)?.challenge == stored.challenge)
            // Sealed for its version too: the first payload put back over the second does not open.
            var replayed = sealed
            replayed.version = 2
            #expect(try await store.updateFlow(replayed, expectedVersion: 1))
            #expect(await thrownError(BrokerError.self) { _ = try await store.flow(id: record.id, now: now) }?.code == .flowNotFound)
            var next = stored
            next.version = 3
            #expect(try await store.updateFlow(try SealedFlow(next, sealer: .forTests), expectedVersion: 2))
            #expect(try await store.flow(id: record.id, now: now)?.challenge == stored.challenge, "sealed for version 3, it opens at 3")
            // Sealed for its own row: moved to another flow, it does not open.
            var moved = sealed
            moved.id = "flow-2"
            try await store.insertFlow(moved)
            let refusal = await thrownError(BrokerError.self) { _ = try await store.flow(id: "flow-2", now: now) }
            #expect(refusal?.code == .flowNotFound)
            #expect(try await store.deleteFlow(id: record.id, version: 3))
            let bytes = try await database.bytesAtRest()
            #expect(bytes.count > 10_000, "the files were read")
            for secret in secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(kind): a secret of a flow is in the files in clear")
            }
        }
    }

    /// A flow the previous release stored (its record flat, as that release wrote it: sealed, or in
    /// clear from before flows were sealed) reads after the upgrade, every field in its place.
    @Test(arguments: StoreKind.allCases) func aFlowThePreviousReleaseStoredReadsAfterTheUpgrade(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let created = now.timeIntervalSinceReferenceDate
            func previous(_ id: String) -> Data {
                let record: JSONValue = [
                    "id": .string(id), "appID": "notes", "providerID": "local", "purpose": "authenticate", "stateless": false, "scopes": ["openid"],
                    "phase": ["factor": ["authenticatorID": "email"]], "pluginState": ["data": .string(Data("state".utf8).base64EncodedString())],
                    "challenge": ["type": "email_code", "fields": ["sentTo": "a***@example.com"]], "accountID": "acct-1", "accountCreated": true,
                    "methods": ["pwd", "local"], "failedAttempts": 2, "clientIP": "192.0.2.7", "returnURI": "notes://cb", "codeChallenge": "challenge-1",
                    "returnCodeDigest": "digest-1", "signedInAccountID": "acct-0", "signInKeyID": "key-1", "installationID": "install-1",
                    "handOff": ["providerID": "sphinx", "state": ["data": .string(Data("s".utf8).base64EncodedString())]],
                    "createdAt": .number(created), "expiresAt": .number(created + 600), "version": 1,
                ]
                return Data(record.serialized())
            }
            let expires = now.addingTimeInterval(600)
            try await store.insertFlow(
                SealedFlow(
                    id: "sealed", appID: "notes", payload: try SecretSealer.forTests.seal(previous("sealed"), context: "flow:sealed:1"), expiresAt: expires, version: 1)
            )
            try await store.insertFlow(
                SealedFlow(id: "clear", appID: "notes", payload: String(decoding: previous("clear"), as: UTF8.self), expiresAt: expires, version: 1))
            for id in ["sealed", "clear"] {
                let read = try #require(try await store.flow(id: id, now: now), "\(kind): the \(id) flow of the previous release does not read")
                #expect(read.id == id && read.appID == "notes" && read.purpose == .authenticate && !read.stateless && read.scopes == ["openid"])
                #expect(read.phase == .factor(authenticatorID: "email") && read.version == 1)
                #expect(
                    read.turn
                        == PluginTurn(
                            providerID: "local", pluginState: FlowState(data: Data("state".utf8)),
                            challenge: Challenge(type: "email_code", fields: ["sentTo": "a***@example.com"]),
                            handOff: HandOff(providerID: "sphinx", state: FlowState(data: Data("s".utf8)))
                        ))
                #expect(
                    read.accountID == "acct-1" && read.accountCreated == true && read.methods == ["pwd", "local"] && read.failedAttempts == 2
                        && read.signInKeyID == "key-1")
                #expect(read.clientIP == "192.0.2.7" && read.returnURI == "notes://cb" && read.codeChallenge == "challenge-1" && read.returnCodeDigest == "digest-1")
                #expect(read.signedInAccountID == "acct-0" && read.installationID == "install-1")
                #expect(read.createdAt == now && read.expiresAt == expires)
            }
        }
    }

    /// Deleting an account takes its second factors' attempt counters, matched exactly: an id with
    /// LIKE's wildcards names nobody, and another account's counters stay.
    @Test(arguments: StoreKind.allCases) func deletingAnAccountTakesItsFactorCountersAndNoOthers(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let ada = try await account(store, "ada"), bob = try await account(store, "bob")
            for key in ["factor:pin:\(ada.id)", "factor:totp:\(ada.id)", "factor:pin:\(bob.id)", "account:local:ada"] {
                _ = try await store.reserveAttempt(key: key, now: now, window: 60, threshold: 5, lockDuration: { _ in 60 })
            }
            for wildcard in [String(repeating: "_", count: ada.id.count), "%"] { #expect(try await !store.deleteAccount(id: wildcard)) }
            func exists(_ key: String) async throws -> Bool { try await store.attemptCounter(key: key) != nil }
            #expect(try await exists("factor:pin:\(bob.id)"))
            #expect(try await exists("factor:pin:\(ada.id)"))
            #expect(try await store.deleteAccount(id: ada.id))
            #expect(try await !exists("factor:pin:\(ada.id)"))
            #expect(try await !exists("factor:totp:\(ada.id)"))
            #expect(try await exists("factor:pin:\(bob.id)"))
            #expect(try await exists("account:local:ada"))
        }
    }

    @Test(arguments: StoreKind.allCases) func expiredFlowIsInvisibleAndPurged(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            try await store.insertFlow(flow("old", expiresIn: 60))
            try await store.insertFlow(flow("new", expiresIn: 600))
            let later = now.addingTimeInterval(61)
            #expect(try await store.flow(id: "old", now: later) == nil)
            #expect(try await store.countFlows(now: later) == 1)
            #expect(try await store.deleteExpiredFlows(now: later) == 1)
            #expect(try await store.count(table: .flows) == 1)
        }
    }

    // MARK: - Tokens and codes

    @Test(arguments: StoreKind.allCases) func aRefreshTokenRotatesExactlyOnceAcrossNodes(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let owner = try await account(database.store)
            try await database.store.insertRefreshToken(refreshToken("r0", account: owner.id))
            let wins = try await concurrently(16, on: [database.store, other]) { store, index in
                try await store.rotateRefreshToken(usedDigest: "r0", replacement: refreshToken("r1-\(index)", account: owner.id), now: now)
            }
            #expect(wins.filter { $0 }.count == 1)
            // Only the winner's replacement exists.
            #expect(try await database.store.count(table: .refreshTokens) == 2)
            let used = try #require(try await other.refreshToken(digest: "r0"))
            #expect(used.usedAt == now && used.methods == ["pwd"] && used.identityProvider == "local")
            #expect(try await database.store.revokeRefreshTokenFamily(familyID: "f", now: now) == 2)
            #expect(try await database.store.revokeRefreshTokenFamily(familyID: "f", now: now) == 0)
            #expect(try await database.store.deleteExpiredRefreshTokens(now: now.addingTimeInterval(61)) == 2)
        }
    }

    @Test(arguments: StoreKind.allCases) func revokingAFamilyWhileANodeRotatesItLeavesNoLiveToken(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let owner = try await account(database.store)
            for round in 0..<15 {
                let family = "family-\(round)"
                try await database.store.insertRefreshToken(refreshToken("r\(round)", family: family, account: owner.id))
                async let rotated = database.store.rotateRefreshToken(
                    usedDigest: "r\(round)", replacement: refreshToken("r\(round)-next", family: family, account: owner.id), now: now
                )
                async let revoked = other.revokeRefreshTokenFamily(familyID: family, now: now)
                let (didRotate, _) = try await (rotated, revoked)
                // Whichever came first, nothing of the family may still work.
                if didRotate { #expect(try await database.store.refreshToken(digest: "r\(round)-next")?.revokedAt != nil) }
                #expect(try await database.store.refreshToken(digest: "r\(round)")?.revokedAt != nil)
            }
        }
    }

    @Test(arguments: StoreKind.allCases) func anAuthorizationCodeIsRedeemedExactlyOnceAcrossNodes(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let owner = try await account(database.store)
            for round in 0..<10 {
                try await database.store.insertAuthorizationCode(code("c\(round)", account: owner.id))
                let wins = try await concurrently(8, on: [database.store, other]) { store, index in
                    try await store.redeemAuthorizationCode(
                        digest: "c\(round)", now: now, familyID: "fam-\(index)", accessTokenID: "at-\(index)", accessTokenExpiresAt: now.addingTimeInterval(300)
                    )
                }
                #expect(wins.filter { $0 }.count == 1)
            }
            let redeemed = try #require(try await database.store.authorizationCode(digest: "c0"))
            #expect(redeemed.usedAt == now && redeemed.issuedFamilyID?.hasPrefix("fam-") == true && redeemed.codeChallenge == "challenge")
            #expect(try await database.store.deleteExpiredAuthorizationCodes(before: now.addingTimeInterval(61)) == 10)
        }
    }

    @Test(arguments: StoreKind.allCases) func aDeviceAuthorizationChangesByCompareAndSwapAndItsUserCodeIsUnique(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let record = DeviceAuthorizationRecord(
                deviceCodeDigest: "dc-1", userCodeDigest: "uc-1", appID: "tv", scopes: ["openid"], createdAt: now, expiresAt: now.addingTimeInterval(600), interval: 5
            )
            #expect(try await database.store.insertDeviceAuthorization(record))
            // The same user code cannot be handed out twice while the first is stored.
            var twin = record
            twin.deviceCodeDigest = "dc-2"
            #expect(try await !other.insertDeviceAuthorization(twin))
            let stored = try #require(try await other.deviceAuthorization(userCodeDigest: "uc-1"))
            #expect(stored.deviceCodeDigest == "dc-1" && stored.version == 0 && stored.status == .pending && stored.interval == 5)
            // Eight approvals at once on two nodes: one wins.
            let wins = try await concurrently(8, on: [database.store, other]) { store, index in
                var approving = stored
                approving.status = .approved
                approving.accountID = "account-\(index)"
                return try await store.updateDeviceAuthorization(approving)
            }
            #expect(wins.filter { $0 }.count == 1)
            let approved = try #require(try await database.store.deviceAuthorization(deviceCodeDigest: "dc-1"))
            #expect(approved.status == .approved && approved.accountID?.hasPrefix("account-") == true && approved.version == 1)
            #expect(try await database.store.deleteExpiredDeviceAuthorizations(before: now.addingTimeInterval(601)) == 1)
            #expect(try await other.deviceAuthorization(deviceCodeDigest: "dc-1") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases) func auditEventsOfAnAppWithAWebhookQueueInOrderPerSubjectUnderLeases(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let store = database.store
            #expect(
                try await store.insertApp(
                    App(
                        id: "hooked", name: "H", policy: Policy(identityProviders: ["local"], webhook: WebhookPolicy(url: "https://h.example/hook")), createdAt: now,
                        updatedAt: now)))
            #expect(try await store.insertApp(App(id: "quiet", name: "Q", policy: Policy(identityProviders: ["local"]), createdAt: now, updatedAt: now)))
            // Only events of an app with a webhook, and never the webhook's own.
            for (index, subject) in ["a", "a", "b"].enumerated() {
                try await store.appendAudit(AuditEvent(time: now, type: "signin.success", appID: "hooked", accountID: subject, details: ["n": String(index)]))
            }
            try await store.appendAudit(AuditEvent(time: now, type: "signin.success", appID: "quiet", accountID: "a"))
            try await store.appendAudit(AuditEvent(time: now, type: "webhook.dead_letter", appID: "hooked"))
            try await store.appendAudit(AuditEvent(time: now, type: "admin.thing"))
            let due = try await other.dueOutboxItems(now: now, limit: 10)
            // a's second waits behind its first; b's goes at once.
            #expect(due.map(\.subject) == ["a", "b"] && due.allSatisfy { $0.appID == "hooked" && $0.kind == .event })
            let first = try #require(due.first)
            #expect(try JSONDecoder().decode(AuditEvent.self, from: Data(first.payload.utf8)).details["n"] == "0")
            // One node takes it; the other cannot while the lease runs; a's second cannot be taken at all.
            // (The results come back in the order the tasks finish: each names its own token.)
            let leases = try await concurrently(6, on: [store, other]) { node, index in
                (
                    token: "lease-\(index)",
                    won: try await node.leaseOutboxItem(id: first.id, until: self.now.addingTimeInterval(30), now: self.now, token: "lease-\(index)")
                )
            }
            #expect(leases.filter(\.won).count == 1)
            let holder = try #require(leases.first(where: \.won)?.token)
            let second = try #require(try await store.outboxItems(appID: "hooked", status: .pending, limit: 10).first { $0.subject == "a" && $0.id != first.id })
            #expect(try await !store.leaseOutboxItem(id: second.id, until: now.addingTimeInterval(30), now: now, token: "x"))
            #expect(try await store.dueOutboxItems(now: now, limit: 10).map(\.subject) == ["b"])
            // A late finish by a node whose lease is not the current one changes nothing.
            try await store.finishOutboxAttempt(id: first.id, token: "someone-else", delivered: true, nextAttemptAt: nil, dead: false, error: nil, now: now)
            #expect(try await store.outboxItems(appID: "hooked", status: .delivered, limit: 10).isEmpty)
            // A failed attempt waits for its retry, and a's second still waits behind it.
            try await other.finishOutboxAttempt(
                id: first.id, token: holder, delivered: false, nextAttemptAt: now.addingTimeInterval(5), dead: false, error: "HTTP 503", now: now)
            #expect(try await store.dueOutboxItems(now: now, limit: 10).map(\.subject) == ["b"])
            #expect(try await store.dueOutboxItems(now: now.addingTimeInterval(5), limit: 10).map(\.id).contains(first.id))
            // Given up: a's second is next; the dead one is listed, and replayed goes first again.
            #expect(try await store.leaseOutboxItem(id: first.id, until: now.addingTimeInterval(35), now: now.addingTimeInterval(5), token: "again"))
            try await store.finishOutboxAttempt(id: first.id, token: "again", delivered: false, nextAttemptAt: nil, dead: true, error: "HTTP 503", now: now)
            let next = try await store.dueOutboxItems(now: now, limit: 10)
            #expect(next.count == 2 && next.first?.subject == "a" && next.first?.id != first.id)
            let dead = try await other.outboxItems(appID: "hooked", status: .dead, limit: 10)
            #expect(dead.map(\.id) == [first.id] && dead.first?.attempts == 2 && dead.first?.lastError == "HTTP 503")
            #expect(try await store.replayOutboxItem(id: first.id, appID: "hooked", now: now))
            #expect(try await !store.replayOutboxItem(id: first.id, appID: "quiet", now: now))
            #expect(try await store.dueOutboxItems(now: now, limit: 10).first?.id == first.id)
            // Delivered: out of the queue, and purged later.
            #expect(try await store.leaseOutboxItem(id: first.id, until: now.addingTimeInterval(30), now: now, token: "third"))
            try await store.finishOutboxAttempt(id: first.id, token: "third", delivered: true, nextAttemptAt: nil, dead: false, error: nil, now: now)
            #expect(try await store.outboxItems(appID: "hooked", status: .delivered, limit: 10).map(\.id) == [first.id])
            #expect(try await store.deleteFinishedOutboxItems(deliveredBefore: now.addingTimeInterval(1), deadBefore: now) == 1)
            // A deleted app's deliveries go with it.
            #expect(try await store.deleteOutboxItems(appID: "hooked") == 2)
            try await store.enqueueOutbox(appID: "quiet", subject: "session:s", kind: .backchannelLogout, payload: "{}", now: now)
            #expect(try await other.dueOutboxItems(now: now, limit: 10).contains { $0.kind == .backchannelLogout && $0.appID == "quiet" })
        }
    }

    @Test(arguments: StoreKind.allCases) func revokingAnAppsGrantsKeepsOtherApps(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let owner = try await account(store)
            try await store.insertRefreshToken(refreshToken("a1", account: owner.id, app: "a"))
            try await store.insertRefreshToken(refreshToken("b1", family: "g", account: owner.id, app: "b"))
            try await store.insertAuthorizationCode(code("ca", account: owner.id, app: "a"))
            try await store.insertFlow(flow("fa", app: "a"))
            try await store.insertFlow(flow("fb", app: "b"))
            #expect(try await store.revokeGrants(appID: "a", now: now) == 1)
            #expect(try await store.refreshToken(digest: "a1")?.revokedAt == now)
            #expect(try await store.refreshToken(digest: "b1")?.revokedAt == nil)
            #expect(try await store.authorizationCode(digest: "ca") == nil)
            #expect(try await store.flow(id: "fa", now: now) == nil)
            #expect(try await store.flow(id: "fb", now: now) != nil)
        }
    }

    @Test(arguments: StoreKind.allCases) func signingKeysInsertRetireReplaceAndExpire(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let first = SigningKeyRecord(kid: "k1", algorithm: .es256, privateKeyPEM: "pem-1", createdAt: now)
            try await store.insertSigningKey(first)
            try await store.insertSigningKey(SigningKeyRecord(kid: "k1", algorithm: .rs256, privateKeyPEM: "other", createdAt: now))
            let second = SigningKeyRecord(
                kid: "k2", algorithm: .es256, privateKeyPEM: "pem-2", createdAt: now.addingTimeInterval(1), activatesAt: now.addingTimeInterval(20))
            try await store.insertSigningKey(second)
            try await store.retireSigningKeys(keeping: ["k2"], now: now.addingTimeInterval(20))
            let keys = try await store.signingKeys()
            #expect(keys.map(\.kid) == ["k1", "k2"])
            #expect(keys[0].privateKeyPEM == "pem-1" && keys[0].retiredAt == now.addingTimeInterval(20))
            #expect(keys[1].activatesAt == now.addingTimeInterval(20) && keys[1].retiredAt == nil)
            #expect(try await !store.replaceSigningKeyMaterial(kid: "k1", expected: "wrong", replacement: "sealed"))
            #expect(try await store.replaceSigningKeyMaterial(kid: "k1", expected: "pem-1", replacement: "sealed"))
            // A key of another rotation, waiting to sign later, is not retired by this one.
            try await store.insertSigningKey(
                SigningKeyRecord(kid: "k3", algorithm: .es256, privateKeyPEM: "pem-3", createdAt: now.addingTimeInterval(2), activatesAt: now.addingTimeInterval(30)))
            try await store.retireSigningKeys(keeping: ["k4"], now: now.addingTimeInterval(25))
            let later = try await store.signingKeys()
            #expect(later.first { $0.kid == "k2" }?.retiredAt == now.addingTimeInterval(25))
            #expect(later.first { $0.kid == "k3" }?.retiredAt == nil)
            #expect(try await store.deleteSigningKeys(retiredBefore: now.addingTimeInterval(21)) == 1)
            #expect(try await store.signingKeys().map(\.kid) == ["k2", "k3"])
            // A revoked key goes at once, whatever its state.
            #expect(try await store.deleteSigningKey(kid: "k3"))
            #expect(try await !store.deleteSigningKey(kid: "k3"))
            #expect(try await store.signingKeys().map(\.kid) == ["k2"])
        }
    }

    @Test(arguments: StoreKind.allCases) func revocationsKeepTheLatestAndExpire(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            try await store.insertRevocation(RevocationRecord(kind: .subject, value: "acc", revokedAt: now, expiresAt: now.addingTimeInterval(100)))
            try await store.insertRevocation(RevocationRecord(kind: .subject, value: "acc", revokedAt: now.addingTimeInterval(-5), expiresAt: now.addingTimeInterval(50)))
            try await store.insertRevocation(RevocationRecord(kind: .token, value: "jti", revokedAt: now, expiresAt: now.addingTimeInterval(10)))
            let active = try await store.activeRevocations(now: now.addingTimeInterval(20))
            #expect(active == [RevocationRecord(kind: .subject, value: "acc", revokedAt: now, expiresAt: now.addingTimeInterval(100))])
            #expect(try await store.deleteExpiredRevocations(now: now.addingTimeInterval(20)) == 1)
        }
    }

    // MARK: - Attempts

    @Test(arguments: StoreKind.allCases) func parallelGuessesOnTwoNodesCannotSlipPastTheLimit(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let results = try await concurrently(20, on: [database.store, other]) { store, _ in
                try await store.reserveAttempt(key: "acct", now: now, window: 60, threshold: 5, lockDuration: { _ in 300 })
            }
            #expect(results.filter { $0 == .allowed }.count == 5)
            #expect(results.filter { $0 == .lockedNow(until: now.addingTimeInterval(300)) }.count == 1)
            #expect(results.filter { $0 == .locked(until: now.addingTimeInterval(300)) }.count == 14)
            #expect(try await database.store.lockedCounters(now: now).map(\.key) == ["acct"])
            #expect(try await other.unlock(key: "acct"))
            #expect(try await !other.unlock(key: "acct"))
            #expect(try await database.store.attemptCounter(key: "acct")?.lockouts == 0)
        }
    }

    @Test(arguments: StoreKind.allCases) func failuresLockWhenDueAndClearOrReleaseOnSuccess(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            for _ in 0..<3 { _ = try await store.reserveAttempt(key: "k", now: now, window: 60, threshold: 10, lockDuration: { _ in 60 }) }
            try await store.releaseAttempt(key: "k")
            #expect(try await store.attemptCounter(key: "k")?.failures == 2)
            #expect(try await store.lockIfDue(key: "k", now: now, threshold: 3, lockDuration: { _ in 60 }) == nil)
            #expect(try await store.lockIfDue(key: "k", now: now, threshold: 2, lockDuration: { lockouts in 60 * Double(lockouts + 1) }) == now.addingTimeInterval(60))
            let locked = try #require(try await store.attemptCounter(key: "k"))
            #expect(locked.lockouts == 1 && locked.failures == 0 && locked.lockedUntil == now.addingTimeInterval(60))
            _ = try await store.reserveAttempt(key: "k2", now: now, window: 60, threshold: 10, lockDuration: { _ in 60 })
            try await store.clearFailures(key: "k2")
            #expect(try await store.attemptCounter(key: "k2")?.failures == 0)
            // Stale counters go; a live lock stays.
            #expect(try await store.deleteStaleCounters(before: now.addingTimeInterval(30)) == 1)
            #expect(try await store.attemptCounter(key: "k") != nil)
        }
    }

    @Test(arguments: StoreKind.allCases) func rateBucketsCountEveryEventOnceInFixedWindows(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let counts = try await concurrently(12, on: [database.store, other]) { store, _ in try await store.countEvent(key: "ip", now: now, window: 60) }
            #expect(counts.map(\.count).sorted() == Array(1...12))
            #expect(Set(counts.map(\.windowEnds)) == [now.addingTimeInterval(60)])
            let next = try await database.store.countEvent(key: "ip", now: now.addingTimeInterval(60), window: 60)
            #expect(next.count == 1 && next.windowEnds == now.addingTimeInterval(120))
        }
    }

    // MARK: - Audit

    @Test(arguments: StoreKind.allCases) func auditFiltersByTypeAppAccountAndTime(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            try await store.appendAudit(AuditEvent(time: now, type: "signin.success", appID: "a", accountID: "x"))
            try await store.appendAudit(AuditEvent(time: now.addingTimeInterval(10), type: "signin.failure", appID: "a", outcome: "invalid_credentials"))
            try await store.appendAudit(AuditEvent(time: now.addingTimeInterval(20), type: "signin.success", appID: "b", accountID: "y", details: ["via": "cli"]))
            #expect(try await store.auditEvents(type: "signin.success", appID: nil, accountID: nil, since: nil, limit: 10).map(\.appID) == ["b", "a"])
            #expect(try await store.auditEvents(type: nil, appID: "a", accountID: nil, since: now.addingTimeInterval(5), limit: 10).map(\.type) == ["signin.failure"])
            #expect(try await store.auditEvents(type: nil, appID: nil, accountID: "y", since: nil, limit: 10).first?.details == ["via": "cli"])
            #expect(try await store.auditEvents(type: nil, appID: nil, accountID: nil, since: nil, limit: 1).count == 1)
            // Events of the same instant come newest first too.
            try await store.appendAudit(AuditEvent(time: now.addingTimeInterval(20), type: "later", appID: "b"))
            #expect(try await store.auditEvents(type: nil, appID: "b", accountID: nil, since: nil, limit: 1).first?.type == "later")
            // A type ending in a dot is every type under it, matched as text (`_` and `%` are no wildcards).
            try await store.appendAudit(AuditEvent(time: now, type: "signin_x.other", appID: "c"))
            #expect(Set(try await store.auditEvents(AuditQuery(type: "signin.")).map(\.type)) == ["signin.success", "signin.failure"])
            #expect(try await store.auditEvents(AuditQuery(type: "signin_.")).isEmpty)
            #expect(try await store.auditEvents(AuditQuery(type: "signin%.")).isEmpty)
        }
    }

    // MARK: - Plugin data

    @Test(arguments: StoreKind.allCases) func pluginRecordsAreInsertOnceAndCompareAndSwap(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
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
            #expect(try await !store.deletePluginRecord(namespace: "a", key: "k", expectedVersion: record.version))
            #expect(try await store.deletePluginRecord(namespace: "a", key: "k", expectedVersion: record.version + 1))
            #expect(try await store.deletePluginRecord(namespace: "b", key: "k"))
            #expect(try await !store.deletePluginRecord(namespace: "b", key: "k"))

            // A writer holding the version of a record deleted since cannot replace the record
            // inserted after it under the same key: versions do not start over.
            #expect(try await store.insertPluginRecord(namespace: "c", key: "k", value: Data([7]), expiresAt: nil, now: now))
            let old = try #require(try await store.pluginRecord(namespace: "c", key: "k", now: now))
            #expect(try await store.deletePluginRecord(namespace: "c", key: "k"))
            #expect(try await store.insertPluginRecord(namespace: "c", key: "k", value: Data([8]), expiresAt: nil, now: now))
            #expect(try await !store.replacePluginRecord(namespace: "c", key: "k", value: Data([9]), expiresAt: nil, expectedVersion: old.version))
            #expect(try await store.pluginRecord(namespace: "c", key: "k", now: now)?.value == Data([8]))
        }
    }

    @Test(arguments: StoreKind.allCases) func aReplayKeyIsTakenOnceAcrossNodes(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let other = try await database.open()
            defer { try? other.close() }
            let wins = try await concurrently(16, on: [database.store, other]) { store, index in
                try await store.insertPluginRecord(namespace: "fsso", key: "jti:abc", value: Data([UInt8(index)]), expiresAt: now.addingTimeInterval(60), now: now)
            }
            #expect(wins.filter { $0 }.count == 1)
        }
    }

    @Test(arguments: StoreKind.allCases) func pluginRecordsMatchAKeyPrefixExactlyAndAValuePrefix(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            for key in ["jti:1", "jti:2", "key:a%b", "key:a_b", "key:axb", "keys", "user:é1", "user:é2", "zzz", "Zed"] {
                #expect(try await store.insertPluginRecord(namespace: "p", key: key, value: Data(key.utf8), expiresAt: nil, now: now))
            }
            #expect(try await store.insertPluginRecord(namespace: "other", key: "key:a%b", value: Data("gh-kek1:x".utf8), expiresAt: nil, now: now))
            func keys(_ prefix: String) async throws -> [String] { try await store.pluginRecords(namespace: "p", keyPrefix: prefix, now: now).map(\.key) }
            #expect(try await keys("key:") == ["key:a%b", "key:a_b", "key:axb"])
            // % and _ are not wildcards.
            #expect(try await keys("key:a%") == ["key:a%b"])
            #expect(try await keys("key:a_") == ["key:a_b"])
            #expect(try await keys("user:é") == ["user:é1", "user:é2"])
            // Byte order, whatever the database's locale: upper case before lower case.
            #expect(try await keys("") == ["Zed", "jti:1", "jti:2", "key:a%b", "key:a_b", "key:axb", "keys", "user:é1", "user:é2", "zzz"])
            #expect(try await keys("nope").isEmpty)
            let sealed = try await store.pluginRecords(valuePrefix: Data("gh-kek1:".utf8), now: now)
            #expect(sealed.map(\.namespace) == ["other"])
            #expect(try await store.deleteExpiredPluginRecords(now: now) == 0)
        }
    }

    // MARK: - Provisional identities

    @Test(arguments: StoreKind.allCases) func provisionalIdentitiesAreOnePerAddressAndAttachOnce(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let email = try #require(EmailAddress("ann@example.com"))
            let identity = ProvisionalIdentity(id: "p1", appID: "docs", email: email, grants: ["doc:1:read"], createdAt: now, createdBy: "app:docs")
            #expect(try await store.createProvisionalIdentity(identity).created)
            var twin = identity
            twin.id = "p2"
            let again = try await store.createProvisionalIdentity(twin)
            #expect(!again.created && again.identity.id == "p1")
            #expect(try await store.addProvisionalGrants(id: "p1", grants: ["doc:1:read", "doc:2:write"], groups: ["team"])?.grants == ["doc:1:read", "doc:2:write"])
            #expect(try await store.addProvisionalGrants(id: "none", grants: [], groups: []) == nil)
            let owner = try await account(store)
            #expect(try await store.attachProvisionalIdentity(id: "p1", accountID: owner.id, now: now))
            #expect(try await !store.attachProvisionalIdentity(id: "p1", accountID: owner.id, now: now))
            let attached = try await store.provisionalIdentities(accountID: owner.id)
            #expect(attached.map(\.id) == ["p1"] && attached[0].groups == ["team"] && attached[0].attachedAt == now)
            #expect(try await store.provisionalIdentity(id: "p1")?.email == email)
        }
    }

    // MARK: - Browser sessions

    func browserSession(_ id: String, account: String, cookie: String? = nil, apps: [String] = []) -> BrowserSession {
        BrowserSession(
            id: id, cookieDigest: cookie ?? "digest-\(id)", accountID: account, providers: ["local"], factors: [], methods: ["pwd", "local"], subject: "s-1",
            username: "s-1", authTime: now, createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(3600), appIDs: apps, clientIP: "10.0.0.1",
            userAgent: "Test/1"
        )
    }

    @Test(arguments: StoreKind.allCases) func browserSessionsAreFoundByCookieDigestSteppedUpAndEndedOnce(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let owner = try await account(store)
            try await store.insertBrowserSession(browserSession("sid-1", account: owner.id, cookie: "c1"))
            try await store.insertBrowserSession(browserSession("sid-2", account: owner.id, cookie: "c2"))
            #expect(try await store.browserSession(cookieDigest: "c1")?.id == "sid-1")
            #expect(try await store.browserSession(cookieDigest: "nope") == nil)
            try await store.recordBrowserSessionUse(id: "sid-1", appID: "notes", now: now.addingTimeInterval(5))
            try await store.recordBrowserSessionUse(id: "sid-1", appID: "notes", now: now.addingTimeInterval(6))
            try await store.recordBrowserSessionUse(id: "sid-1", appID: "admin", now: now.addingTimeInterval(7))
            var session = try #require(try await store.browserSession(id: "sid-1"))
            #expect(session.appIDs == ["admin", "notes"] && session.lastSeenAt == now.addingTimeInterval(7))
            // A step-up adds a factor and keeps the sign-in time; a new sign-in moves it and the cookie.
            #expect(
                try await store.updateBrowserSessionSignIn(
                    id: "sid-1", providers: ["local"], factors: ["email"], methods: ["pwd", "local", "otp", "email"], authTime: nil, cookieDigest: nil,
                    now: now.addingTimeInterval(8)
                ))
            session = try #require(try await store.browserSession(id: "sid-1"))
            #expect(session.factors == ["email"] && session.providers == ["local"] && session.authTime == now && session.methods.count == 4)
            #expect(
                try await store.updateBrowserSessionSignIn(
                    id: "sid-1", providers: ["ldap"], factors: [], methods: ["pwd", "ldap"], authTime: now.addingTimeInterval(9), cookieDigest: "c3",
                    now: now.addingTimeInterval(9)
                ))
            session = try #require(try await store.browserSession(cookieDigest: "c3"))
            #expect(session.providers == ["local", "ldap"] && session.factors.isEmpty && session.authTime == now.addingTimeInterval(9))
            #expect(try await store.browserSession(cookieDigest: "c1") == nil)
            // Refresh-token families of the session, with their scopes.
            var offline = refreshToken("rt-2", family: "f2", account: owner.id)
            offline.scopes = ["openid", "offline_access"]
            offline.sessionID = "sid-1"
            var online = refreshToken("rt-1", family: "f1", account: owner.id)
            online.sessionID = "sid-1"
            try await store.insertRefreshToken(online)
            try await store.insertRefreshToken(offline)
            try await store.insertRefreshToken(refreshToken("rt-3", family: "f3", account: owner.id))
            #expect(
                try await store.browserSessionTokenFamilies(sessionID: "sid-1") == [
                    SessionTokenFamily(familyID: "f1", scopes: ["openid"]), SessionTokenFamily(familyID: "f2", scopes: ["openid", "offline_access"]),
                ])
            #expect(try await store.refreshToken(digest: "rt-1")?.sessionID == "sid-1")
            // Ending is once; an ended session is no longer listed or updated.
            #expect(try await store.browserSessions(accountID: owner.id, now: now).map(\.id).sorted() == ["sid-1", "sid-2"])
            #expect(try await store.endBrowserSession(id: "sid-1", now: now.addingTimeInterval(10)))
            #expect(try await !store.endBrowserSession(id: "sid-1", now: now.addingTimeInterval(11)))
            #expect(try await store.browserSession(id: "sid-1")?.endedAt == now.addingTimeInterval(10))
            #expect(try await store.browserSessions(accountID: owner.id, now: now).map(\.id) == ["sid-2"])
            #expect(try await !store.updateBrowserSessionSignIn(id: "sid-1", providers: [], factors: [], methods: [], authTime: nil, cookieDigest: nil, now: now))
            #expect(try await store.revokeRefreshTokens(accountID: owner.id, now: now) == 3)
            #expect(try await store.deleteExpiredBrowserSessions(before: now.addingTimeInterval(10)) == 1)
            #expect(try await store.browserSession(id: "sid-1") == nil)
            // The account's deletion takes its sessions along.
            #expect(try await store.deleteAccount(id: owner.id))
            #expect(try await store.browserSession(id: "sid-2") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases) func revokingOneAppsTokensOfAnAccountLeavesItsOtherAppsAndPeopleAlone(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let owner = try await account(store)
            let other = try await account(store, "s-2")
            var used = refreshToken("rt-1", family: "f1", account: owner.id, app: "third")
            used.usedAt = now
            try await store.insertRefreshToken(used)
            try await store.insertRefreshToken(refreshToken("rt-2", family: "f1", account: owner.id, app: "third"))
            try await store.insertRefreshToken(refreshToken("rt-3", family: "f2", account: owner.id, app: "third"))
            try await store.insertRefreshToken(refreshToken("rt-4", family: "f3", account: owner.id, app: "notes"))
            try await store.insertRefreshToken(refreshToken("rt-5", family: "f4", account: other.id, app: "third"))
            try await store.insertAuthorizationCode(code("c-mine", account: owner.id, app: "third"))
            try await store.insertAuthorizationCode(code("c-theirs", account: other.id, app: "third"))
            // A code redeemed this instant, its tokens not written yet: its family is answered too.
            try await store.insertAuthorizationCode(code("c-redeemed", account: owner.id, app: "third"))
            #expect(
                try await store.redeemAuthorizationCode(
                    digest: "c-redeemed", now: now, familyID: "f9", accessTokenID: "j9", accessTokenExpiresAt: now.addingTimeInterval(60)))
            let revoked = try await store.revokeRefreshTokens(accountID: owner.id, appID: "third", now: now)
            #expect(revoked.families == ["f1", "f2"] && revoked.redeemedCodeFamilies == ["f9"])
            #expect(try await store.authorizationCode(digest: "c-mine") == nil, "a code not yet redeemed goes too")
            #expect(try await store.authorizationCode(digest: "c-theirs") != nil)
            for digest in ["rt-1", "rt-2", "rt-3"] { #expect(try await store.refreshToken(digest: digest)?.revokedAt == now, "\(digest)") }
            for digest in ["rt-4", "rt-5"] { #expect(try await store.refreshToken(digest: digest)?.revokedAt == nil, "\(digest)") }
            // Nothing live is left to revoke (the redeemed code's family is answered until the code is purged).
            let again = try await store.revokeRefreshTokens(accountID: owner.id, appID: "third", now: now)
            #expect(again.families.isEmpty && again.redeemedCodeFamilies == ["f9"])
        }
    }

    @Test(arguments: StoreKind.allCases) func codesKeepTheSessionTheyWereIssuedIn(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let owner = try await account(store)
            var record = code("c-1", account: owner.id)
            record.sessionID = "sid-9"
            try await store.insertAuthorizationCode(record)
            #expect(try await store.authorizationCode(digest: "c-1")?.sessionID == "sid-9")
        }
    }

    // MARK: - Copying between the databases

    /// Fills every table, copies SQLite into PostgreSQL and back into a second SQLite, and reads
    /// everything back through the store protocols.
    @Test func storageCopyMovesEveryTableToPostgreSQLAndBack() async throws {
        try await TestDatabase.with(.sqlite) { original in
            let store = original.store
            _ = try await store.insertApp(
                App(
                    id: "notes", name: "Notes", secretDigest: "digest", redirectURIs: ["https://n/cb"], policy: Policy(identityProviders: ["local"]), createdAt: now,
                    updatedAt: now, disabled: true))
            let owner = try await account(store)
            _ = try await store.addIdentityLink(
                ExternalIdentity(providerID: "email", subject: "e", username: "e", claims: IdentityClaims(email: "e@x.example")), accountID: owner.id, now: now)
            try await store.insertFlow(flow())
            try await store.insertRefreshToken(refreshToken("rt", account: owner.id))
            try await store.insertSigningKey(
                SigningKeyRecord(kid: "k", algorithm: .rs256, privateKeyPEM: "gh-kek1:sealed", createdAt: now, activatesAt: now.addingTimeInterval(20)))
            for index in 0..<3 { try await store.appendAudit(AuditEvent(time: now, type: "event-\(index)")) }
            _ = try await store.insertPluginRecord(namespace: "p", key: "bytes", value: Data([0, 255, 1]), expiresAt: nil, now: now)
            try await store.insertAuthorizationCode(code("c", account: owner.id))
            try await store.insertRevocation(RevocationRecord(kind: .family, value: "f", revokedAt: now, expiresAt: now.addingTimeInterval(60)))
            _ = try await store.reserveAttempt(key: "acct", now: now, window: 60, threshold: 5, lockDuration: { _ in 60 })
            try await insertWhatAnAppsDevicesAndSessionsHold(store, owner: owner)
            #expect(try await store.insertScimClient(ScimClientRecord(id: "entra", name: "Entra", tokenDigest: "d", createdAt: now, createdBy: "t")))
            let provisioned = Account(id: "acct-scim", username: "ada", createdAt: now)
            #expect(
                try await store.insertScimResource(
                    ScimResourceRecord(
                        id: "u1", clientID: "entra", kind: .user, name: "ada", externalID: "x", accountID: provisioned.id, active: false,
                        attributes: ["userName": "ada"], members: [], version: 3, createdAt: now, updatedAt: now), account: provisioned))
            #expect(
                try await store.insertScimResource(
                    ScimResourceRecord(
                        id: "g1", clientID: "entra", kind: .group, name: "Engineering", externalID: nil, accountID: nil, active: true, attributes: [:],
                        members: ["u1"], version: 1, createdAt: now, updatedAt: now), account: nil))
            let counts = try await store.rowCounts()
            #expect(counts.values.allSatisfy { $0 > 0 }, "\(counts.filter { $0.value == 0 })")

            try await TestDatabase.with(.postgres) { middle in
                let copied = try await StoreCopy.copy(from: store, to: middle.store, replace: false)
                #expect(copied.count == StoreTable.allCases.count)
                #expect(copied.allSatisfy { $0.matches })
                // A second copy into the now filled database is refused, unless told to replace.
                let refused = await thrownError(StoreCopy.Refusal.self) { _ = try await StoreCopy.copy(from: store, to: middle.store, replace: false) }
                #expect(refused?.description.contains("is not empty") == true)
                let replaced = try await StoreCopy.copy(from: store, to: middle.store, replace: true)
                #expect(replaced.allSatisfy { $0.matches })
                let app = try await store.app(id: "notes")
                let token = try await store.refreshToken(digest: "rt")
                let keys = try await store.signingKeys()
                let code = try await store.authorizationCode(digest: "c")
                let counter = try await store.attemptCounter(key: "acct")
                let provisional = try await store.provisionalIdentity(id: "pi")
                let session = try await store.browserSession(id: "sid-1")
                let scimUser = try await store.scimResource(id: "u1", clientID: "entra", kind: .user)
                let scimGroup = try await store.scimResource(id: "g1", clientID: "entra", kind: .group)
                try await TestDatabase.with(.sqlite) { back in
                    let returned = try await StoreCopy.copy(from: middle.store, to: back.store, replace: false)
                    #expect(returned.allSatisfy { $0.matches })
                    for copy in [middle.store, back.store] {
                        #expect(try await copy.rowCounts() == counts)
                        #expect(try await copy.app(id: "notes") == app)
                        #expect(try await copy.identityLinks(accountID: owner.id).count == 2)
                        #expect(try await copy.refreshToken(digest: "rt") == token)
                        #expect(try await copy.signingKeys() == keys)
                        #expect(
                            try await copy.auditEvents(type: nil, appID: nil, accountID: nil, since: nil, limit: 10).map(\.type) == ["event-2", "event-1", "event-0"])
                        #expect(try await copy.pluginRecord(namespace: "p", key: "bytes", now: now)?.value == Data([0, 255, 1]))
                        #expect(try await copy.authorizationCode(digest: "c") == code)
                        #expect(try await copy.attemptCounter(key: "acct") == counter)
                        #expect(try await copy.provisionalIdentity(id: "pi") == provisional)
                        #expect(try await copy.flow(id: "flow-1", now: now)?.appID == "notes")
                        #expect(try await copy.activeRevocations(now: now).count == 1)
                        #expect(try await copy.browserSession(id: "sid-1") == session)
                        #expect(try await copy.deviceAuthorization(userCodeDigest: "uc")?.deviceCodeDigest == "dc")
                        #expect(try await copy.scimResource(id: "u1", clientID: "entra", kind: .user) == scimUser)
                        #expect(try await copy.scimResource(id: "g1", clientID: "entra", kind: .group) == scimGroup)
                        #expect(try await copy.scimGroupNames(accountID: "acct-scim") == ["Engineering"])
                        #expect(try await copy.scimClient(tokenDigest: "d")?.id == "entra")
                    }
                }
            }
        }
    }

    @Test(arguments: StoreKind.allCases) func storageCopyRefusesToCopyADatabaseOntoItself(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let same = try await database.open()
            defer { try? same.close() }
            _ = try await database.store.insertApp(App(id: "a", name: "A", policy: Policy(identityProviders: ["local"]), createdAt: now, updatedAt: now))
            let refused = await thrownError(StoreCopy.Refusal.self) { _ = try await StoreCopy.copy(from: database.store, to: same, replace: true) }
            #expect(refused?.description.contains("the same database") == true)
            #expect(try await database.store.count(table: .apps) == 1)
        }
    }

    @Test func postgresURLsAreReadAndWeakTLSIsRefusedInProductionForARemoteDatabase() throws {
        let local = try PostgresSettings(url: "postgres://gh:p%40ss@127.0.0.1:6543/broker")
        #expect(local.user == "gh" && local.password == "p@ss" && local.port == 6543 && local.database == "broker" && local.tls == .disable)
        #expect(!local.description.contains("p@ss") && !local.summary.contains("p@ss"))
        let remote = try PostgresSettings(url: "postgresql://gh:secret@db.internal/broker")
        #expect(remote.tls == .verifyFull && remote.port == 5432)
        #expect(remote.issues(in: .production, path: "storage.postgres").isEmpty)
        for mode in ["disable", "require"] {
            let weak = try PostgresSettings(url: "postgres://gh:secret@db.internal/broker?sslmode=\(mode)")
            #expect(weak.issues(in: .production, path: "storage.postgres").map(\.path) == ["storage.postgres.tls"])
            #expect(weak.issues(in: .development, path: "storage.postgres").isEmpty)
        }
        #expect(local.issues(in: .production, path: "storage.postgres").isEmpty)
        for bad in [
            "mysql://a@b/c", "postgres://db.internal/broker", "postgres://gh@db.internal/", "postgres://gh@db.internal/b?pool=5",
            "postgres://gh@db.internal/b?sslmode=maybe",
        ] {
            #expect(throws: PostgresURLError.self) { _ = try PostgresSettings(url: bad) }
        }
    }

    @Test(arguments: StoreKind.allCases) func pingAndScrubWork(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            try await database.store.ping()
            try await database.store.insertSigningKey(SigningKeyRecord(kid: "k", algorithm: .es256, privateKeyPEM: "x", createdAt: now))
            try await database.store.scrubReplacedData()
            #expect(try await database.store.signingKeys().count == 1)
        }
    }

    // MARK: - Devices

    func signInKey(_ id: String, installation: String, vendor: String?, app: String = "notes") -> NewSignInKey {
        NewSignInKey(
            keyID: id, publicKey: ["kty": "EC", "x": .string(id)], thumbprint: id, algorithm: "ES256",
            device: DeviceFacts(installationID: installation, vendorID: vendor, platform: .android, model: "Pixel 9", alias: "Pixel")
        )
    }

    @Test(arguments: StoreKind.allCases) func devicesKeepInstallationsApartAndAReinstallRetiresTheOldOne(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let ada = try await account(store, "ada")
            let bob = try await account(store, "bob")
            let first = try await store.registerSignInKey(
                signInKey("k1", installation: "inst-1", vendor: "v1"), accountID: ada.id, appID: "notes", providerID: "device", now: now)
            #expect(first.newDevice && first.retiredKeyIDs.isEmpty)
            _ = try await store.addIdentityLink(ExternalIdentity(providerID: "device", subject: "k1", username: "d"), accountID: ada.id, now: now)
            try await store.insertRefreshToken(
                RefreshTokenRecord(
                    digest: "r1", familyID: "f1", accountID: ada.id, appID: "notes", scopes: [], issuedAt: now, expiresAt: now.addingTimeInterval(60), authTime: now,
                    signInKeyID: "k1", dpopJKT: "jkt"
                ))
            #expect(try await store.refreshToken(digest: "r1")?.dpopJKT == "jkt")
            // A second key from the same installation, and another account on the same hardware.
            let second = try await store.registerSignInKey(
                signInKey("k2", installation: "inst-1", vendor: "v1"), accountID: ada.id, appID: "notes", providerID: "device", now: now)
            #expect(!second.newDevice && second.device.id == first.device.id && second.installation.id == first.installation.id)
            let other = try await store.registerSignInKey(
                signInKey("k3", installation: "inst-1", vendor: "v1"), accountID: bob.id, appID: "notes", providerID: "device", now: now)
            #expect(other.newDevice && other.device.id != first.device.id)
            #expect(try await store.devices(accountID: bob.id).flatMap(\.keys).map(\.id) == ["k3"])
            // The same public key twice is refused, and nothing of that registration stays.
            let taken = await thrownError {
                _ = try await store.registerSignInKey(
                    signInKey("k1", installation: "inst-9", vendor: "v9"), accountID: bob.id, appID: "notes", providerID: "device", now: now)
            }
            #expect(taken?.code == .invalidKey)
            #expect(try await store.devices(accountID: bob.id).count == 1)
            // Counters only grow.
            #expect(try await store.recordSignInKeyUse(id: "k2", counter: 3, now: now))
            #expect(try await !store.recordSignInKeyUse(id: "k2", counter: 3, now: now))
            #expect(try await store.signInKey(id: "k2")?.counter == 3)
            // Each key tells which app it was registered through (its installation's).
            #expect(try await store.signInKey(id: "k2")?.registeredAppID == "notes")
            #expect(try await store.devices(accountID: ada.id).flatMap(\.keys).allSatisfy { $0.registeredAppID == "notes" })
            // A reinstall (same vendor id, new installation id) retires the old installation's keys,
            // their identity links and refresh tokens.
            let reinstall = try await store.registerSignInKey(
                signInKey("k4", installation: "inst-2", vendor: "v1"), accountID: ada.id, appID: "notes", providerID: "device", now: now)
            #expect(Set(reinstall.retiredKeyIDs) == ["k1", "k2"])
            #expect(try await store.signInKey(id: "k1") == nil)
            #expect(try await store.identityLink(providerID: "device", subject: "k1") == nil)
            #expect(try await store.refreshToken(digest: "r1")?.revokedAt != nil)
            #expect(try await store.devices(accountID: ada.id).first?.installations.map(\.installationID) == ["inst-2"])
            // Another app on the same device is another installation, not a reinstall.
            let otherApp = try await store.registerSignInKey(
                signInKey("k5", installation: "inst-3", vendor: "v1", app: "vault"), accountID: ada.id, appID: "vault", providerID: "device", now: now)
            #expect(otherApp.retiredKeyIDs.isEmpty)
            // Renaming and removing only reach the owner's device.
            #expect(try await !store.renameDevice(id: first.device.id, accountID: bob.id, alias: "mine"))
            #expect(try await store.renameDevice(id: first.device.id, accountID: ada.id, alias: "Work"))
            #expect(try await store.removeDevice(id: first.device.id, accountID: bob.id, now: now) == nil)
            #expect(Set(try await store.removeDevice(id: first.device.id, accountID: ada.id, now: now) ?? []) == ["k4", "k5"])
            #expect(try await store.devices(accountID: ada.id).isEmpty)
            // Deleting an account deletes its devices.
            #expect(try await store.deleteAccount(id: bob.id))
            #expect(try await store.signInKey(id: "k3") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases) func installationsAreFoundAcrossAccountsAndRemovedOneByOne(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let ada = try await account(store, "ada")
            let bob = try await account(store, "bob")
            var facts = signInKey("k1", installation: "inst-1", vendor: "v1")
            facts.device.pushToken = "apns-token-1"
            facts.device.biometric = true
            let first = try await store.registerSignInKey(facts, accountID: ada.id, appID: "notes", providerID: "device", now: now)
            #expect(first.installation.pushToken == "apns-token-1" && first.installation.biometric == true)
            _ = try await store.registerSignInKey(
                signInKey("k2", installation: "inst-1", vendor: "v1"), accountID: bob.id, appID: "notes", providerID: "device", now: now)
            _ = try await store.registerSignInKey(
                signInKey("k3", installation: "inst-1", vendor: "v1", app: "vault"), accountID: bob.id, appID: "vault", providerID: "device", now: now)
            // One installation id of one app, active for two accounts; another app's is apart.
            let found = try await store.installations(appID: "notes", installationID: "inst-1")
            #expect(Set(found.map(\.accountID)) == [ada.id, bob.id])
            #expect(found.first { $0.accountID == ada.id }?.pushToken == "apns-token-1")
            #expect(try await store.installations(appID: "notes", installationID: "inst-9").isEmpty)
            // A newer push token replaces the old one on the same installation.
            var again = signInKey("k4", installation: "inst-1", vendor: "v1")
            again.device.pushToken = "apns-token-2"
            #expect(try await store.registerSignInKey(again, accountID: ada.id, appID: "notes", providerID: "device", now: now).installation.pushToken == "apns-token-2")
            try await store.insertRefreshToken(
                RefreshTokenRecord(
                    digest: "r1", familyID: "f1", accountID: ada.id, appID: "notes", scopes: [], issuedAt: now, expiresAt: now.addingTimeInterval(60), authTime: now,
                    signInKeyID: "k1", installation: "digest-1"
                ))
            #expect(try await store.refreshToken(digest: "r1")?.installation == "digest-1")
            // Removing reaches only the owner's installation, with its keys and their tokens.
            #expect(try await store.removeInstallation(id: first.installation.id, accountID: bob.id, now: now) == nil)
            #expect(Set(try await store.removeInstallation(id: first.installation.id, accountID: ada.id, now: now) ?? []) == ["k1", "k4"])
            #expect(try await store.signInKey(id: "k1") == nil)
            #expect(try await store.refreshToken(digest: "r1")?.revokedAt != nil)
            #expect(try await store.installations(appID: "notes", installationID: "inst-1").map(\.accountID) == [bob.id])
        }
    }

    @Test(arguments: StoreKind.allCases) func anAccountKeepsItsConfirmedProfile(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let ada = try await account(store, "ada")
            #expect(ada.profile == nil && !ada.profilePending)
            #expect(try await store.updateAccountProfile(id: ada.id, profile: nil, pending: true))
            #expect(try await store.account(id: ada.id)?.profilePending == true)
            let profile = AccountProfile(name: "Ada L.", email: EmailAddress("ada@example.com"), emailVerified: true, picture: "https://example.com/ada.png")
            #expect(try await store.updateAccountProfile(id: ada.id, profile: profile, pending: false))
            let stored = try await store.account(id: ada.id)
            #expect(stored?.profile == profile && stored?.profilePending == false)
            #expect(try await !store.updateAccountProfile(id: "nobody", profile: profile, pending: false))
        }
    }

    @Test(arguments: StoreKind.allCases) func aDisabledAccountKeepsWhenItWasFirstDisabledUntilEnabled(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let ada = try await account(store, "ada")
            #expect(ada.disabledAt == nil)
            let first = Date(timeIntervalSince1970: 1_800_000_000)
            #expect(try await store.setAccountDisabled(id: ada.id, at: first, by: "scim:entra"))
            #expect(try await store.setAccountDisabled(id: ada.id, at: first.addingTimeInterval(30), by: "scim:okta"))
            #expect(try await store.account(id: ada.id)?.disabledAt == first, "a second disable keeps the first time")
            #expect(try await store.account(id: ada.id)?.disabledBy == "scim:entra", "and who disabled it first")
            #expect(try await store.setAccountDisabled(id: ada.id, at: first.addingTimeInterval(60), by: "admin"))
            #expect(try await store.account(id: ada.id)?.disabledAt == first)
            #expect(try await store.account(id: ada.id)?.disabledBy == "admin", "an administrator's disable takes it over")
            // Every read of an account carries the state: the one a returning sign-in makes too.
            #expect(try await store.linkedAccount(providerID: "local", subject: "ada")?.disabledAt == first)
            #expect(try await store.accounts(limit: 10, offset: 0).first { $0.id == ada.id }?.disabledAt == first)
            #expect(try await store.setAccountDisabled(id: ada.id, at: nil, by: nil))
            #expect(try await store.account(id: ada.id)?.disabledAt == nil)
            #expect(try await store.account(id: ada.id)?.disabledBy == nil)
            #expect(try await !store.setAccountDisabled(id: "nobody", at: first, by: "admin"))
        }
    }

    @Test(arguments: StoreKind.allCases) func scimResourcesAreScopedVersionedAndUniqueByUserName(_ kind: StoreKind) async throws {
        try await TestDatabase.with(kind) { database in
            let store = database.store
            let client = ScimClientRecord(id: "entra", name: "Entra ID", tokenDigest: "d1", createdAt: now, createdBy: "test")
            #expect(try await store.insertScimClient(client))
            #expect(try await !store.insertScimClient(ScimClientRecord(id: "entra", name: "again", tokenDigest: "d2", createdAt: now, createdBy: "test")))
            #expect(try await store.insertScimClient(ScimClientRecord(id: "okta", name: "Okta", tokenDigest: "d3", createdAt: now, createdBy: "test")))
            #expect(try await store.scimClient(tokenDigest: "d1")?.id == "entra")
            #expect(try await store.scimClient(tokenDigest: "nope") == nil)
            #expect(try await store.replaceScimClientToken(id: "okta", tokenDigest: "d4"))
            #expect(try await store.scimClient(tokenDigest: "d3") == nil)
            #expect(try await store.scimClient(tokenDigest: "d4")?.id == "okta")
            #expect(try await !store.replaceScimClientToken(id: "nobody", tokenDigest: "d5"))

            func user(_ id: String, _ name: String, client: String = "entra", external: String? = nil) -> (ScimResourceRecord, Account) {
                let account = Account(id: "acct-\(id)", username: name, createdAt: now)
                return (
                    ScimResourceRecord(
                        id: id, clientID: client, kind: .user, name: name, externalID: external, accountID: account.id, active: true,
                        attributes: ["userName": .string(name)], members: [], version: 1, createdAt: now, updatedAt: now), account
                )
            }
            let (ada, adaAccount) = user("u1", "Ada@Example.com", external: "oid-1")
            #expect(try await store.insertScimResource(ada, account: adaAccount))
            #expect(try await store.account(id: adaAccount.id)?.username == "Ada@Example.com")
            // userName ignores case within a client; the refused insert leaves no account behind.
            let (twin, twinAccount) = user("u2", "ada@example.COM")
            #expect(try await !store.insertScimResource(twin, account: twinAccount))
            #expect(try await store.account(id: twinAccount.id) == nil)
            // Another client may have the same name.
            let (other, otherAccount) = user("u3", "ada@example.com", client: "okta")
            #expect(try await store.insertScimResource(other, account: otherAccount))
            #expect(try await store.scimResources(clientID: "entra", kind: .user).map(\.id) == ["u1"])
            #expect(try await store.scimResource(id: "u1", clientID: "okta", kind: .user) == nil, "one client never sees another's")
            #expect(Set(try await store.scimUsers(matching: .userName, value: "ADA@example.com").map(\.id)) == ["u1", "u3"])
            #expect(try await store.scimUsers(matching: .externalId, value: "oid-1").map(\.id) == ["u1"])
            #expect(try await store.scimUsers(matching: .externalId, value: "OID-1").isEmpty)
            #expect(try await store.scimUsers(accountID: adaAccount.id).map(\.id) == ["u1"])

            var renamed = ada
            renamed.name = "ada.lovelace@example.com"
            renamed.active = false
            #expect(try await store.replaceScimResource(renamed, expectedVersion: 1) == .written)
            #expect(try await store.replaceScimResource(renamed, expectedVersion: 1) == .versionMismatch)
            let stored = try #require(try await store.scimResource(id: "u1", clientID: "entra", kind: .user))
            #expect(stored.version == 2 && stored.name == "ada.lovelace@example.com" && !stored.active)

            let (bob, bobAccount) = user("u4", "bob")
            #expect(try await store.insertScimResource(bob, account: bobAccount))
            var clash = bob
            clash.name = "ADA.LOVELACE@example.com"
            #expect(try await store.replaceScimResource(clash, expectedVersion: 1) == .nameTaken)
            let group = ScimResourceRecord(
                id: "g1", clientID: "entra", kind: .group, name: "Engineering", externalID: nil, accountID: nil, active: true, attributes: [:],
                members: ["u1", "u4"], version: 1, createdAt: now, updatedAt: now)
            #expect(try await store.insertScimResource(group, account: nil))
            // Groups' names need not be unique.
            var second = group
            second.id = "g2"
            second.members = ["u4"]
            #expect(try await store.insertScimResource(second, account: nil))
            let deleted = try await store.deleteScimResource(id: "u4", clientID: "entra", kind: .user, now: now)
            #expect(deleted?.accountID == bobAccount.id)
            let groups = try await store.scimResources(clientID: "entra", kind: .group)
            #expect(groups.map(\.members) == [["u1"], []], "a deleted user leaves its groups")
            #expect(try await store.scimGroupNames(accountID: adaAccount.id) == ["Engineering"])
            #expect(try await store.scimGroupNames(accountID: bobAccount.id).isEmpty)
            #expect(groups.allSatisfy { $0.version == 2 })
            #expect(try await store.account(id: bobAccount.id) != nil, "the account stays")
            #expect(try await store.replaceScimResource(bob, expectedVersion: 1) == .gone)

            #expect(try await store.deleteScimClient(id: "entra"))
            #expect(try await store.scimResources(clientID: "entra", kind: .user).isEmpty)
            #expect(try await store.account(id: adaAccount.id) != nil)
            #expect(try await !store.deleteScimClient(id: "entra"))
        }
    }
}
