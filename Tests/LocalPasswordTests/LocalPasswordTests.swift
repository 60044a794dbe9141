import Foundation
import GatehouseCore
import GatehouseTesting
import LocalPassword
import Testing

/// The `local` plugin, driven through the core's real flow engine.
@Suite("LocalPassword")
struct LocalPasswordTests {
    static let yaml = """
        providers:
          - id: local
            type: local
            config:
              bcryptCost: 4
        apps:
          - id: notes
            policy:
              identityProviders: [local]
              selfRegistration: true
              passwordPolicy:
                minLength: 10
                denyList: [notes-app-password]
          - id: closed
            policy:
              identityProviders: [local]
        """

    static func broker() async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        return try await TestBroker.make(yaml: yaml, registry: registry)
    }

    func register(_ test: TestBroker, _ username: String, _ password: String, app: String = "notes") async throws -> (tokens: IssuedTokens, account: Account?) {
        try await test.signIn(FlowRequest(appID: app, providerID: "local", purpose: .register), answer: ["username": .string(username), "password": .string(password)])
    }

    func signIn(_ test: TestBroker, _ username: String, _ password: String) async throws -> (tokens: IssuedTokens, account: Account?) {
        try await test.signIn(FlowRequest(appID: "notes", providerID: "local"), answer: ["username": .string(username), "password": .string(password)])
    }

    func errorCode(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let error as BrokerError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    @Test func registersThenSignsInWithThePassword() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let registered = try await register(test, "Alice", "correct horse battery")
        #expect(registered.account?.username == "alice")
        let signedIn = try await signIn(test, "ALICE", "correct horse battery")
        #expect(signedIn.account?.id == registered.account?.id)
        let claims = try await test.broker.keyring.verify(signedIn.tokens.accessToken)
        #expect(claims.amr == ["pwd", "local"])
        #expect(claims.idp == "local")
    }

    @Test func storesOnlyABcryptHash() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        _ = try await register(test, "alice", "correct horse battery")
        let record = try #require(try await test.store.pluginRecord(namespace: "local", key: "user:alice", now: test.clock.now))
        let text = String(decoding: record.value, as: UTF8.self)
        #expect(!text.contains("correct horse battery"))
        #expect(text.contains("$2b$04$"))
    }

    @Test func refusesWrongPasswordAndUnknownUserAlike() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        _ = try await register(test, "alice", "correct horse battery")
        let wrong = await errorCode { _ = try await signIn(test, "alice", "correct horse battery!") }
        let unknown = await errorCode { _ = try await signIn(test, "mallory", "correct horse battery") }
        #expect(wrong == "invalid_credentials")
        #expect(unknown == wrong)
    }

    @Test func refusesEmptyPassword() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        _ = try await register(test, "alice", "correct horse battery")
        #expect(await errorCode { _ = try await signIn(test, "alice", "") } == "invalid_credentials")
    }

    @Test func wrongPasswordsCloseTheFlowAfterTheLimit() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        _ = try await register(test, "alice", "correct horse battery")
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "local"))
        var codes: [String?] = []
        for _ in 1...5 {
            codes.append(await errorCode { _ = try await test.finish(started.flowID, answer: ["username": "alice", "password": "guess-guess-guess"]) })
        }
        #expect(codes == Array(repeating: "invalid_credentials", count: 4) + ["too_many_attempts"])
        let afterwards = await errorCode { _ = try await test.finish(started.flowID, answer: ["username": "alice", "password": "correct horse battery"]) }
        #expect(afterwards == "flow_not_found")
    }

    @Test func refusesTakenUsernameCaseInsensitively() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        _ = try await register(test, "alice", "correct horse battery")
        #expect(await errorCode { _ = try await register(test, "ALICE", "another good password") } == "username_taken")
        #expect(try await test.store.count(table: .accounts) == 1)
    }

    @Test func registrationAppliesTheAppsPasswordPolicy() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        #expect(await errorCode { _ = try await register(test, "bob", "short-pw1") } == "password_too_short")
        #expect(await errorCode { _ = try await register(test, "bob", "notes-app-password") } == "password_denied")
        #expect(await errorCode { _ = try await register(test, "bob", "bob-the-builder") } == "password_contains_username")
        #expect(await errorCode { _ = try await register(test, "bo b", "correct horse battery") } == "invalid_username")
        #expect(try await test.store.count(table: .accounts) == 0)
        #expect(try await test.store.count(table: .pluginData) == 0)
    }

    @Test func registrationNeedsSelfRegistration() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        #expect(await errorCode { _ = try await register(test, "bob", "correct horse battery", app: "closed") } == "registration_disabled")
    }

    @Test func administratorsManageUsers() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let provider = try #require(test.broker.plugins.all["local"] as? any PasswordUserManaging)
        let subject = try await provider.addUser(username: "carol", password: "a fine long password", policy: PasswordPolicy())
        #expect(try await provider.listUsers().map(\.username) == ["carol"])
        let signedIn = try await signIn(test, "carol", "a fine long password")
        #expect(signedIn.account?.username == "carol")
        #expect(try await provider.removeUser(username: "carol") == subject)
        #expect(await errorCode { _ = try await signIn(test, "carol", "a fine long password") } == "invalid_credentials")
        #expect(try await provider.removeUser(username: "carol") == nil)
    }

    @Test func concurrentRegistrationsOfOneUsernameCreateOneUser() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let codes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<10 {
                group.addTask { await errorCode { _ = try await register(test, "dave", "correct horse battery") } ?? "ok" }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(codes.filter { $0 == "ok" }.count == 1)
        #expect(codes.filter { $0 == "username_taken" }.count == 9)
        #expect(try await test.store.count(table: .accounts) == 1)
    }
}
