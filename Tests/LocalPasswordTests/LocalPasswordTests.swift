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

    static func broker(yaml: String = yaml, temporary: TemporaryStore? = nil, clock: TestClock = TestClock()) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        return try await TestBroker.make(yaml: yaml, registry: registry, temporary: temporary, clock: clock)
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
        let provider = try #require(test.broker.plugins.passwordKeepers["local"])
        let subject = try await provider.addUser(username: "carol", password: "a fine long password", policy: PasswordPolicy())
        #expect(try await provider.listUsers().map(\.username) == ["carol"])
        let signedIn = try await signIn(test, "carol", "a fine long password")
        #expect(signedIn.account?.username == "carol")
        let rechecking = try #require(test.broker.plugins.recheckers["local"])
        #expect(try await rechecking.recheck(subject: subject) == .valid(freshClaims: nil))
        #expect(try await provider.removeUser(username: "carol") == subject)
        // Her refresh tokens stop working: the provider no longer vouches for her.
        #expect(try await rechecking.recheck(subject: subject) == .refused(reason: "identity_refused"))
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

// MARK: - Lockouts and rate limits (through the real engine and store)

extension LocalPasswordTests {
    static let lockoutYAML = """
        providers:
          - id: local
            type: local
            config:
              bcryptCost: 4
        apps:
          - id: notes
            policy:
              identityProviders: [local]
              lockout:
                maxFailedAttemptsPerFlow: 5
                maxFailedAttemptsPerAccount: 3
                maxFailedAttemptsPerIP: 6
                failureWindow: 10m
                lockoutDuration: 1m
                maxLockoutDuration: 3m
                maxFlowStartsPerIPPerMinute: 20
        """

    static func lockoutBroker() async throws -> TestBroker {
        let test = try await broker(yaml: lockoutYAML)
        let provider = try #require(test.broker.plugins.passwordKeepers["local"])
        _ = try await provider.addUser(username: "alice", password: "correct horse battery", policy: PasswordPolicy())
        return test
    }

    func attempt(_ test: TestBroker, _ username: String, _ password: String, ip: String? = nil) async -> BrokerError? {
        do {
            _ = try await test.signIn(
                FlowRequest(appID: "notes", providerID: "local", clientIP: ip), answer: ["username": .string(username), "password": .string(password)])
            return nil
        } catch let error as BrokerError {
            return error
        } catch {
            return BrokerError.internalFailure("\(error)")
        }
    }

    @Test func locksAnAccountAfterRepeatedFailuresAcrossFlows() async throws {
        let test = try await Self.lockoutBroker()
        defer { test.temporary.remove() }
        #expect(await attempt(test, "alice", "wrong one 1")?.code == .invalidCredentials)
        #expect(await attempt(test, "ALICE", "wrong one 2")?.code == .invalidCredentials)
        let third = await attempt(test, "alice", "wrong one 3")
        #expect(third?.code == .lockedOut)
        #expect(third?.lockedUntil == test.clock.now.addingTimeInterval(60))
        #expect(third?.retryAfter == 60)
        // Even the right password is refused while locked, without reaching the plugin.
        #expect(await attempt(test, "alice", "correct horse battery")?.code == .lockedOut)
        let locked = try await test.store.auditEvents(type: "account.locked", appID: "notes", accountID: nil, since: nil, limit: 5)
        #expect(locked.count == 1)
        #expect(locked.first?.details["account"] == "alice")
        test.clock.advance(by: 61)
        #expect(await attempt(test, "alice", "correct horse battery") == nil)
        // The next lockout lasts twice as long.
        for index in 1...3 { _ = await attempt(test, "alice", "wrong again \(index)") }
        let second = try #require(try await test.store.attemptCounter(key: "account:local:alice"))
        #expect(second.lockedUntil == test.clock.now.addingTimeInterval(120))
        #expect(second.lockouts == 2)
    }

    @Test func successClearsTheFailureCount() async throws {
        let test = try await Self.lockoutBroker()
        defer { test.temporary.remove() }
        _ = await attempt(test, "alice", "wrong one 1")
        _ = await attempt(test, "alice", "wrong one 2")
        #expect(await attempt(test, "alice", "correct horse battery") == nil)
        #expect(await attempt(test, "alice", "wrong one 3")?.code == .invalidCredentials)
    }

    @Test func blocksAnAddressThatTriesManyAccounts() async throws {
        let test = try await Self.lockoutBroker()
        defer { test.temporary.remove() }
        for index in 1...6 {
            #expect(await attempt(test, "user\(index)", "guess guess guess", ip: "203.0.113.9")?.code == .invalidCredentials)
        }
        let blocked = await attempt(test, "alice", "correct horse battery", ip: "203.0.113.9")
        #expect(blocked?.code == .rateLimited)
        #expect(blocked?.retryAfter == 600)
        // Another address is not affected.
        #expect(await attempt(test, "alice", "correct horse battery", ip: "198.51.100.7") == nil)
        #expect(try await test.store.auditEvents(type: "ip.blocked", appID: nil, accountID: nil, since: nil, limit: 5).count == 1)
    }

