import Crypto
import DeviceKey
import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

/// The `device-key` plugin through the real flow engine and OAuth service: registration, sign-in by
/// assertion and at the JWT bearer grant, devices and installations, every refusal with its code, and
/// tokens bound to the key with DPoP (RFC 9449). Keys and JWSs are made here with swift-crypto, not
/// with the broker's code (the end-to-end suite adds a device client written in Python).
@Suite("DeviceKey")
struct DeviceKeyTests {
    static let yaml = """
        providers:
          - id: device
            type: device-key
          - id: knock
            type: knock
        apps:
          - id: notes
            policy:
              identityProviders: [device]
              selfRegistration: true
              defaultScopes: [openid, offline_access]
          - id: guarded
            policy:
              identityProviders: [device]
              authenticators: [knock]
              secondFactor: knock
              selfRegistration: true
          - id: bound
            policy:
              identityProviders: [device]
              selfRegistration: true
              defaultScopes: [openid, offline_access]
              dpop: required
              dpopNonce: true
        """

    static func broker(clock: TestClock = TestClock(), yaml: String = yaml) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(DeviceKeyPlugin.self)
        registry.register(KnockPlugin.self)
        return try await TestBroker.make(yaml: yaml, registry: registry, clock: clock)
    }

    /// The public JWK of a P-256 key.
    static func jwk(of key: P256.Signing.PrivateKey) -> JSONValue {
        let point = key.publicKey.x963Representation
        return ["kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(point[1..<33])), "y": .string(Base64URL.encode(point[33..<65]))]
    }

    /// A device: its key and what it says about itself.
    struct Phone {
        var key = P256.Signing.PrivateKey()
        var installationID = "install-" + UUID().uuidString
        var vendorID: String? = "vendor-" + UUID().uuidString

        var jwk: JSONValue { DeviceKeyTests.jwk(of: key) }

        var keyID: String { try! PublicJWK(jwk).thumbprint }

        func sign(_ claims: [String: JSONValue], header: [String: JSONValue] = ["alg": "ES256"], with key: P256.Signing.PrivateKey? = nil) -> String {
            DeviceKeyTests.jws(header: header, claims: claims, key: key ?? self.key)
        }

        func registration(nonce: String, issuer: String, proofKey: P256.Signing.PrivateKey? = nil) -> [String: JSONValue] {
            var answer: [String: JSONValue] = [
                "publicKey": jwk, "proof": .string(sign(["nonce": .string(nonce), "aud": .string(issuer)], with: proofKey)),
                "installationID": .string(installationID), "platform": "ios", "model": "iPhone15,2", "osVersion": "18.1", "appVersion": "2.0",
                "buildType": "release", "alias": "Ada's phone",
            ]
            if let vendorID { answer["vendorID"] = .string(vendorID) }
            return answer
        }

        func assertion(nonce: String?, issuer: String, now: Date, jti: String = UUID().uuidString, extra: [String: JSONValue] = [:]) -> String {
            var claims: [String: JSONValue] = ["iss": .string(keyID), "aud": .string(issuer), "iat": .number(now.timeIntervalSince1970), "jti": .string(jti)]
            if let nonce { claims["nonce"] = .string(nonce) }
            return sign(claims.merging(extra) { $1 })
        }
    }

    static func jws(header: [String: JSONValue], claims: [String: JSONValue], key: P256.Signing.PrivateKey) -> String {
        let input = Base64URL.encode(Data(JSONValue.object(header).serialized())) + "." + Base64URL.encode(Data(JSONValue.object(claims).serialized()))
        return input + "." + Base64URL.encode(try! key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    var issuerOf: (TestBroker) -> String = { $0.broker.config.server.issuer }

    func register(_ phone: Phone, at broker: TestBroker, app: String = "notes", signedIn: String? = nil) async throws -> (tokens: IssuedTokens, account: Account?) {
        let (flow, challenge) = try await broker.start(FlowRequest(appID: app, providerID: "device", purpose: .register, signedInAccountID: signedIn))
        #expect(challenge.type == "register_key")
        let nonce = try #require(challenge.fields["nonce"]?.stringValue)
        return try await broker.finish(flow, answer: phone.registration(nonce: nonce, issuer: issuerOf(broker)))
    }

    func signIn(_ phone: Phone, at broker: TestBroker, extra: [String: JSONValue] = [:]) async throws -> (tokens: IssuedTokens, account: Account?) {
        let (flow, challenge) = try await broker.start(FlowRequest(appID: "notes", providerID: "device"))
        #expect(challenge.type == "assertion")
        let nonce = try #require(challenge.fields["nonce"]?.stringValue)
        return try await broker.finish(flow, answer: ["assertion": .string(phone.assertion(nonce: nonce, issuer: issuerOf(broker), now: broker.clock.now, extra: extra))])
    }

    /// The refusal of an answer in a fresh sign-in flow.
    func refusal(_ broker: TestBroker, _ answer: (String) -> String) async throws -> BrokerError? {
        let (flow, challenge) = try await broker.start(FlowRequest(appID: "notes", providerID: "device"))
        let nonce = try #require(challenge.fields["nonce"]?.stringValue)
        return await thrownError { _ = try await broker.finish(flow, answer: ["assertion": .string(answer(nonce))]) }
    }

    static func claims(_ token: String) -> [String: JSONValue] {
        guard case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: Base64URL.decode(String(token.split(separator: ".")[1]))!) else { return [:] }
        return claims
    }

    // MARK: - Registration and sign-in

    @Test func aRegisteredKeySignsInToTheAccountItCreatedAndItsTokensNameTheKey() async throws {
        let broker = try await Self.broker()
        let phone = Phone()
        let registered = try await register(phone, at: broker)
        let account = try #require(registered.account)
        #expect(Self.claims(registered.tokens.accessToken)["device_key"] == .string(phone.keyID))
        #expect(registered.tokens.refreshToken != nil)

        let signedIn = try await signIn(phone, at: broker)
        #expect(signedIn.account?.id == account.id)
        #expect(Self.claims(signedIn.tokens.accessToken)["amr"] == ["swk", "device"])

        let devices = try await broker.store.devices(accountID: account.id)
        #expect(devices.count == 1)
        #expect(devices[0].device.alias == "Ada's phone")
        #expect(devices[0].device.platform == .ios)
        #expect(devices[0].installations.map(\.installationID) == [phone.installationID])
        #expect(devices[0].keys.map(\.id) == [phone.keyID])
        let audit = try await broker.store.auditEvents(type: "device.registered", appID: nil, accountID: account.id, since: nil, limit: 5)
        #expect(audit.first?.details["key"] == phone.keyID)
    }

    @Test func theJWTBearerGrantAcceptsAnAssertionWithoutAServerNonce() async throws {
        let broker = try await Self.broker()
        let phone = Phone()
        let account = try #require(try await register(phone, at: broker).account)
        let now = broker.clock.now
        let assertion = phone.assertion(nonce: nil, issuer: issuerOf(broker) + "/oauth2/token", now: now, extra: ["exp": .number(now.timeIntervalSince1970 + 60)])
        let form = ["grant_type": OAuthService.jwtBearerGrant, "assertion": assertion, "client_id": "notes"]
        let tokens = try await broker.broker.oauth.token(try TokenRequest(form: form, basic: nil))
        #expect(Self.claims(tokens.accessToken)["sub"] == .string(account.id))
        #expect(Self.claims(tokens.accessToken)["device_key"] == .string(phone.keyID))
        // The same assertion again is a replay.
        let replay = await thrownError { _ = try await broker.broker.oauth.token(try TokenRequest(form: form, basic: nil)) }
        #expect(replay?.code == .invalidGrant)
        #expect(replay?.reason == "assertion_replayed")
        // RFC 7523 section 3 requires exp; an assertion made for a flow's nonce is not redeemable here.
        for (extra, reason) in [([:], "assertion_expired"), (["exp": .number(now.timeIntervalSince1970 + 60), "nonce": "n"], "nonce_mismatch")]
            as [([String: JSONValue], String)]
        {
            let form = [
                "grant_type": OAuthService.jwtBearerGrant, "assertion": phone.assertion(nonce: nil, issuer: issuerOf(broker), now: now, extra: extra),
                "client_id": "notes",
            ]
            #expect(await thrownError { _ = try await broker.broker.oauth.token(try TokenRequest(form: form, basic: nil)) }?.reason == reason)
        }
    }

    @Test func aSecondDeviceJoinsTheSignedInAccountAndAnotherAccountSeesNoneOfItsDevices() async throws {
        let broker = try await Self.broker()
        let first = Phone()
        let account = try #require(try await register(first, at: broker).account)
        let second = Phone()
        let added = try await register(second, at: broker, signedIn: account.id)
        #expect(added.account?.id == account.id)
        #expect(try await broker.store.devices(accountID: account.id).count == 2)

        // Someone else on the first phone's hardware (same vendor id) gets a device of their own.
        var stranger = Phone()
        stranger.vendorID = first.vendorID
        stranger.installationID = first.installationID
        let other = try #require(try await register(stranger, at: broker).account)
        #expect(other.id != account.id)
        #expect(try await broker.store.devices(accountID: other.id).flatMap(\.keys).map(\.id) == [stranger.keyID])
        #expect(try await broker.store.devices(accountID: account.id).flatMap(\.keys).count == 2)
        // And the first account still signs in from it.
        #expect(try await signIn(first, at: broker).account?.id == account.id)
    }

    @Test func aReinstallIsANewInstallationAndTheOldInstallationsKeyNoLongerSignsIn() async throws {
        let broker = try await Self.broker()
        let old = Phone()
        let account = try #require(try await register(old, at: broker).account)
        let before = try await signIn(old, at: broker)
        var reinstalled = Phone()
        reinstalled.vendorID = old.vendorID
        let again = try await register(reinstalled, at: broker, signedIn: account.id)
        #expect(again.account?.id == account.id)
        let devices = try await broker.store.devices(accountID: account.id)
        #expect(devices.count == 1)
        #expect(devices[0].installations.map(\.installationID) == [reinstalled.installationID])
        let refused = try await refusal(broker) { old.assertion(nonce: $0, issuer: issuerOf(broker), now: broker.clock.now) }
        #expect(refused?.code.rawValue == "unknown_key")
        // What the old installation was issued is revoked.
        #expect(await thrownError { _ = try await broker.broker.oauth.verifyAccessToken(before.tokens.accessToken) }?.code == .invalidToken)
        let refresh = ["grant_type": "refresh_token", "refresh_token": before.tokens.refreshToken!, "client_id": "notes"]
        #expect(await thrownError { _ = try await broker.broker.oauth.token(try TokenRequest(form: refresh, basic: nil)) }?.code == .invalidGrant)
    }

    @Test func removingADeviceRevokesItsKeysAndEveryTokenIssuedThroughThem() async throws {
        let broker = try await Self.broker()
        let phone = Phone()
        let registered = try await register(phone, at: broker)
        let account = try #require(registered.account)
        let deviceID = try #require(try await broker.store.devices(accountID: account.id).first?.device.id)
        let token = PresentedToken.bearer(registered.tokens.accessToken)
        #expect(try await broker.broker.devices.devices(accessToken: token).count == 1)
        _ = try await broker.broker.devices.rename(deviceID, alias: "Work phone", accessToken: token)
        #expect(try await broker.store.devices(accountID: account.id).first?.device.alias == "Work phone")
        #expect(await thrownError { _ = try await broker.broker.devices.rename(deviceID, alias: "", accessToken: token) }?.code == .invalidRequest)

        try await broker.broker.devices.remove(deviceID, accessToken: token)
        #expect(try await broker.store.devices(accountID: account.id).isEmpty)
        #expect(await thrownError { _ = try await broker.broker.oauth.verifyAccessToken(registered.tokens.accessToken) }?.code == .invalidToken)
        let refresh = ["grant_type": "refresh_token", "refresh_token": registered.tokens.refreshToken!, "client_id": "notes"]
        #expect(await thrownError { _ = try await broker.broker.oauth.token(try TokenRequest(form: refresh, basic: nil)) }?.code == .invalidGrant)
        let refused = try await refusal(broker) { phone.assertion(nonce: $0, issuer: issuerOf(broker), now: broker.clock.now) }
        #expect(refused?.code.rawValue == "unknown_key")
        #expect(try await broker.store.auditEvents(type: "device.removed", appID: nil, accountID: account.id, since: nil, limit: 1).count == 1)
    }

    @Test func nothingIsStoredBeforeTheSecondFactorAndARemovedKeyCannotFinishASignIn() async throws {
        let broker = try await Self.broker()
        let phone = Phone()
        // A registration waiting at the second factor has written no key yet.
        let (flow, challenge) = try await broker.start(FlowRequest(appID: "guarded", providerID: "device", purpose: .register))
        guard
            case .challenge(_, let knock, _) = try await broker.engine.resume(
                flowID: flow, answer: ChallengeResponse(phone.registration(nonce: challenge.fields["nonce"]!.stringValue!, issuer: issuerOf(broker))), client: nil
            )
        else { Issue.record("no second factor"); return }
        #expect(knock.type == "knock")
        #expect(try await broker.store.signInKey(id: phone.keyID) == nil)
        let account = try #require(try await broker.finish(flow, answer: ["word": "open"]).account)
        #expect(try await broker.store.signInKey(id: phone.keyID) != nil)

        // A second device added while signed in waits for the factor too, and an abandoned one leaves nothing.
        let second = Phone()
        let (added, addedChallenge) = try await broker.start(FlowRequest(appID: "guarded", providerID: "device", purpose: .register, signedInAccountID: account.id))
        _ = try await broker.engine.resume(
            flowID: added, answer: ChallengeResponse(second.registration(nonce: addedChallenge.fields["nonce"]!.stringValue!, issuer: issuerOf(broker))), client: nil
        )
        #expect(try await broker.store.identityLink(providerID: "device", subject: second.keyID) == nil)
        #expect(try await broker.store.devices(accountID: account.id).count == 1)

        // A sign-in waiting at the second factor cannot finish once its device is removed.
        let (signIn, signInChallenge) = try await broker.start(FlowRequest(appID: "guarded", providerID: "device"))
        _ = try await broker.engine.resume(
            flowID: signIn,
            answer: ChallengeResponse([
                "assertion": .string(phone.assertion(nonce: signInChallenge.fields["nonce"]!.stringValue!, issuer: issuerOf(broker), now: broker.clock.now))
            ]),
            client: nil
        )
        let deviceID = try #require(try await broker.store.devices(accountID: account.id).first?.device.id)
        #expect(try await broker.store.removeDevice(id: deviceID, accountID: account.id, now: broker.clock.now) == [phone.keyID])
        let refused = await thrownError { _ = try await broker.finish(signIn, answer: ["word": "open"]) }
        #expect(refused?.code == .accessDenied)
        #expect(refused?.reason == "sign_in_key_removed")
    }

    // MARK: - Refusals

    @Test func everyRefusalHasItsCode() async throws {
        let clock = TestClock()
        let broker = try await Self.broker(clock: clock)
        let phone = Phone()
        let account = try #require(try await register(phone, at: broker).account)
        let issuer = issuerOf(broker)
        let now = clock.now

        // A proof signed by another key than the one registered.
        let (flow, challenge) = try await broker.start(FlowRequest(appID: "notes", providerID: "device", purpose: .register))
        let stranger = Phone()
        let wrongProof = stranger.registration(nonce: challenge.fields["nonce"]!.stringValue!, issuer: issuer, proofKey: P256.Signing.PrivateKey())
        #expect(await thrownError { _ = try await broker.finish(flow, answer: wrongProof) }?.code.rawValue == "invalid_proof")

        // An assertion signed by another key.
        let forged = try await refusal(broker) {
            phone.sign(
                ["iss": .string(phone.keyID), "aud": .string(issuer), "nonce": .string($0), "iat": .number(now.timeIntervalSince1970), "jti": "f1"],
                with: P256.Signing.PrivateKey())
        }
        #expect(forged?.code.rawValue == "invalid_assertion")
        // alg none (unsigned) and HS256.
        let unsigned =
            Base64URL.encode(Data(JSONValue.object(["alg": "none"]).serialized())) + "."
            + Base64URL.encode(Data(JSONValue.object(["iss": .string(phone.keyID)]).serialized())) + "."
        #expect(try await refusal(broker) { _ in unsigned }?.code.rawValue == "alg_not_allowed")
        for alg in ["none", "HS256"] {
            let refused = try await refusal(broker) {
                phone.sign(["iss": .string(phone.keyID), "aud": .string(issuer), "nonce": .string($0)], header: ["alg": .string(alg)])
            }
            #expect(refused?.code.rawValue == "alg_not_allowed")
        }
        // Another flow's nonce (a reused nonce).
        let (_, earlier) = try await broker.start(FlowRequest(appID: "notes", providerID: "device"))
        let reused = try await refusal(broker) { _ in phone.assertion(nonce: earlier.fields["nonce"]!.stringValue!, issuer: issuer, now: now) }
        #expect(reused?.code.rawValue == "nonce_mismatch")
        // Another audience.
        #expect(try await refusal(broker) { phone.assertion(nonce: $0, issuer: "https://elsewhere.example", now: now) }?.code.rawValue == "invalid_assertion")
        // A key registered to this account claiming another account.
        let claimsOther = try await refusal(broker) { phone.assertion(nonce: $0, issuer: issuer, now: now, extra: ["sub": "someone-else"]) }
        #expect(claimsOther?.code.rawValue == "account_mismatch")
        // An old iat.
        #expect(try await refusal(broker) { phone.assertion(nonce: $0, issuer: issuer, now: now.addingTimeInterval(-600)) }?.code.rawValue == "assertion_expired")
        // A reused jti.
        _ = try await signIn(phone, at: broker, extra: ["jti": "same"])
        #expect(try await refusal(broker) { phone.assertion(nonce: $0, issuer: issuer, now: now, jti: "same") }?.code.rawValue == "assertion_replayed")
        // A counter that does not grow.
        _ = try await signIn(phone, at: broker, extra: ["counter": 5])
        #expect(try await refusal(broker) { phone.assertion(nonce: $0, issuer: issuer, now: now, extra: ["counter": 5]) }?.code.rawValue == "counter_not_increasing")
        #expect(try await signIn(phone, at: broker, extra: ["counter": 6]).account?.id == account.id)
        // A key that counted keeps counting: an assertion without a counter is refused.
        #expect(try await refusal(broker) { phone.assertion(nonce: $0, issuer: issuer, now: now) }?.code.rawValue == "counter_not_increasing")

        // An expired nonce ends the flow.
        let (late, lateChallenge) = try await broker.start(FlowRequest(appID: "notes", providerID: "device"))
        clock.advance(by: 121)
        let expired = await thrownError {
            _ = try await broker.finish(
                late, answer: ["assertion": .string(phone.assertion(nonce: lateChallenge.fields["nonce"]!.stringValue!, issuer: issuer, now: clock.now))])
        }
        #expect(expired?.code.rawValue == "nonce_expired")
        #expect(try await broker.store.flow(id: late, now: clock.now) == nil)

        // The same public key twice.
        let (again, againChallenge) = try await broker.start(FlowRequest(appID: "notes", providerID: "device", purpose: .register))
        let twice = await thrownError {
            _ = try await broker.finish(again, answer: phone.registration(nonce: againChallenge.fields["nonce"]!.stringValue!, issuer: issuer))
        }
        #expect(twice?.code == .alreadyRegistered)
    }

    @Test func aStatelessFlowCannotRegisterAKeyAndAttestationRequiredRefusesPlainRegistration() async throws {
        let broker = try await Self.broker(
            yaml: """
                providers:
                  - id: device
                    type: device-key
                apps:
                  - id: notes
                    policy:
                      identityProviders: [device]
                      selfRegistration: true
                      deviceRegistration: {attestation: required}
                  - id: second
                    policy:
                      identityProviders: [device]
                      selfRegistration: true
                      deviceRegistration: {account: signedIn}
                """
        )
        let attested = await thrownError { _ = try await broker.start(FlowRequest(appID: "notes", providerID: "device", purpose: .register)) }
        #expect(attested?.code == .attestationRequired)
        let signedIn = await thrownError { _ = try await broker.start(FlowRequest(appID: "second", providerID: "device", purpose: .register)) }
        #expect(signedIn?.code == .signedInAccountRequired)
    }

    @Test func aKeyRegisteredWithoutAttestationCannotSignInWhereAttestationIsRequired() async throws {
        let broker = try await Self.broker(
            yaml: """
                providers:
                  - id: device
                    type: device-key
                apps:
                  - id: notes
                    policy: {identityProviders: [device], selfRegistration: true, deviceRegistration: {attestation: off}}
                  - id: strict
                    policy: {identityProviders: [device], selfRegistration: true, deviceRegistration: {attestation: required}}
                """
        )
        let phone = Phone()
        let registered = try await register(phone, at: broker, app: "notes")
        #expect(try await broker.store.signInKey(id: phone.keyID)?.registeredAppID == "notes")
        // At the app that requires attestation: refused in a flow...
        let (flow, challenge) = try await broker.start(FlowRequest(appID: "strict", providerID: "device"))
        let nonce = try #require(challenge.fields["nonce"]?.stringValue)
        let refused = await thrownError {
            _ = try await broker.finish(flow, answer: ["assertion": .string(phone.assertion(nonce: nonce, issuer: issuerOf(broker), now: broker.clock.now))])
        }
        #expect(refused?.code == .attestationRequired && refused?.reason == "attestation_required", "\(String(describing: refused))")
        // ...and at the JWT bearer grant; the refused assertion did not use up its jti.
        let now = broker.clock.now
        let assertion = phone.assertion(nonce: nil, issuer: issuerOf(broker) + "/oauth2/token", now: now, extra: ["exp": .number(now.timeIntervalSince1970 + 60)])
        let grant = await thrownError {
            _ = try await broker.broker.oauth.token(
                try TokenRequest(form: ["grant_type": OAuthService.jwtBearerGrant, "assertion": assertion, "client_id": "strict"], basic: nil))
        }
        #expect(grant?.code == .invalidGrant && grant?.reason == "attestation_required")
        // At the app it was registered through, it signs in as before, with the same assertion.
        let tokens = try await broker.broker.oauth.token(
            try TokenRequest(form: ["grant_type": OAuthService.jwtBearerGrant, "assertion": assertion, "client_id": "notes"], basic: nil))
        #expect(Self.claims(tokens.accessToken)["device_key"] == .string(phone.keyID))
        // An app switched to `required` afterwards stops renewing the unattested key's tokens.
        _ = try await broker.broker.admin.patchPolicy(id: "notes", patch: ["deviceRegistration": ["attestation": "required"]], by: AdminIdentity(name: "ops"))
        broker.clock.advance(by: AppCache.lifetime + 1)
        let refresh = try #require(registered.tokens.refreshToken)
        let renewal = await thrownError {
            _ = try await broker.broker.oauth.token(try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "notes"], basic: nil))
        }
        #expect(renewal?.code == .invalidGrant && renewal?.reason == "attestation_required")
    }

    @Test func aRetryWithinTheReuseGraceGetsAKeyBoundSuccessorOnlyWithThatKey() async throws {
        let broker = try await Self.broker()
        let oauth = broker.broker.oauth
        let tokenURL = issuerOf(broker) + "/oauth2/token"
        let phone = Phone()
        // A refresh token issued without DPoP (the app allows it), then rotated with a proof: its
        // successor is bound to the rotating request's key.
        let registered = try await register(phone, at: broker)
        let first = try #require(registered.tokens.refreshToken)
        func refresh(_ token: String, proofKey: P256.Signing.PrivateKey?) async throws -> IssuedTokens {
            let proof = proofKey.map { dpopProof($0, method: "POST", url: tokenURL, now: broker.clock.now) }
            return try await oauth.token(
                try TokenRequest(
                    form: ["grant_type": "refresh_token", "refresh_token": token, "client_id": "notes"], basic: nil,
                    dpop: proof.map { DPoPPresentation(proofs: [$0], method: "POST", url: tokenURL) }
                ))
        }
        let second = try #require(try await refresh(first, proofKey: phone.key).refreshToken)
        // The same client retrying (its answer was lost) with its key gets the same successor.
        #expect(try await refresh(first, proofKey: phone.key).refreshToken == second)
        // Someone else with the old token and another key (or none) is a reuse: the family goes.
        let refused = await thrownError { _ = try await refresh(first, proofKey: P256.Signing.PrivateKey()) }
        #expect(refused?.code == .invalidGrant)
        #expect(await thrownError { _ = try await refresh(second, proofKey: phone.key) }?.code == .invalidGrant, "the family was revoked")
    }

    // MARK: - DPoP

    func dpopProof(
        _ key: P256.Signing.PrivateKey, method: String, url: String, now: Date, accessToken: String? = nil, nonce: String? = nil, jti: String = UUID().uuidString
    ) -> String {
        var claims: [String: JSONValue] = ["htm": .string(method), "htu": .string(url), "iat": .number(now.timeIntervalSince1970), "jti": .string(jti)]
        if let accessToken { claims["ath"] = .string(Base64URL.sha256(accessToken)) }
        if let nonce { claims["nonce"] = .string(nonce) }
        return Self.jws(header: ["alg": "ES256", "typ": "dpop+jwt", "jwk": Self.jwk(of: key)], claims: claims, key: key)
    }

    @Test func dpopBindsTokensToTheDeviceKeyAndEveryBoundUseNeedsAFreshProof() async throws {
        let broker = try await Self.broker()
        let oauth = broker.broker.oauth
        let issuer = issuerOf(broker)
        let tokenURL = issuer + "/oauth2/token"
        let phone = Phone()
        _ = try await register(phone, at: broker)
        let now = broker.clock.now
        func grant(_ proof: String?) throws -> TokenRequest {
            try TokenRequest(
                form: [
                    "grant_type": OAuthService.jwtBearerGrant,
                    "assertion": phone.assertion(nonce: nil, issuer: issuer, now: now, extra: ["exp": .number(now.timeIntervalSince1970 + 60)]),
                    "client_id": "notes", "scope": "openid offline_access",
                ],
                basic: nil, dpop: proof.map { DPoPPresentation(proofs: [$0], method: "POST", url: tokenURL) }
            )
        }
        let bound = try await oauth.token(try grant(dpopProof(phone.key, method: "POST", url: tokenURL, now: now)))
        #expect(bound.tokenType == "DPoP")
        #expect(Self.claims(bound.accessToken)["cnf"] == ["jkt": .string(phone.keyID)])

        // Proofs for another URL or method, reused, or signed by another key than the jwk.
        let wrongURL = await thrownError { _ = try await oauth.token(try grant(dpopProof(phone.key, method: "POST", url: issuer + "/oauth2/other", now: now))) }
        #expect(wrongURL?.code == .invalidDPoPProof)
        #expect(wrongURL?.reason == "htu_mismatch")
        #expect(await thrownError { _ = try await oauth.token(try grant(dpopProof(phone.key, method: "GET", url: tokenURL, now: now))) }?.reason == "htm_mismatch")
        let once = dpopProof(phone.key, method: "POST", url: tokenURL, now: now)
        _ = try await oauth.token(try grant(once))
        #expect(await thrownError { _ = try await oauth.token(try grant(once)) }?.reason == "proof_replayed")

        // userinfo: the bound token needs the DPoP scheme and a proof with its hash.
        let userinfoURL = issuer + "/oauth2/userinfo"
        let asBearer = await thrownError { _ = try await oauth.userinfo(accessToken: .bearer(bound.accessToken)) }
        #expect(asBearer?.code == .invalidToken)
        let withProof = PresentedToken(
            scheme: .dpop, token: bound.accessToken,
            dpop: DPoPPresentation(
                proofs: [dpopProof(phone.key, method: "GET", url: userinfoURL, now: now, accessToken: bound.accessToken)], method: "GET", url: userinfoURL)
        )
        #expect(try await oauth.userinfo(accessToken: withProof)["sub"] != nil)
        let noHash = PresentedToken(
            scheme: .dpop, token: bound.accessToken,
            dpop: DPoPPresentation(proofs: [dpopProof(phone.key, method: "GET", url: userinfoURL, now: now)], method: "GET", url: userinfoURL)
        )
        #expect(await thrownError { _ = try await oauth.userinfo(accessToken: noHash) }?.reason == "ath_mismatch")
        let otherKey = PresentedToken(
            scheme: .dpop, token: bound.accessToken,
            dpop: DPoPPresentation(
                proofs: [dpopProof(P256.Signing.PrivateKey(), method: "GET", url: userinfoURL, now: now, accessToken: bound.accessToken)], method: "GET", url: userinfoURL
            )
        )
        #expect(await thrownError { _ = try await oauth.userinfo(accessToken: otherKey) }?.reason == "key_mismatch")

        // The public client's refresh token is bound: without a proof of that key it is refused.
        let refreshToken = try #require(bound.refreshToken)
        func refresh(_ proof: String?) throws -> TokenRequest {
            try TokenRequest(
                form: ["grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": "notes"], basic: nil,
                dpop: proof.map { DPoPPresentation(proofs: [$0], method: "POST", url: tokenURL) }
            )
        }
        #expect(await thrownError { _ = try await oauth.token(try refresh(nil)) }?.code == .invalidDPoPProof)
        #expect(
            await thrownError { _ = try await oauth.token(try refresh(dpopProof(P256.Signing.PrivateKey(), method: "POST", url: tokenURL, now: now))) }?.reason
                == "key_mismatch")
        let refreshed = try await oauth.token(try refresh(dpopProof(phone.key, method: "POST", url: tokenURL, now: now)))
        #expect(refreshed.tokenType == "DPoP")
        #expect(Self.claims(refreshed.accessToken)["cnf"] == ["jkt": .string(phone.keyID)])
    }

    @Test func anAppThatRequiresDPoPWithNoncesRefusesPlainRequestsAndHandsOutNonces() async throws {
        let broker = try await Self.broker()
        let issuer = issuerOf(broker)
        let phone = Phone()
        let request = FlowRequest(appID: "bound", providerID: "device", purpose: .register)
        let startURL = issuer + "/v1/flows"
        let missing = await thrownError { _ = try await broker.engine.start(request, client: nil) }
        #expect(missing?.code == .invalidDPoPProof)
        let nonce = try #require(missing?.dpopNonce)
        let withoutNonce = await thrownError {
            _ = try await broker.engine.start(
                request, client: nil,
                dpop: DPoPPresentation(proofs: [dpopProof(phone.key, method: "POST", url: startURL, now: broker.clock.now)], method: "POST", url: startURL)
            )
        }
        #expect(withoutNonce?.code == .useDPoPNonce)
        let started = try await broker.engine.start(
            request, client: nil,
            dpop: DPoPPresentation(proofs: [dpopProof(phone.key, method: "POST", url: startURL, now: broker.clock.now, nonce: nonce)], method: "POST", url: startURL)
        )
        guard case .challenge(let flow, let challenge, _) = started else { Issue.record("no challenge"); return }
        let answer = phone.registration(nonce: challenge.fields["nonce"]!.stringValue!, issuer: issuer)
        let flowURL = issuer + "/v1/flows/" + flow
        #expect(await thrownError { _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(answer), client: nil) }?.code == .invalidDPoPProof)
        let outcome = try await broker.engine.resume(
            flowID: flow, answer: ChallengeResponse(answer), client: nil,
            dpop: DPoPPresentation(proofs: [dpopProof(phone.key, method: "POST", url: flowURL, now: broker.clock.now, nonce: nonce)], method: "POST", url: flowURL)
        )
        guard case .completed(_, let tokens, _, _) = outcome else { Issue.record("not completed"); return }
        #expect(tokens.tokenType == "DPoP")
        #expect(tokens.dpopNonce != nil)
        #expect(Self.claims(tokens.accessToken)["cnf"] == ["jkt": .string(phone.keyID)])
    }
}

extension DeviceKeyTests {
    /// A key whose provider instance is no longer configured (removed, or renamed) renews nothing:
    /// its rules (attestation at this app) can no longer be asked.
    @Test func aRefreshThroughAKeyWhoseProviderIsGoneIsRefused() async throws {
        let broker = try await Self.broker()
        let phone = Phone()
        let registered = try await register(phone, at: broker)
        let refresh = try #require(registered.tokens.refreshToken)
        var registry = PluginRegistry()
        registry.register(DeviceKeyPlugin.self)
        registry.register(KnockPlugin.self)
        let renamed = Self.yaml.replacingOccurrences(of: "- id: device\n", with: "- id: handset\n").replacingOccurrences(of: "[device]", with: "[handset]")
        let restarted = try await TestBroker.make(yaml: renamed, registry: registry, temporary: broker.temporary, clock: broker.clock)
        let renewal = await thrownError {
            _ = try await restarted.broker.oauth.token(
                try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "notes"], basic: nil))
        }
        #expect(renewal?.code == .invalidGrant && renewal?.reason == "provider_removed")
    }
}
