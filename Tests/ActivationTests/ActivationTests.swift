@testable import Activation
import Crypto
import DeviceKey
import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

/// The `activation` plugin through the real flow engine: issuing, redeeming with every outcome and
/// choice, lockouts up to permanent and an admin unlock, expiry, revocation, two installations racing
/// for one payload, the registration state and logout. Device keys and JWSs are made here with
/// swift-crypto; the end-to-end suite adds an independent Python client over HTTP.
@Suite("Activation")
struct ActivationTests {
    static let yaml = """
        providers:
          - id: device
            type: device-key
          - id: activation
            type: activation
            config:
              deviceKeys: device
              hashCost: 4
              lockout: {maxFailures: 2, lockoutDuration: 60, maxLockoutDuration: 3600, permanentAfter: 3}
        apps:
          - id: mobile
            policy:
              identityProviders: [activation, device]
              defaultScopes: [openid, offline_access]
              accessTokenLifetime: 600
              renewalWindow: 60
              pinPolicy: {minLength: 5}
              activation: {lifetime: 3600, deepLink: "mobile://activate"}
        """

    static func broker(clock: TestClock = TestClock()) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(DeviceKeyPlugin.self)
        registry.register(ActivationPlugin.self)
        return try await TestBroker.make(yaml: yaml, registry: registry, clock: clock)
    }

    static let admin = AdminIdentity(name: "ops")

    /// A phone: its key and installation.
    struct Phone {
        var key = P256.Signing.PrivateKey()
        var installationID = "install-" + UUID().uuidString
        var vendorID = "vendor-" + UUID().uuidString

        var jwk: JSONValue {
            let point = key.publicKey.x963Representation
            return ["kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(point[1..<33])), "y": .string(Base64URL.encode(point[33..<65]))]
        }

        var keyID: String { try! PublicJWK(jwk).thumbprint }

        var facts: [String: JSONValue] {
            [
                "installationID": .string(installationID), "vendorID": .string(vendorID), "platform": "ios", "model": "iPhone16,1", "pushToken": "apns-1",
                "biometric": true,
            ]
        }

        func sign(_ claims: [String: JSONValue]) -> String {
            let input = Base64URL.encode(Data(JSONValue.object(["alg": "ES256"]).serialized())) + "." + Base64URL.encode(Data(JSONValue.object(claims).serialized()))
            return input + "." + Base64URL.encode(try! key.signature(for: Data(input.utf8)).rawRepresentation)
        }

        func registration(nonce: String, issuer: String) -> [String: JSONValue] {
            facts.merging(["publicKey": jwk, "proof": .string(sign(["nonce": .string(nonce), "aud": .string(issuer)]))]) { $1 }
        }

        func assertion(nonce: String, issuer: String, now: Date) -> [String: JSONValue] {
            [
                "assertion": .string(
                    sign([
                        "iss": .string(keyID), "aud": .string(issuer), "nonce": .string(nonce), "iat": .number(now.timeIntervalSince1970),
                        "jti": .string(UUID().uuidString),
                    ])
                )
            ]
        }
    }

    /// An account made as a directory would make it.
    static func account(_ broker: TestBroker, _ name: String, email: String? = nil) async throws -> Account {
        let claims = IdentityClaims(email: email, emailVerified: email != nil)
        return try await broker.store.linkIdentity(ExternalIdentity(providerID: "activation", subject: name, username: name, claims: claims), now: broker.clock.now)
            .account
    }

    static func issue(_ broker: TestBroker, _ fields: [String: JSONValue]) async throws -> (payload: String, pin: String?, id: String) {
        let change = try await broker.broker.admin.createResourceItem("activations", of: .app("mobile"), fields: fields, by: admin)
        let item = try #require(change.item.objectValue)
        return (try #require(item["payload"]?.stringValue), item["pin"]?.stringValue, try #require(item["id"]?.stringValue))
    }

    /// Starts a flow and answers the activation challenge.
    static func redeem(_ broker: TestBroker, payload: String, pin: String, on phone: Phone) async throws -> FlowOutcome {
        let (flow, challenge) = try await broker.start(FlowRequest(appID: "mobile", providerID: "activation"))
        #expect(challenge.type == "activation")
        let answer = phone.facts.merging(["activation": .string(payload), "pin": .string(pin)]) { $1 }
        return try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(answer), client: nil)
    }

    /// Answers a flow's challenge.
    static func answer(_ broker: TestBroker, _ flow: String, _ answer: [String: JSONValue]) async throws -> FlowOutcome {
        try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(answer), client: nil)
    }

    /// Registers the phone's key at a `register_key` challenge and returns the finished flow.
    static func registerKey(_ broker: TestBroker, _ outcome: FlowOutcome, phone: Phone) async throws -> (
        tokens: IssuedTokens, account: Account?, notice: [String: JSONValue]
    ) {
        guard case .challenge(let flow, let challenge, _) = outcome, challenge.type == "register_key", let nonce = challenge.fields["nonce"]?.stringValue else {
            throw FlowDriverError.unexpectedOutcome(String(describing: outcome))
        }
        let done = try await answer(broker, flow, phone.registration(nonce: nonce, issuer: broker.broker.config.server.issuer))
        guard case .completed(_, let tokens, let account, let notice) = done else { throw FlowDriverError.unexpectedOutcome(String(describing: done)) }
        return (tokens, account, notice)
    }

    static func challenge(_ outcome: FlowOutcome) throws -> (flow: String, challenge: Challenge) {
        guard case .challenge(let flow, let challenge, _) = outcome else { throw FlowDriverError.unexpectedOutcome(String(describing: outcome)) }
        return (flow, challenge)
    }

    /// Activates a phone for a new account (an activation for an account without installations).
    static func activate(_ broker: TestBroker, _ account: Account, phone: Phone) async throws -> IssuedTokens {
        let issued = try await issue(broker, ["account": .string(account.id), "pin": "24680"])
        return try await registerKey(broker, try await redeem(broker, payload: issued.payload, pin: "24680", on: phone), phone: phone).tokens
    }

    static func signIn(_ broker: TestBroker, phone: Phone) async throws -> IssuedTokens {
        let (flow, challenge) = try await broker.start(FlowRequest(appID: "mobile", providerID: "device"))
        let nonce = try #require(challenge.fields["nonce"]?.stringValue)
        return try await broker.finish(flow, answer: phone.assertion(nonce: nonce, issuer: broker.broker.config.server.issuer, now: broker.clock.now)).tokens
    }

    // MARK: - An app's departure

    /// `Departure.app`'s contract: a deleted app's activations go with it, and so do its
    /// installations and their sign-in keys, so an app made again with the same id trusts no phone
    /// the old one activated.
    @Test func aDeletedAppsActivationsInstallationsAndKeysGoWithIt() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.account(broker, "ada")
        let phone = Phone()
        _ = try await Self.activate(broker, ada, phone: phone)
        _ = try await Self.issue(broker, ["account": .string(ada.id)])
        #expect(try await broker.store.count(table: .signInKeys) == 1)
        let before = try #require(try await broker.store.app(id: "mobile"))
        try await broker.broker.admin.deleteApp(id: "mobile", by: Self.admin)
        #expect(try await broker.store.pluginRecords(namespace: "activation", keyPrefix: "activation/", now: broker.clock.now).isEmpty)
        #expect(try await broker.store.count(table: .installations) == 0)
        #expect(try await broker.store.count(table: .signInKeys) == 0)

        _ = try await broker.broker.admin.createApp(
            ["id": "mobile", "name": "Mobile again", "policy": try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(before.policy))], by: Self.admin)
        let refusal = await thrownError(BrokerError.self) { _ = try await Self.signIn(broker, phone: phone) }
        #expect(refusal != nil, "the old phone's key signs nobody into the new app")
    }

    // MARK: - Issuing and the outcome `new`

    @Test func aNewActivationRegistersTheInstallationsKeyForItsAccountAndIsUsedUpOnce() async throws {
        let broker = try await Self.broker()
        let ada = try await Self.account(broker, "ada")
        let issued = try await Self.issue(broker, ["account": .string(ada.id), "alias": "Ada's phone"])
        // A generated PIN follows the app's policy; the payload carries neither the PIN nor the account.
        let pin = try #require(issued.pin)
        #expect(pin.count >= 5 && pin.allSatisfy(\.isNumber))
        #expect(!issued.payload.contains(pin) && !issued.payload.contains(ada.id))
        let listed = try await broker.broker.admin.resourceItems("activations", of: .app("mobile")).items
        #expect(listed.first?.objectValue?["state"] == "pending")
        #expect(!listed.description.contains(issued.payload.split(separator: ".").last!))

        let phone = Phone()
        let outcome = try await Self.redeem(broker, payload: issued.payload, pin: pin, on: phone)
        #expect(try Self.challenge(outcome).challenge.fields["activation"]?.objectValue?["outcome"] == "new")
        let done = try await Self.registerKey(broker, outcome, phone: phone)
        #expect(done.account?.id == ada.id)
        #expect(done.notice["activation"]?.objectValue?["outcome"] == "new")
        let installation = try #require(try await broker.store.devices(accountID: ada.id).first?.installations.first)
        #expect(installation.pushToken == "apns-1" && installation.biometric == true)
        // The activation PIN counts as a factor of its own.
        let claims = try await broker.broker.oauth.verifyAccessToken(done.tokens.accessToken)
        #expect(claims.amr?.contains("pin") == true && claims.amr?.contains("swk") == true)

        let again = await thrownError { _ = try await Self.redeem(broker, payload: issued.payload, pin: pin, on: Phone()) }
        #expect(again?.code == .invalidActivation && again?.reason == "activation_used")
        let types = try await broker.store.auditEvents(type: nil, appID: "mobile", accountID: nil, since: nil, limit: 50).map(\.type)
        #expect(types.contains("activation.redeemed") && types.contains("activation.completed") && types.contains("activation.issued"))
    }

    @Test func anIssuedPINMustFollowThePolicyAndAWrongPayloadCountsAsAWrongAnswer() async throws {
        let broker = try await Self.broker()
        let ada = try await Self.account(broker, "ada")
        let short = await thrownError { _ = try await Self.issue(broker, ["account": .string(ada.id), "pin": "1357"]) }
        #expect(short?.code == .pinTooShort)
        let both = await thrownError { _ = try await Self.issue(broker, ["account": .string(ada.id), "email": "ada@example.com"]) }
        #expect(both?.code == .invalidRequest)
        let issued = try await Self.issue(broker, ["account": .string(ada.id), "pin": "13579"])
        let forged = issued.payload.dropLast(4) + "AAAA"
        let refused = await thrownError { _ = try await Self.redeem(broker, payload: String(forged), pin: "13579", on: Phone()) }
        #expect(refused?.code == .invalidActivation && refused?.isWrongAnswer == true)
        let garbage = await thrownError { _ = try await Self.redeem(broker, payload: "not-a-payload", pin: "13579", on: Phone()) }
        #expect(garbage?.code == .invalidAnswer)
    }

    // MARK: - Lockouts, expiry, revocation

    @Test func wrongPINsLockWithGrowingDurationsThenForGoodUntilAnAdminUnlocks() async throws {
        let clock = TestClock()
        let broker = try await Self.broker(clock: clock)
        let ada = try await Self.account(broker, "ada")
        let issued = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        let phone = Phone()
        func wrong() async -> BrokerError? { await thrownError { _ = try await Self.redeem(broker, payload: issued.payload, pin: "99991", on: phone) } }
        #expect(await wrong()?.code == .invalidPIN)
        let first = await wrong()
        #expect(first?.code == .lockedOut && first?.permanent == false)
        let until = try #require(first?.lockedUntil)
        #expect(abs(until.timeIntervalSince(clock.now) - 60) < 2)
        // While locked, even the right PIN is refused.
        #expect(await thrownError { _ = try await Self.redeem(broker, payload: issued.payload, pin: "24680", on: phone) }?.code == .lockedOut)
        clock.advance(by: 61)
        #expect(await wrong()?.code == .invalidPIN)
        let second = await wrong()
        #expect(second?.code == .lockedOut && second.flatMap(\.lockedUntil).map { $0.timeIntervalSince(clock.now) > 100 } == true)
        clock.advance(by: 121)
        #expect(await wrong()?.code == .invalidPIN)
        let third = await wrong()
        #expect(third?.code == .lockedOut && third?.permanent == true)
        // A permanent lock ends the activation; the account stays locked until an admin lifts it.
        clock.advance(by: 86_400)
        let dead = await thrownError { _ = try await Self.redeem(broker, payload: issued.payload, pin: "24680", on: phone) }
        #expect(dead?.code == .invalidActivation && dead?.reason == "activation_locked")
        let fresh = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        #expect(await thrownError { _ = try await Self.redeem(broker, payload: fresh.payload, pin: "24680", on: phone) }?.code == .lockedOut)
        let locks = try await broker.broker.admin.lockouts().map(\.key).filter { $0.hasPrefix("activation:account:") }
        #expect(locks == ["activation:account:\(ada.id)"])
        for key in locks { try await broker.broker.admin.unlock(key: key, by: Self.admin) }
        _ = try await Self.registerKey(broker, try await Self.redeem(broker, payload: fresh.payload, pin: "24680", on: phone), phone: phone)
        let types = try await broker.store.auditEvents(type: nil, appID: nil, accountID: nil, since: nil, limit: 100).map(\.type)
        #expect(types.contains("activation.locked") && types.contains("lockout.applied"))
    }

    @Test func expiredAndRevokedActivationsAreRefused() async throws {
        let clock = TestClock()
        let broker = try await Self.broker(clock: clock)
        let ada = try await Self.account(broker, "ada")
        let expiring = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        let revoked = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        _ = try await broker.broker.admin.deleteResourceItem("activations", of: .app("mobile"), key: [revoked.id], by: Self.admin)
        let refusedRevoked = await thrownError { _ = try await Self.redeem(broker, payload: revoked.payload, pin: "24680", on: Phone()) }
        #expect(refusedRevoked?.reason == "activation_revoked")
        clock.advance(by: 3601)
        let refusedExpired = await thrownError { _ = try await Self.redeem(broker, payload: expiring.payload, pin: "24680", on: Phone()) }
        #expect(refusedExpired?.reason == "activation_expired")
        let listed = try await broker.broker.admin.resourceItems("activations", of: .app("mobile")).items.compactMap { $0.objectValue?["state"]?.stringValue }
        #expect(Set(listed) == ["expired", "revoked"])
    }

    @Test func ofTwoInstallationsRedeemingOnePayloadAtOnceExactlyOneGoesOn() async throws {
        let broker = try await Self.broker()
        let ada = try await Self.account(broker, "ada")
        let issued = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<2 {
                group.addTask { (try? await Self.redeem(broker, payload: issued.payload, pin: "24680", on: Phone())) != nil }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 1)
    }

    // MARK: - re_activation, already_activated

    @Test func reActivationOverridesTheOtherInstallationAndRevokesItsTokensAtOnce() async throws {
        let broker = try await Self.broker()
        let ada = try await Self.account(broker, "ada")
        let old = Phone()
        let oldTokens = try await Self.activate(broker, ada, phone: old)
        let issued = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        let new = Phone()
        let (flow, choice) = try Self.challenge(try await Self.redeem(broker, payload: issued.payload, pin: "24680", on: new))
        #expect(choice.type == "activation_choice" && choice.fields["outcome"] == "re_activation")
        #expect(choice.fields["choices"] == ["override", "new_activation"])
        #expect(choice.fields["installations"]?.arrayValue?.count == 1)
        let invalid = await thrownError { _ = try await Self.answer(broker, flow, ["choice": "merge"]) }
        #expect(invalid?.code == .invalidAnswer)
        let done = try await Self.registerKey(broker, try await Self.answer(broker, flow, ["choice": "override"]), phone: new)
        #expect(done.account?.id == ada.id)
        #expect(done.notice["activation"]?.objectValue?["overridden"]?.arrayValue?.count == 1)
        // The old installation's key and tokens stop at once.
        #expect(await thrownError { _ = try await broker.broker.oauth.verifyAccessToken(oldTokens.accessToken) }?.code == .invalidToken)
        #expect(await thrownError { _ = try await Self.signIn(broker, phone: old) } != nil)
        _ = try await Self.signIn(broker, phone: new)
    }

    @Test func reActivationCanAskForANewActivationThatAddsAnInstallationAndLeavesTheOriginal() async throws {
        let broker = try await Self.broker()
        let ada = try await Self.account(broker, "ada")
        let old = Phone()
        _ = try await Self.activate(broker, ada, phone: old)
        let issued = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        let new = Phone()
        let (flow, _) = try Self.challenge(try await Self.redeem(broker, payload: issued.payload, pin: "24680", on: new))
        let weak = await thrownError { _ = try await Self.answer(broker, flow, ["choice": "new_activation", "pin": "11111", "alias": "Tablet"]) }
        #expect(weak?.code == .pinRepeated)
        guard case .stopped(_, let status, let details) = try await Self.answer(broker, flow, ["choice": "new_activation", "pin": "97531", "alias": "Tablet"]) else {
            Issue.record("not stopped")
            return
        }
        #expect(status == "stopped")
        let payload = try #require(details["activation"]?.objectValue?["newActivation"]?.objectValue?["payload"]?.stringValue)
        // The new activation adds this installation (outcome new); the old phone keeps working.
        let outcome = try await Self.redeem(broker, payload: payload, pin: "97531", on: new)
        #expect(try Self.challenge(outcome).challenge.fields["activation"]?.objectValue?["outcome"] == "new")
        _ = try await Self.registerKey(broker, outcome, phone: new)
        _ = try await Self.signIn(broker, phone: old)
        _ = try await Self.signIn(broker, phone: new)
        #expect(try await broker.store.devices(accountID: ada.id).count == 2)
    }

    @Test func alreadyActivatedStopsOrReEnrolsTheInstallationsKey() async throws {
        let broker = try await Self.broker()
        let ada = try await Self.account(broker, "ada")
        let phone = Phone()
        _ = try await Self.activate(broker, ada, phone: phone)
        let first = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        let (flow, choice) = try Self.challenge(try await Self.redeem(broker, payload: first.payload, pin: "24680", on: phone))
        #expect(choice.fields["outcome"] == "already_activated" && choice.fields["choices"] == ["re_enrol", "stop"])
        guard case .stopped = try await Self.answer(broker, flow, ["choice": "stop"]) else { Issue.record("not stopped"); return }
        _ = try await Self.signIn(broker, phone: phone)

        let second = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        let (flow2, _) = try Self.challenge(try await Self.redeem(broker, payload: second.payload, pin: "24680", on: phone))
        var renewed = phone
        renewed.key = P256.Signing.PrivateKey()
        _ = try await Self.registerKey(broker, try await Self.answer(broker, flow2, ["choice": "re_enrol"]), phone: renewed)
        #expect(await thrownError { _ = try await Self.signIn(broker, phone: phone) } != nil)
        _ = try await Self.signIn(broker, phone: renewed)
        #expect(try await broker.store.devices(accountID: ada.id).flatMap(\.keys).map(\.id) == [renewed.keyID])
    }

    /// The app's choice is not a guess (`ChallengeDescription.choice`): an address locked out by wrong
    /// answers meanwhile may still answer it, although it may start no flow.
    @Test func theAppsChoiceIsNotHeldBackByTheAddressLockout() async throws {
        let broker = try await Self.broker()
        let ada = try await Self.account(broker, "ada")
        let phone = Phone()
        _ = try await Self.activate(broker, ada, phone: phone)
        let again = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        let ip = "192.0.2.77"
        let (flow, challenge) = try await broker.start(FlowRequest(appID: "mobile", providerID: "activation", clientIP: ip))
        #expect(challenge.type == "activation")
        let answer = phone.facts.merging(["activation": .string(again.payload), "pin": "24680"]) { $1 }
        let (_, choice) = try Self.challenge(try await Self.answer(broker, flow, answer))
        #expect(choice.type == "activation_choice")
        let other = try await broker.start(FlowRequest(appID: "mobile", providerID: "activation", clientIP: ip)).flowID
        // Wrong answers from the address (reserved, never released) until it is blocked.
        var blocked = false
        for _ in 0...LockoutPolicy().maxFailedAttemptsPerIP where !blocked {
            do {
                try await broker.broker.engine.attempts.reserve(clientIP: ip, accountKey: nil, policy: LockoutPolicy(), appID: "mobile", providerID: "activation")
            } catch let error as BrokerError {
                blocked = error.code == .rateLimited
            }
        }
        #expect(blocked)
        // A guess from the address is held back now.
        let guess = phone.facts.merging(["activation": .string(again.payload), "pin": "13579"]) { $1 }
        #expect(await thrownError { _ = try await Self.answer(broker, other, guess) }?.code == .rateLimited)
        guard case .stopped(_, "stopped", let details) = try await Self.answer(broker, flow, ["choice": "stop"]) else {
            Issue.record("the choice is answered")
            return
        }
        #expect(details["activation"]?.objectValue?["choice"] == "stop")
        // What stopping does ran once the flow was claimed: the activation is used up.
        let reused = await thrownError { _ = try await Self.redeem(broker, payload: again.payload, pin: "24680", on: Phone()) }
        #expect(reused?.code == .invalidActivation && reused?.reason == "activation_used")
    }

    /// Activation flows the previous version stored (the redemption in the flow's `activation`, the
    /// choice in a phase of the engine's own) complete after the upgrade: waiting for the choice, and
    /// waiting for the device key.
    @Test func activationFlowsStoredByThePreviousVersionCompleteAfterTheUpgrade() async throws {
        let broker = try await Self.broker()
        let ada = try await Self.account(broker, "ada")
        let old = Phone()
        _ = try await Self.activate(broker, ada, phone: old)
        /// Writes `object` as the flow's stored payload, straight into the database.
        func store(_ flow: String, _ object: [String: JSONValue]) async throws {
            let payload = String(decoding: JSONValue.object(object).serialized(), as: UTF8.self)
            let script =
                "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); db.execute('UPDATE flows SET payload = ? WHERE id = ?', (sys.argv[2], sys.argv[3])); db.commit()"
            #expect(await ChildProcess.run(["python3", "-c", script, broker.temporary.path, payload, flow]).status == 0)
        }
        func stored(_ flow: String) async throws -> [String: JSONValue] {
            let record = try #require(try await broker.store.flow(id: flow, now: broker.clock.now))
            return try #require(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(record)).objectValue)
        }

        // Waiting for the app's choice: the previous version kept the redemption beside its own phase.
        let first = try await Self.issue(broker, ["account": .string(ada.id), "pin": "24680"])
        let phone = Phone()
        let (flow, choice) = try Self.challenge(try await Self.redeem(broker, payload: first.payload, pin: "24680", on: phone))
        #expect(choice.type == "activation_choice")
        var waiting = try await stored(flow)
        let redemption = try JSONDecoder().decode(JSONValue.self, from: try #require(try await broker.store.flow(id: flow, now: broker.clock.now)).pluginState.data)
        waiting["phase"] = ["activationChoice": [:]]
        waiting["activation"] = redemption
        waiting["pluginState"] = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(FlowState()))
        try await store(flow, waiting)
        let overridden = try await Self.registerKey(broker, try await Self.answer(broker, flow, ["choice": "override"]), phone: phone)
        #expect(overridden.account?.id == ada.id && overridden.notice["activation"]?.objectValue?["choice"] == "override")
        #expect(overridden.notice["activation"]?.objectValue?["overridden"]?.arrayValue?.count == 1)
        #expect(await thrownError { _ = try await Self.signIn(broker, phone: old) } != nil, "the override retired the other installation")

        // Waiting for the device key: the redemption in `activation`, no hand-off.
        let bea = try await Self.account(broker, "bea")
        let second = try await Self.issue(broker, ["account": .string(bea.id), "pin": "24680"])
        let tablet = Phone()
        let keyStep = try await Self.redeem(broker, payload: second.payload, pin: "24680", on: tablet)
        let (keyFlow, register) = try Self.challenge(keyStep)
        #expect(register.type == "register_key")
        var key = try await stored(keyFlow)
        let handOff = try #require(key["handOff"]?.objectValue)
        let state = try JSONDecoder().decode(FlowState.self, from: Data(JSONValue.object(try #require(handOff["state"]?.objectValue)).serialized()))
        key["handOff"] = nil
        key["activation"] = try JSONDecoder().decode(JSONValue.self, from: state.data)
        try await store(keyFlow, key)
        let activated = try await Self.registerKey(broker, keyStep, phone: tablet)
        #expect(activated.account?.id == bea.id && activated.notice["activation"]?.objectValue?["outcome"] == "new")
        _ = try await Self.signIn(broker, phone: tablet)
        // The activation was used up by that flow.
        let again = await thrownError { _ = try await Self.redeem(broker, payload: second.payload, pin: "24680", on: Phone()) }
        #expect(again?.code == .invalidActivation)
    }

    // MARK: - Temporary registrations: new, merge, replace

    @Test func aTemporaryRegistrationBecomesAnAccountWithItsAddress() async throws {
        let broker = try await Self.broker()
        let issued = try await Self.issue(broker, ["email": "new@example.com", "pin": "24680"])
        let phone = Phone()
        let done = try await Self.registerKey(broker, try await Self.redeem(broker, payload: issued.payload, pin: "24680", on: phone), phone: phone)
        let account = try #require(done.account)
        #expect(account.username == "new@example.com")
        // Not emailed: the address joins unverified.
        let links = try await broker.store.identityLinks(accountID: account.id)
        #expect(links.contains { $0.claims.email == "new@example.com" && !$0.claims.emailVerified })
    }

    @Test func aTemporaryRegistrationOnAnActiveInstallationMergesIntoItsAccountAfterItSignsIn() async throws {
        let broker = try await Self.broker()
        let bob = try await Self.account(broker, "bob", email: "bob@example.com")
        let phone = Phone()
        _ = try await Self.activate(broker, bob, phone: phone)
        let invited = try await Self.issue(broker, ["email": "bob.work@example.com", "pin": "24680"])
        let (flow, choice) = try Self.challenge(try await Self.redeem(broker, payload: invited.payload, pin: "24680", on: phone))
        #expect(choice.fields["outcome"] == "merge" && choice.fields["choices"] == ["merge", "replace"])
        let (_, assertion) = try Self.challenge(try await Self.answer(broker, flow, ["choice": "merge"]))
        #expect(assertion.type == "assertion")
        // Another key than the installation's own is refused.
        let stranger = Phone()
        _ = try await Self.activate(broker, try await Self.account(broker, "eve"), phone: stranger)
        let nonce = try #require(assertion.fields["nonce"]?.stringValue)
        let refused = await thrownError {
            _ = try await Self.answer(broker, flow, stranger.assertion(nonce: nonce, issuer: broker.broker.config.server.issuer, now: broker.clock.now))
        }
        #expect(refused?.reason == "merge_key_mismatch")

        let invitedAgain = try await Self.issue(broker, ["email": "bob.work@example.com", "pin": "24680"])
        let (flow2, _) = try Self.challenge(try await Self.redeem(broker, payload: invitedAgain.payload, pin: "24680", on: phone))
        let (_, assertion2) = try Self.challenge(try await Self.answer(broker, flow2, ["choice": "merge"]))
        let nonce2 = try #require(assertion2.fields["nonce"]?.stringValue)
        guard
            case .completed(_, _, let account, let notice) = try await Self.answer(
                broker, flow2, phone.assertion(nonce: nonce2, issuer: broker.broker.config.server.issuer, now: broker.clock.now))
        else { Issue.record("not completed"); return }
        #expect(account?.id == bob.id)
        #expect(notice["activation"]?.objectValue?["mergedAddress"] == "bob.work@example.com")
        #expect(try await broker.store.identityLinks(accountID: bob.id).contains { $0.claims.email == "bob.work@example.com" })
    }

    @Test func aTemporaryRegistrationOnAnActiveInstallationCanReplaceWithAnAccountOfItsOwn() async throws {
        let broker = try await Self.broker()
        let bob = try await Self.account(broker, "bob")
        let phone = Phone()
        _ = try await Self.activate(broker, bob, phone: phone)
        let invited = try await Self.issue(broker, ["email": "carol@example.com", "pin": "24680"])
        let (flow, _) = try Self.challenge(try await Self.redeem(broker, payload: invited.payload, pin: "24680", on: phone))
        var carolsKey = phone
        carolsKey.key = P256.Signing.PrivateKey()
        let done = try await Self.registerKey(broker, try await Self.answer(broker, flow, ["choice": "replace"]), phone: carolsKey)
        let carol = try #require(done.account)
        #expect(carol.id != bob.id && carol.username == "carol@example.com")
        // Bob's registration on the same installation stays.
        _ = try await Self.signIn(broker, phone: phone)
        #expect(try await broker.store.installations(appID: "mobile", installationID: phone.installationID).count == 2)
    }

    // MARK: - Registration state and logout

    @Test func theRegistrationStateFollowsTheTokenItsInstallationAndLogout() async throws {
        let clock = TestClock()
        let broker = try await Self.broker(clock: clock)
        let ada = try await Self.account(broker, "ada")
        let phone = Phone()
        let tokens = try await Self.activate(broker, ada, phone: phone)
        let state = broker.broker.registrationState
        func ask(_ installation: String, _ token: String?) async throws -> [String: JSONValue] {
            try await state.state(appID: "mobile", installationID: installation, accessToken: token.map { PresentedToken(scheme: .bearer, token: $0) }).objectValue ?? [:]
        }
        #expect(try await ask(phone.installationID, nil)["state"] == "registration_required")
        let active = try await ask(phone.installationID, tokens.accessToken)
        #expect(active["state"] == "active" && active["registrationType"] == "device")
        #expect(active["account"]?.objectValue?["id"]?.stringValue == ada.id)
        // A reinstall has a new installation id: the old token is not its registration.
        let reinstalled = try await ask("install-" + UUID().uuidString, tokens.accessToken)
        #expect(reinstalled["state"] == "registration_required" && reinstalled["reason"] == "token_of_another_installation")
        clock.advance(by: 541)
        #expect(try await ask(phone.installationID, tokens.accessToken)["state"] == "renewal_required")
        clock.advance(by: 120)
        #expect(try await ask(phone.installationID, tokens.accessToken)["state"] == "renewal_required")
        // Logout with the refresh token ends the family and the access token with it.
        let refresh = try #require(tokens.refreshToken)
        try await state.logout(refreshToken: refresh, accessToken: nil, client: nil, clientIP: nil)
        let after = try await ask(phone.installationID, tokens.accessToken)
        #expect(after["state"] == "registration_required", "\(after)")
        let refused = await thrownError {
            _ = try await broker.broker.oauth.token(try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "mobile"], basic: nil))
        }
        #expect(refused?.code == .invalidGrant)
    }

    @Test func theRegistrationStateSaysAccountDeletedAfterTheAccountDeletesItself() async throws {
        let broker = try await Self.broker()
        let ada = try await Self.account(broker, "ada")
        let phone = Phone()
        let tokens = try await Self.activate(broker, ada, phone: phone)
        try await broker.broker.oauth.deregister(accessToken: PresentedToken(scheme: .bearer, token: tokens.accessToken))
        let answer =
            try await broker.broker.registrationState.state(
                appID: "mobile", installationID: phone.installationID, accessToken: PresentedToken(scheme: .bearer, token: tokens.accessToken)
            ).objectValue ?? [:]
        #expect(answer["state"] == "registration_required" && answer["reason"] == "account_deleted", "\(answer)")
        // A token that is simply not the broker's is still just not valid.
        let forged =
            try await broker.broker.registrationState.state(
                appID: "mobile", installationID: phone.installationID, accessToken: PresentedToken(scheme: .bearer, token: "x.y.z")
            ).objectValue ?? [:]
        #expect(forged["reason"] == "token_not_valid")
    }

    // MARK: - Who an activation reaches

    @Test func anAppsBackEndIssuesOnlyForAccountsTheAppKnowsAndEmailedDataAreNotAnswered() async throws {
        let broker = try await Self.broker()
        let stranger = try await broker.store.linkIdentity(ExternalIdentity(providerID: "elsewhere", subject: "sam", username: "sam"), now: broker.clock.now).account
        var app = try #require(try await broker.store.app(id: "mobile"))
        // The plugin itself holds the back end to its settings (`issueByApp`): on, to reach the rules below.
        var settings = app.policy.plugins["activation"]?.objectValue ?? [:]
        settings["issueByApp"] = .bool(true)
        app.policy.plugins["activation"] = .object(settings)
        let provider = try #require(broker.broker.plugins.identityProviders["activation"] as? ActivationProvider)
        let unknown = await thrownError { _ = try await provider.issue(ActivationRequest(accountID: stranger.id, pin: "24680"), app: app.view, issuedBy: "app") }
        #expect(unknown?.code == .notFound)
        let missing = await thrownError { _ = try await provider.issue(ActivationRequest(accountID: "nobody", pin: "24680"), app: app.view, issuedBy: "app") }
        #expect(missing?.code == unknown?.code && missing?.httpStatus == unknown?.httpStatus)
        // An administrator may name any account.
        let issued = try await provider.issue(ActivationRequest(accountID: stranger.id, pin: "24680"), app: app.view, issuedBy: "admin:ops")
        #expect(issued.json.objectValue?["payload"] != nil)
        // An account with an installation of the app is one the app knows.
        let ada = try await Self.account(broker, "ada")
        #expect(await thrownError { _ = try await provider.issue(ActivationRequest(accountID: ada.id, pin: "24680"), app: app.view, issuedBy: "app") }?.code == .notFound)
        _ = try await Self.activate(broker, ada, phone: Phone())
        #expect(try await provider.issue(ActivationRequest(accountID: ada.id, pin: "24680"), app: app.view, issuedBy: "app").json.objectValue?["payload"] != nil)
        // Naming an address, the app's back end reaches it only by email (this broker has no mail
        // transport: the issue fails instead of answering the payload).
        let byAddress = await thrownError {
            _ = try await provider.issue(ActivationRequest(email: EmailAddress("someone@example.com"), pin: "24680"), app: app.view, issuedBy: "app")
        }
        #expect(byAddress?.code == .deliveryFailed)
    }

    @Test func anAddressOnlyAnUntrustedProviderVouchesForDoesNotDrawTheActivationIntoThatAccount() async throws {
        let broker = try await Self.broker()
        // Someone's account claims victim@example.com through a provider this app does not use.
        let planted = try await broker.store.linkIdentity(
            ExternalIdentity(providerID: "elsewhere", subject: "mallory", username: "mallory", claims: IdentityClaims(email: "victim@example.com", emailVerified: true)),
            now: broker.clock.now
        ).account
        let issued = try await Self.issue(broker, ["email": "victim@example.com", "pin": "24680"])
        let phone = Phone()
        let done = try await Self.registerKey(broker, try await Self.redeem(broker, payload: issued.payload, pin: "24680", on: phone), phone: phone)
        #expect(done.account?.id != planted.id && done.account?.username == "victim@example.com")
        // A second temporary registration for the now registered address is refused, not merged in.
        let second = try await Self.issue(broker, ["email": "other@example.com", "pin": "24680"])
        let third = try await Self.issue(broker, ["email": "other@example.com", "pin": "24680"])
        let other = Phone()
        _ = try await Self.registerKey(broker, try await Self.redeem(broker, payload: second.payload, pin: "24680", on: other), phone: other)
        let refused = await thrownError { _ = try await Self.redeem(broker, payload: third.payload, pin: "24680", on: Phone()) }
        #expect(refused?.code == .invalidActivation && refused?.reason == "address_registered")
    }

    @Test func anExpiredTokenNeedsALiveSessionAndReusedRefreshTokensStopTheAccessTokensToo() async throws {
        let clock = TestClock()
        let broker = try await Self.broker(clock: clock)
        let ada = try await Self.account(broker, "ada")
        let phone = Phone()
        let tokens = try await Self.activate(broker, ada, phone: phone)
        let refresh = try #require(tokens.refreshToken)
        func refreshed(_ token: String) async throws -> IssuedTokens {
            try await broker.broker.oauth.token(try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": token, "client_id": "mobile"], basic: nil))
        }
        let renewed = try await refreshed(refresh)
        // The rotated token comes back after the app's reuse grace: the family is revoked, and the
        // access token issued with it.
        clock.advance(by: 6)
        _ = await thrownError { _ = try await refreshed(refresh) }
        #expect(await thrownError { _ = try await broker.broker.oauth.verifyAccessToken(renewed.accessToken) }?.code == .invalidToken)
        // Three days on, the revocation list has forgotten the family; the store has not.
        clock.advance(by: 3 * 86_400)
        let state = try await broker.broker.registrationState.state(
            appID: "mobile", installationID: phone.installationID, accessToken: PresentedToken(scheme: .bearer, token: renewed.accessToken)
        )
        #expect(state.objectValue?["state"] == "registration_required")
        #expect(state.objectValue?["reason"] == "session_ended")
    }

    /// Invitation and activation emails speak the app's language (`branding.defaultLanguage`), with
    /// its name, link and expiry filled in once: a name that looks like a placeholder stays as it is.
    @Test func sendsItsEmailsInTheAppsLanguage() {
        var app = AppView(id: "notes", name: "Notes {link}")
        app.language = "fr"
        let until = Date(timeIntervalSince1970: 1_800_000_000)
        let invitation = ActivationMail.invitation(app: app, link: "https://id.example/i/abc", expiresAt: until, to: EmailAddress("a@example.com")!)
        let subject = ActivationPlugin.translations.text("You are invited to {app}", in: "fr", ["app": "Notes {link}"])
        #expect(invitation.subject == subject && subject != "You are invited to Notes {link}")
        #expect(invitation.text.contains("https://id.example/i/abc") && invitation.text.contains("2027-01-15T08:00:00Z"))
        #expect(!invitation.text.contains("You are invited") && invitation.text.components(separatedBy: "https://id.example/i/abc").count == 2)
        app.language = "en"
        let activation = ActivationMail.activation(app: app, link: "https://id.example/a/xyz", expiresAt: until, to: EmailAddress("a@example.com")!)
        #expect(activation.subject == "Activate Notes {link}")
        #expect(activation.text.hasPrefix("Open this link on the device you want to use Notes {link} on:\n\nhttps://id.example/a/xyz\n"))
    }
}
