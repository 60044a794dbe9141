import Foundation
import GatehouseCore
import GatehouseTesting
@testable import PIN
import Testing

/// The `pin` plugin through the real flow engine: every PIN-policy rule with its code on the same
/// challenge, PIN as a second factor, lockouts that grow to permanent and an administrator's unlock,
/// change with the current PIN, reset through another authenticator, and the stateless limit.
@Suite("PIN")
struct PINTests {
    /// A second authenticator for resets: passes when the answer is `open`.
    struct KnockAuthenticator: Authenticator {
        let id: String
        func begin(in context: FlowContext) async throws -> FlowStep {
            .challenge(Challenge(type: "knock"))
        }
        func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
            let word = try answer.string("word")
            // `enrol` stands for an authenticator that lets the account name a new address now.
            if word == "enrol" { return .verified(FactorResult(authenticatorID: id, method: "otp", enrolledEmail: EmailAddress("new@example.com"))) }
            guard word == "open" else { throw BrokerError(.invalidCode, .failedAttempt, "No.") }
            return .verified(FactorResult(authenticatorID: id, method: "otp"))
        }
    }

    enum KnockPlugin: PluginFactory {
        struct Config: Decodable, Sendable {}
        static let typeName = "knock"
        static let challenges = [ChallengeDescription(type: "knock", summary: "A word.", inputs: [ChallengeInput(name: "word", label: "Word")])]
        static func make(id: String, config: Config, environment: PluginEnvironment) throws -> KnockAuthenticator { KnockAuthenticator(id: id) }
    }

    static let yaml = """
        providers:
          - id: name
            type: name
          - id: knock
            type: knock
          - id: pin
            type: pin
            config:
              resetWith: knock
              hashCost: 4
              lockout: {maxFailures: 3, lockoutDuration: 60s, maxLockoutDuration: 1h, permanentAfter: 3}
        apps:
          - id: bank
            policy:
              identityProviders: [name]
              authenticators: [pin, knock]
              secondFactor: pin
              selfRegistration: true
              pinPolicy: {minLength: 5, maxLength: 8, denyList: ["24680"]}
              lockout: {maxFailedAttemptsPerFlow: 20, maxFailedAttemptsPerAccount: 100}
        """

    static var registry: PluginRegistry {
        var registry = PluginRegistry()
        registry.register(NamePlugin.self)
        registry.register(KnockPlugin.self)
        registry.register(PINPlugin.self)
        return registry
    }

    static func broker(clock: TestClock = TestClock()) async throws -> TestBroker {
        try await TestBroker.make(yaml: yaml, registry: registry, clock: clock)
    }

    /// Names `name` and answers the PIN challenge that follows with `pin`.
    func signIn(_ broker: TestBroker, _ name: String, pin: String) async throws -> FlowOutcome {
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": .string(name)]), client: nil)
        return try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["pin": .string(pin)]), client: nil)
    }

    /// Registers `name` with `pin`; answers the account.
    func register(_ broker: TestBroker, _ name: String, pin: String) async throws -> (Account, IssuedTokens) {
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name", purpose: .register))
        guard case .challenge(_, let challenge, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": .string(name)]), client: nil) else {
            throw FlowDriverError.unexpectedOutcome("no create_pin")
        }
        #expect(challenge.type == "create_pin")
        let (tokens, account) = try await broker.finish(flow, answer: ["pin": .string(pin)])
        return (try #require(account), tokens)
    }

    @Test func everyPINPolicyRuleRefusesWithItsCodeOnTheSameChallenge() async throws {
        let broker = try await Self.broker()
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name", purpose: .register))
        _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil)
        for (pin, code) in [
            ("1357", "pin_too_short"), ("135792468", "pin_too_long"), ("13a57", "pin_not_numeric"), ("51234", "pin_sequence"), ("58880", "pin_repeated"),
            ("24680", "pin_denied"), ("123456", "pin_sequence"), ("11111", "pin_repeated"),
        ] {
            let refused = await thrownError { _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["pin": .string(pin)]), client: nil) }
            #expect(refused?.code.rawValue == code, "\(pin)")
        }
        let (tokens, account) = try await broker.finish(flow, answer: ["pin": "27193"])
        #expect(account != nil)
        #expect(tokens.refreshToken != nil)
        // 5 to 32 digits, as XignSys asks, is expressible; outside 4...32 is a config error.
        let xignsys = PINRules(minLength: 5, maxLength: 32)
        #expect(throws: Never.self) { try xignsys.check(String(repeating: "27193", count: 6) + "58") }
        #expect((try? xignsys.check("2719")) == nil)
        // The PIN rules are the pin plugin's settings: the old key and the new one are checked by it.
        var registry = PluginRegistry()
        registry.register(PINPlugin.self)
        let tooLong = await thrownError(ConfigIssues.self) {
            _ = try ConfigLoader(registry: registry).load(yaml: "apps: [{id: x, policy: {pinPolicy: {maxLength: 40}}}]", environment: [:])
        }
        #expect(tooLong?.issues.map(\.description) == ["apps[0].policy.pinPolicy.maxLength: must be between minLength (6) and 32, got 40"])
        let yaml = "providers: [{id: pin, type: pin}]\napps: [{id: x, policy: {authenticators: [pin], plugins: {pin: {maxLength: 40, colour: blue}}}}]"
        let inPlugins = await thrownError(ConfigIssues.self) { _ = try ConfigLoader(registry: registry).load(yaml: yaml, environment: [:]) }
        #expect(
            inPlugins?.issues.map(\.description) == [
                "apps[0].policy.plugins.pin.maxLength: must be between minLength (6) and 32, got 40", "apps[0].policy.plugins.pin.colour: unknown key",
            ])
        // Each form alone is fine; what would be stored (the old key laid over the new) is not.
        let both = "providers: [{id: pin, type: pin}]\napps: [{id: x, policy: {authenticators: [pin], plugins: {pin: {maxLength: 6}}, pinPolicy: {minLength: 8}}}]"
        let together = await thrownError(ConfigIssues.self) { _ = try ConfigLoader(registry: registry).load(yaml: both, environment: [:]) }
        #expect(together?.issues.map(\.description) == ["apps[0].policy.pinPolicy: together with plugins.pin, maxLength: must be between minLength (8) and 32, got 6"])
        let unknownKey = await thrownError(ConfigIssues.self) {
            _ = try ConfigLoader(registry: PluginRegistry()).load(yaml: "apps: [{id: x, policy: {pinPolicy: {}}}]", environment: [:])
        }
        #expect(unknownKey?.issues.map(\.description) == ["apps[0].policy.pinPolicy: unknown key"])
    }

    @Test func wrongPINsLockWithGrowingDurationsThenForGoodUntilAnAdministratorUnlocks() async throws {
        let clock = TestClock()
        let broker = try await Self.broker(clock: clock)
        let (account, _) = try await register(broker, "bob", pin: "27193")
        guard case .completed = try await signIn(broker, "bob", pin: "27193") else { Issue.record("right PIN refused"); return }
        var durations: [TimeInterval] = []
        for round in 1...3 {
            for attempt in 1...3 {
                let refused = await thrownError { _ = try await signIn(broker, "bob", pin: "99999") }
                if attempt < 3 { #expect(refused?.code == .invalidPIN) } else { #expect(refused?.code == .lockedOut, "round \(round)") }
                if attempt == 3, let until = refused?.lockedUntil { durations.append(until.timeIntervalSince(clock.now)) }
                if attempt == 3, round == 3 { #expect(refused?.permanent == true) }
            }
            if round < 3 {
                // While locked, even the right PIN is refused; the lock runs out.
                #expect(await thrownError { _ = try await signIn(broker, "bob", pin: "27193") }?.code == .lockedOut)
                clock.advance(by: durations.last! + 1)
            }
        }
        #expect(durations.count == 2)
        #expect(durations[1] > durations[0])
        clock.advance(by: 86_400 * 30)
        let still = await thrownError { _ = try await signIn(broker, "bob", pin: "27193") }
        #expect(still?.code == .lockedOut)
        #expect(still?.permanent == true)
        let locks = try await broker.broker.admin.lockouts().map(\.key)
        #expect(locks.contains("pin:account:\(account.id)"))
        try await broker.broker.admin.unlock(key: "pin:account:\(account.id)", by: AdminIdentity(name: "ops"))
        guard case .completed = try await signIn(broker, "bob", pin: "27193") else { Issue.record("not unlocked"); return }
        let audit = try await broker.store.auditEvents(type: "lockout.applied", appID: nil, accountID: nil, since: nil, limit: 10)
        #expect(audit.contains { $0.details["permanent"] == "true" })
    }

    @Test func oneUnlockLiftsWhatOneLockEventSetOnTheAccountAndItsDevice() async throws {
        let clock = TestClock()
        let broker = try await Self.broker(clock: clock)
        let (account, _) = try await register(broker, "dan", pin: "27193")
        let book = try #require(broker.broker.plugins.all["pin"] as? PINProvider).book
        // Wrong PINs from one device up to the permanent lock (3 locks of 3 guesses).
        for round in 1...3 {
            for _ in 1...3 { _ = await thrownError { try await book.check("99999", accountID: account.id, deviceID: "device-1") } }
            if round < 3 { clock.advance(by: 3_600) }
        }
        let locked = await thrownError { try await book.check("27193", accountID: account.id, deviceID: "device-1") }
        #expect(locked?.code == .lockedOut && locked?.permanent == true)
        // The lock event locked the account only, so the one unlock the docs name lets the person back in.
        let keys = try await broker.broker.admin.lockouts().map(\.key)
        #expect(keys.contains("pin:account:\(account.id)"))
        #expect(!keys.contains("pin:device:device-1"), "\(keys)")
        try await broker.broker.admin.unlock(key: "pin:account:\(account.id)", by: AdminIdentity(name: "ops"))
        try await book.check("27193", accountID: account.id, deviceID: "device-1")
    }

    @Test func thePINChangesWithTheCurrentOneAndNotFromAStatelessSignIn() async throws {
        let broker = try await Self.broker()
        let (_, tokens) = try await register(broker, "cyd", pin: "27193")
        let operations = broker.broker.accountOperations
        let token = PresentedToken.bearer(tokens.accessToken)
        let wrong = await thrownError {
            _ = try await operations.perform(plugin: "pin", operation: "change", fields: ["currentPin": "11112", "newPin": "38162"], accessToken: token, clientIP: nil)
        }
        #expect(wrong?.code == .invalidPIN)
        let weak = await thrownError {
            _ = try await operations.perform(plugin: "pin", operation: "change", fields: ["currentPin": "27193", "newPin": "12345"], accessToken: token, clientIP: nil)
        }
        #expect(weak?.code == .pinSequence)
        _ = try await operations.perform(plugin: "pin", operation: "change", fields: ["currentPin": "27193", "newPin": "38162"], accessToken: token, clientIP: nil)
        #expect(await thrownError { _ = try await signIn(broker, "cyd", pin: "27193") }?.code == .invalidPIN)
        guard case .completed = try await signIn(broker, "cyd", pin: "38162") else { Issue.record("new PIN refused"); return }
        let unknownField = await thrownError {
            _ = try await operations.perform(plugin: "pin", operation: "change", fields: ["pin": "1"], accessToken: token, clientIP: nil)
        }
        #expect(unknownField?.code == .invalidRequest)

        // A stateless token has no account to hold a PIN.
        let stateless = try await broker.broker.tokens(forStatelessSubject: "name|zed", app: "bank")
        let refused = await thrownError {
            _ = try await operations.perform(
                plugin: "pin", operation: "change", fields: ["currentPin": "1", "newPin": "2"], accessToken: .bearer(stateless), clientIP: nil)
        }
        #expect(refused?.code == .statelessUnsupported)
    }

    @Test func aForgottenPINIsResetAfterTheOtherAuthenticatorPasses() async throws {
        let broker = try await Self.broker()
        _ = try await register(broker, "dee", pin: "27193")
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let pin, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "dee"]), client: nil) else { return }
        #expect(pin.type == "pin")
        #expect(pin.fields["resetAvailable"] == true)
        guard case .challenge(_, let knock, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["forgot": true]), client: nil) else { return }
        #expect(knock.type == "knock")
        guard case .challenge(_, let create, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["word": "open"]), client: nil) else { return }
        #expect(create.type == "create_pin")
        #expect(create.fields["reset"] == true)
        let (tokens, _) = try await broker.finish(flow, answer: ["pin": "49261"])
        let amr = Self.amr(tokens.accessToken)
        #expect(amr == ["pwd", "name", "otp", "knock", "pin", "pin"])
        guard case .completed = try await signIn(broker, "dee", pin: "49261") else { Issue.record("reset PIN refused"); return }

        // A reset cannot be proven with an address the account names just now.
        let (other, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        _ = try await broker.engine.resume(flowID: other, answer: ChallengeResponse(["name": "dee"]), client: nil)
        _ = try await broker.engine.resume(flowID: other, answer: ChallengeResponse(["forgot": true]), client: nil)
        let enrolled = await thrownError { _ = try await broker.engine.resume(flowID: other, answer: ChallengeResponse(["word": "enrol"]), client: nil) }
        #expect(enrolled?.code == .noVerifiedEmail)
        #expect(
            try await broker.store.identityLinks(accountID: try #require(try await broker.store.accounts(limit: 10, offset: 0).first { $0.username == "dee" }).id).count
                == 1)
    }

    static func amr(_ token: String) -> [String] {
        guard case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: Base64URL.decode(String(token.split(separator: ".")[1]))!),
            case .array(let values)? = claims["amr"]
        else { return [] }
        return values.compactMap(\.stringValue)
    }
}