    @Test func limitsFlowStartsPerAddress() async throws {
        let test = try await Self.lockoutBroker()
        defer { test.temporary.remove() }
        for _ in 1...20 { _ = try await test.start(FlowRequest(appID: "notes", providerID: "local", clientIP: "192.0.2.1")) }
        do {
            _ = try await test.start(FlowRequest(appID: "notes", providerID: "local", clientIP: "192.0.2.1"))
            Issue.record("the 21st start was not refused")
        } catch let error as BrokerError {
            #expect(error.code == .rateLimited)
            #expect(error.retryAfter == 60)
        }
        test.clock.advance(by: 60)
        _ = try await test.start(FlowRequest(appID: "notes", providerID: "local", clientIP: "192.0.2.1"))
    }

    @Test func lockoutsHoldAcrossBrokerInstancesSharingTheStore() async throws {
        let first = try await Self.lockoutBroker()
        defer { first.temporary.remove() }
        for index in 1...3 { _ = await attempt(first, "alice", "wrong \(index)") }
        // A second node: its own broker, the same database.
        let second = try await Self.broker(yaml: Self.lockoutYAML, temporary: try TemporaryStore.reopen(first.temporary), clock: first.clock)
        #expect(await attempt(second, "alice", "correct horse battery")?.code == .lockedOut)
    }
}

extension LocalPasswordTests {
    @Test func parallelGuessesCannotSlipPastTheAccountLimit() async throws {
        let test = try await Self.lockoutBroker()
        defer { test.temporary.remove() }
        var flows: [String] = []
        for _ in 0..<20 { flows.append(try await test.start(FlowRequest(appID: "notes", providerID: "local")).flowID) }
        let codes = await answerInParallel(test, flows) { index in ["username": "alice", "password": .string("parallel guess \(index)")] }
        // At most three guesses reached the password check; every other was refused unseen.
        #expect(codes.filter { $0 == "invalid_credentials" }.count <= 3)
        #expect(codes.filter { $0 == "locked_out" }.count >= 17)
        #expect(!codes.contains("ok"))
    }

    @Test func parallelAnswersToOneFlowAreEvaluatedOnce() async throws {
        let test = try await Self.lockoutBroker()
        defer { test.temporary.remove() }
        let flow = try await test.start(FlowRequest(appID: "notes", providerID: "local")).flowID
        let codes = await answerInParallel(test, Array(repeating: flow, count: 6)) { index in ["username": .string("bob\(index)"), "password": "some guess here"] }
        let evaluated = codes.filter { $0 == "invalid_credentials" || $0 == "too_many_attempts" }.count
        let refused = codes.filter { $0 == "flow_conflict" || $0 == "flow_not_found" }.count
        #expect(evaluated + refused == 6)
        #expect(evaluated >= 1 && refused >= 1)
        let stored = try await test.store.flow(id: flow, now: test.clock.now)
        #expect(stored?.failedAttempts == evaluated || stored == nil)
    }
}

extension LocalPasswordTests {
    @Test func parallelGuessesFromOneAddressCannotSlipPastItsLimit() async throws {
        let test = try await Self.lockoutBroker()
        defer { test.temporary.remove() }
        var flows: [String] = []
        for _ in 0..<16 { flows.append(try await test.start(FlowRequest(appID: "notes", providerID: "local", clientIP: "203.0.113.50")).flowID) }
        let codes = await answerInParallel(test, flows) { index in ["username": .string("user\(index)"), "password": "guess guess guess"] }
        // The address may have six wrong answers checked in the window; the rest are refused unseen.
        #expect(codes.filter { $0 == "invalid_credentials" }.count <= 6)
        #expect(codes.filter { $0 == "rate_limited" }.count >= 10)
    }
}

extension LocalPasswordTests {
    /// Answers every flow at once (answer `index` to flow `index`); returns each outcome's code, or `ok`.
    func answerInParallel(_ test: TestBroker, _ flows: [String], answer: @escaping @Sendable (Int) -> [String: JSONValue]) async -> [String] {
        await withTaskGroup(of: String.self) { group in
            for (index, flow) in flows.enumerated() {
                group.addTask {
                    do {
                        _ = try await test.finish(flow, answer: answer(index))
                        return "ok"
                    } catch let error as BrokerError {
                        return error.code.rawValue
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
    }
}