extension Broker {
    /// An access token as a stateless sign-in gets it (for checking what such a token may not do).
    func tokens(forStatelessSubject subject: String, app appID: String) async throws -> String {
        guard let app = try await store.app(id: appID) else { throw BrokerError(.invalidClient, .unauthenticated, "no app") }
        let grant = TokenIssuer.Grant(
            app: app, subject: subject, accountID: nil, scopes: ["openid"], methods: ["pwd"], identityProvider: "name", authTime: clock.now, stateless: true)
        return try await engine.tokens.issue(grant).accessToken
    }
}

extension PINTests {
    /// A policy written before `policy.plugins` (`pinPolicy`) keeps working: the file's is stored in the
    /// new form, and one an earlier version stored the old way is rewritten at the next start, with
    /// the same rules.
    @Test func pinRulesWrittenTheOldWayAreStoredUnderPluginsAndKeepTheirMeaning() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let seeded = try #require(try await test.store.app(id: "bank"))
        #expect(seeded.policy.formerSettings.isEmpty)
        #expect(seeded.policy.plugins["pin"]?.objectValue?["minLength"] == .number(5))
        #expect(seeded.policy.plugins["pin"]?.objectValue?["denyList"] == ["24680"])
        #expect(try seeded.view.settings(PINRules.self, for: "pin") == PINRules(minLength: 5, maxLength: 8, denyList: ["24680"]))

        // An admin-managed app as an earlier version stored it: the old key, no plugins entry.
        var old = seeded
        old.id = "legacy"
        old.managedBy = .admin
        old.policy.plugins = [:]
        old.policy.formerSettings = ["pinPolicy": ["minLength": 7]]
        #expect(try await test.store.insertApp(old))
        #expect(try await test.store.app(id: "legacy")?.view.settings(PINRules.self, for: "pin").minLength == 7, "read the old way before the rewrite")
        // A change in the new form wins over what the old form said (the patch applies to the policy
        // in the new form).
        let patched = try await test.broker.admin.patchPolicy(id: "legacy", patch: ["plugins": ["pin": ["minLength": 9]]], by: AdminIdentity(name: "ops"))
        #expect(patched.policy.formerSettings.isEmpty)
        #expect(try await test.store.app(id: "legacy")?.view.settings(PINRules.self, for: "pin").minLength == 9)
        // An old key kept because no listed instance took it does not override a later change that
        // lists the instance and sets its settings in the new form.
        var unlisted = try #require(try await test.store.app(id: "legacy"))
        unlisted.policy.authenticators = []
        unlisted.policy.secondFactor = nil
        unlisted.policy.plugins = [:]
        unlisted.policy.formerSettings = ["pinPolicy": ["minLength": 4]]
        #expect(try await test.store.updateApp(unlisted))
        let listed = try await test.broker.admin.patchPolicy(
            id: "legacy", patch: ["authenticators": ["pin", "knock"], "plugins": ["pin": ["minLength": 8]]], by: AdminIdentity(name: "ops")
        )
        #expect(listed.policy.formerSettings.isEmpty)
        #expect(try await test.store.app(id: "legacy")?.view.settings(PINRules.self, for: "pin").minLength == 8)
        // Back to the old form as an earlier version stored it, for the rewrite at start.
        var again = try #require(try await test.store.app(id: "legacy"))
        again.policy.plugins = [:]
        again.policy.formerSettings = ["pinPolicy": ["minLength": 7]]
        #expect(try await test.store.updateApp(again))
        let restarted = try await TestBroker.make(yaml: Self.yaml, registry: Self.registry, temporary: test.temporary, clock: test.clock)
        let rewritten = try #require(try await restarted.store.app(id: "legacy"))
        #expect(rewritten.policy.formerSettings.isEmpty)
        #expect(rewritten.policy.plugins["pin"]?.objectValue?["minLength"] == .number(7))
        #expect(try rewritten.view.settings(PINRules.self, for: "pin").minLength == 7)
    }
}

extension PINTests {
    /// A flow the previous version stored, with the suspended PIN step beside the phase (its
    /// `suspendedFactor`) rather than in it, completes after the upgrade.
    @Test func aFlowStoredByThePreviousVersionStillCompletesAfterTheUpgrade() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        _ = try await register(broker, "dee", pin: "27193")
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "dee"]), client: nil)
        guard case .challenge(_, let knock, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["forgot": true]), client: nil) else {
            Issue.record("the reset asks for the other authenticator")
            return
        }
        #expect(knock.type == "knock")
        let stored = try #require(try await broker.store.flow(id: flow, now: broker.clock.now))
        guard case .factor(let current, let resumes?) = stored.phase else {
            Issue.record("the PIN step waits in the knock phase")
            return
        }
        // Rewritten as the previous version wrote it, straight into the database.
        var old = try #require(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(stored)).objectValue)
        old["phase"] = ["factor": ["authenticatorID": .string(current)]]
        old["suspendedFactor"] = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(resumes))
        let payload = String(decoding: JSONValue.object(old).serialized(), as: UTF8.self)
        let script =
            "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); db.execute('UPDATE flows SET payload = ? WHERE id = ?', (sys.argv[2], sys.argv[3])); db.commit()"
        #expect(await ChildProcess.run(["python3", "-c", script, broker.temporary.path, payload, flow]).status == 0)
        let reread = try #require(try await broker.store.flow(id: flow, now: broker.clock.now))
        #expect(reread.phase == stored.phase, "the old shape reads into the phase")

        guard case .challenge(_, let create, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["word": "open"]), client: nil) else {
            Issue.record("the knock passes and the PIN step goes on")
            return
        }
        #expect(create.type == "create_pin" && create.fields["reset"] == true)
        let (tokens, account) = try await broker.finish(flow, answer: ["pin": "49261"])
        #expect(account?.username == "dee")
        #expect(Self.amr(tokens.accessToken) == ["pwd", "name", "otp", "knock", "pin", "pin"])
    }
}
