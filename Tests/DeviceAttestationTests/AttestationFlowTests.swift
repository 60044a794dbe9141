import Crypto
import DeviceKey
import Foundation
import GatehouseCore
import GatehouseTesting
import Synchronization
import Testing

@testable import DeviceAttestation

/// The plugin through the real flow engine: `device-key` registrations with the attestation step
/// (test registration keys, Play Integrity tokens minted with the published test key and AES key,
/// DeviceCheck against a stand-in that speaks Apple's documented request and answers), the plugin as
/// a second factor, and its administration (fingerprints, secrets, test keys; removal with the admin
/// and with the app).
@Suite("Attestation flows")
struct AttestationFlowTests {
    /// An empty copy of Google's status list (the tests that need revocations give their own).
    static let statusList: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("attestation-status-\(UUID().uuidString).json").path
        FileManager.default.createFile(atPath: path, contents: Data(#"{"entries": {}}"#.utf8))
        return path
    }()

    static var yaml: String {
        """
        providers:
          - id: device
            type: device-key
          - id: attest
            type: device-attestation
            config:
              revocationList: {url: "", file: \(statusList)}
              services:
                deviceCheckProduction: http://127.0.0.1:9/devicecheck
              apps:
                notes:
                  testKeys: true
                  apple:
                    appIDs: [ABCDE12345.com.example.notes]
                    deviceCheck: {teamID: ABCDE12345, keyID: KEY1234567}
                  android:
                    packageNames: [com.example.notes]
                    playIntegrity: {deviceIntegrity: device}
                guarded:
                  testKeys: true
                  android:
                    packageNames: [com.example.notes]
                    playIntegrity: {deviceIntegrity: device}
        apps:
          - id: notes
            policy:
              identityProviders: [device]
              authenticators: [attest]
              selfRegistration: true
              deviceRegistration: {attestation: required}
          - id: guarded
            policy:
              identityProviders: [device]
              authenticators: [attest]
              secondFactor: attest
              selfRegistration: true
        """
    }

    /// Apple's DeviceCheck server as documented: checks the developer JWT (ES256, kid, iss, iat) with
    /// the key's public half and the request's fields, and answers like Apple does.
    final class DeviceCheckStandIn: OutboundHTTP {
        let publicKey: P256.Signing.PublicKey
        let requests = Mutex<[OutboundRequest]>([])

        init(publicKey: P256.Signing.PublicKey) { self.publicKey = publicKey }

        func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse {
            requests.withLock { $0.append(request) }
            guard request.method == "POST", request.url == "http://127.0.0.1:9/devicecheck/validate_device_token" else {
                return OutboundResponse(status: 404, body: Data())
            }
            let bearer = request.headers.first { $0.name == "Authorization" }?.value.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            let parts = bearer.split(separator: ".").map(String.init)
            guard parts.count == 3, let signature = Base64URL.decode(parts[2]).flatMap({ try? P256.Signing.ECDSASignature(rawRepresentation: $0) }),
                publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)),
                let header = Base64URL.decode(parts[0]).flatMap({ try? JSONDecoder().decode([String: String].self, from: $0) }), header["kid"] == "KEY1234567",
                header["alg"] == "ES256", let claims = Base64URL.decode(parts[1]).flatMap({ try? JSONDecoder().decode(JSONValue.self, from: $0) }),
                claims["iss"] == "ABCDE12345", claims["iat"]?.numberValue != nil
            else { return OutboundResponse(status: 401, body: Data("Unable to verify authorization token".utf8)) }
            guard let body = request.body.flatMap({ try? JSONDecoder().decode(JSONValue.self, from: $0) }), let token = body["device_token"]?.stringValue,
                body["transaction_id"]?.stringValue?.isEmpty == false, body["timestamp"]?.numberValue != nil
            else { return OutboundResponse(status: 400, body: Data("Missing or incorrectly formatted device token payload".utf8)) }
            switch token {
            case let token where token.hasPrefix("genuine-device"): return OutboundResponse(status: 200, body: Data())
            case "busy": return OutboundResponse(status: 429, body: Data())
            default: return OutboundResponse(status: 400, body: Data("Missing or incorrectly formatted device token payload".utf8))
            }
        }
    }

    static let deviceCheckKey = P256.Signing.PrivateKey()

    static func broker(clock: TestClock = TestClock(), http: (any OutboundHTTP)? = nil) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(DeviceKeyPlugin.self)
        registry.register(DeviceAttestationPlugin.self)
        return try await TestBroker.make(yaml: yaml, registry: registry, clock: clock, http: http ?? DeviceCheckStandIn(publicKey: deviceCheckKey.publicKey))
    }

    static let admin = AdminIdentity(name: "ops")

    /// A device with a P-256 key, answering `register_key` challenges.
    struct Phone {
        var key = P256.Signing.PrivateKey()
        var platform = "android"

        var jwk: JSONValue {
            let point = key.publicKey.x963Representation
            return ["kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(point[1..<33])), "y": .string(Base64URL.encode(point[33..<65]))]
        }

        var thumbprint: String { try! PublicJWK(jwk).thumbprint }

        func answer(nonce: String, issuer: String, attestation: JSONValue?) -> [String: JSONValue] {
            var answer: [String: JSONValue] = [
                "publicKey": jwk, "proof": .string(jws(["alg": "ES256"], ["nonce": .string(nonce), "aud": .string(issuer)], key)),
                "installationID": .string("install-" + thumbprint.prefix(12)), "platform": .string(platform),
            ]
            answer["attestation"] = attestation
            return answer
        }
    }

    static func jws(_ header: [String: JSONValue], _ claims: [String: JSONValue], _ key: P256.Signing.PrivateKey) -> String {
        let input = Base64URL.encode(Data(JSONValue.object(header).serialized())) + "." + Base64URL.encode(Data(JSONValue.object(claims).serialized()))
        return input + "." + Base64URL.encode(try! key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    /// Starts a registration; answers its nonce.
    static func startRegistration(_ broker: TestBroker, app: String = "notes", signedIn: String? = nil) async throws -> (
        flow: String, nonce: String, challenge: Challenge
    ) {
        let (flow, challenge) = try await broker.start(FlowRequest(appID: app, providerID: "device", purpose: .register, signedInAccountID: signedIn))
        return (flow, try #require(challenge.fields["nonce"]?.stringValue), challenge)
    }

    static func testKey(_ broker: TestBroker, app: String = "notes") async throws -> (kid: String, key: P256.Signing.PrivateKey) {
        let change = try await broker.broker.admin.createResourceItem("test-keys", of: .app(app), fields: [:], by: admin)
        let pem = try #require(change.shownOnce)
        return (try #require(change.item["key"]?["kid"]?.stringValue), try P256.Signing.PrivateKey(pemRepresentation: pem))
    }

    static func testToken(kid: String, key: P256.Signing.PrivateKey, nonce: String, jkt: String?, broker: TestBroker) -> JSONValue {
        var claims: [String: JSONValue] = [
            "aud": .string(broker.broker.config.server.issuer), "nonce": .string(nonce), "iat": .number(broker.clock.now.timeIntervalSince1970),
        ]
        claims["jkt"] = jkt.map(JSONValue.string)
        return ["format": "test", "token": .string(jws(["alg": "ES256", "kid": .string(kid)], claims, key))]
    }

    // MARK: - Test registration keys

    @Test func aTestKeyRegistersATestAccountWhoseKeyRemembersItsAttestation() async throws {
        let broker = try await Self.broker()
        let (kid, key) = try await Self.testKey(broker)
        let phone = Phone()
        let (flow, nonce, challenge) = try await Self.startRegistration(broker)
        #expect(challenge.fields["attestation"] == "required")
        #expect(challenge.fields["attestationFormats"]?.arrayValue?.contains("play-integrity") == true)
        let token = Self.testToken(kid: kid, key: key, nonce: nonce, jkt: phone.thumbprint, broker: broker)
        let (_, account) = try await broker.finish(flow, answer: phone.answer(nonce: nonce, issuer: broker.broker.config.server.issuer, attestation: token))
        let created = try #require(account)
        #expect(created.isTest)
        let stored = try #require(try await broker.store.signInKey(id: phone.thumbprint))
        #expect(stored.attestation == "test")
        let events = try await broker.store.auditEvents(type: "device.registered", appID: "notes", accountID: nil, since: nil, limit: 10)
        #expect(events.first?.details["attestation.testKey"] == kid)
    }

    @Test func aRequiredAttestationRefusesAPlainKeyAndEveryBadTestToken() async throws {
        let broker = try await Self.broker()
        let issuer = broker.broker.config.server.issuer
        let (kid, key) = try await Self.testKey(broker)
        let phone = Phone()
        func refusal(_ attestation: (String) -> JSONValue?) async throws -> BrokerError? {
            let (flow, nonce, _) = try await Self.startRegistration(broker)
            return await thrownError { _ = try await broker.finish(flow, answer: phone.answer(nonce: nonce, issuer: issuer, attestation: attestation(nonce))) }
        }
        #expect(try await refusal { _ in nil }?.code == .attestationRequired)
        #expect(try await refusal { _ in ["format": "play-integrity"] }?.reason == "malformed_attestation")
        #expect(try await refusal { _ in ["format": "apple-app-attest", "attestationObject": "AAAA"] }?.reason == "malformed_attestation")
        #expect(try await refusal { _ in ["format": "fido-u2f"] }?.reason == "format_not_accepted")
        #expect(try await refusal { Self.testToken(kid: kid, key: key, nonce: $0 + "x", jkt: phone.thumbprint, broker: broker) }?.reason == "challenge_mismatch")
        #expect(try await refusal { Self.testToken(kid: kid, key: key, nonce: $0, jkt: "another", broker: broker) }?.reason == "key_mismatch")
        #expect(
            try await refusal { Self.testToken(kid: kid, key: P256.Signing.PrivateKey(), nonce: $0, jkt: phone.thumbprint, broker: broker) }?.reason
                == "invalid_signature")
        #expect(try await refusal { Self.testToken(kid: "nope", key: key, nonce: $0, jkt: phone.thumbprint, broker: broker) }?.reason == "unknown_test_key")
        _ = try await broker.broker.admin.deleteResourceItem("test-keys", of: .app("notes"), key: [kid], by: Self.admin)
        #expect(try await refusal { Self.testToken(kid: kid, key: key, nonce: $0, jkt: phone.thumbprint, broker: broker) }?.reason == "unknown_test_key")
        #expect(try await broker.store.signInKey(id: phone.thumbprint) == nil)
    }

    @Test func aTestKeyNeverAddsADeviceToARealAccount() async throws {
        let broker = try await Self.broker()
        let issuer = broker.broker.config.server.issuer
        let (kid, key) = try await Self.testKey(broker)
        let real = try await broker.store.linkIdentity(ExternalIdentity(providerID: "x", subject: "ada", username: "ada"), now: broker.clock.now).account
        let phone = Phone()
        let (flow, nonce, _) = try await Self.startRegistration(broker, signedIn: real.id)
        let error = await thrownError {
            _ = try await broker.finish(
                flow,
                answer: phone.answer(nonce: nonce, issuer: issuer, attestation: Self.testToken(kid: kid, key: key, nonce: nonce, jkt: phone.thumbprint, broker: broker)))
        }
        #expect(error?.reason == "test_identity_for_real_account")
        #expect(try await broker.store.devices(accountID: real.id).isEmpty)
    }

    // MARK: - Play Integrity

    static let vectors = PublishedVectorTests.folder.appendingPathComponent("play-integrity/worldcoin-attestation-gateway-2024-token")

    /// A token in Google's exact layout, made as Google makes them: the verdict signed with ES256 by
    /// the published test key, then encrypted A256KW + A256GCM under the published AES key.
    static func integrityToken(_ verdict: JSONValue) throws -> String {
        let signer = try P256.Signing.PrivateKey(
            pemRepresentation: String(decoding: try Data(contentsOf: vectors.appendingPathComponent("jws_signing_private_key.TESTKEY.pem")), as: UTF8.self))
        let jws = Self.jws(["alg": "ES256"], verdict.objectValue!, signer)
        let aesKey = SymmetricKey(
            data: Data(
                base64Encoded: String(decoding: try Data(contentsOf: vectors.appendingPathComponent("decryption_key.b64")), as: UTF8.self).trimmingCharacters(
                    in: .whitespacesAndNewlines))!)
        let contentKey = SymmetricKey(size: .bits256)
        let header = Base64URL.encode(Data(#"{"alg":"A256KW","enc":"A256GCM"}"#.utf8))
        let wrapped = try AES.KeyWrap.wrap(contentKey, using: aesKey)
        let sealed = try AES.GCM.seal(Data(jws.utf8), using: contentKey, authenticating: Data(header.utf8))
        return [header, Base64URL.encode(wrapped), Base64URL.encode(Data(sealed.nonce)), Base64URL.encode(sealed.ciphertext), Base64URL.encode(sealed.tag)].joined(
            separator: ".")
    }

    static let certificate = Array(repeating: UInt8(0xAB), count: 32)

    static func verdict(requestHash: String, at date: Date, package: String = "com.example.notes", device: [String] = ["MEETS_DEVICE_INTEGRITY"]) -> JSONValue {
        [
            "requestDetails": [
                "requestPackageName": .string(package), "requestHash": .string(requestHash), "timestampMillis": .string(String(Int(date.timeIntervalSince1970 * 1000))),
            ],
            "appIntegrity": [
                "appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": .string(package), "certificateSha256Digest": [.string(Base64URL.encode(Data(certificate)))],
                "versionCode": "42",
            ],
            "deviceIntegrity": ["deviceRecognitionVerdict": .array(device.map(JSONValue.string))],
            "accountDetails": ["appLicensingVerdict": "LICENSED"],
        ]
    }

    static func setUpPlay(_ broker: TestBroker, app: String = "notes", by admin: AdminIdentity = admin) async throws {
        let folder = vectors
        let decryption = String(decoding: try Data(contentsOf: folder.appendingPathComponent("decryption_key.b64")), as: UTF8.self)
        let verification = String(decoding: try Data(contentsOf: folder.appendingPathComponent("verification_key.spki.b64")), as: UTF8.self)
        for (name, value) in [("play-integrity-decryption-key", decryption), ("play-integrity-verification-key", verification)] {
            _ = try await broker.broker.admin.createResourceItem("secrets", of: .app(app), fields: ["name": .string(name), "value": .string(value)], by: admin)
        }
        _ = try await broker.broker.admin.createResourceItem(
            "fingerprints", of: .app(app), fields: ["sha256": .string(SigningCertificateDigest.display(certificate))], by: admin)
    }

    @Test func aPlayIntegrityVerdictBoundToTheChallengeAndKeyRegistersTheKey() async throws {
        let broker = try await Self.broker()
        try await Self.setUpPlay(broker)
        let phone = Phone()
        let (flow, nonce, _) = try await Self.startRegistration(broker)
        let hash = DeviceAttestationProvider.requestBinding(challenge: nonce, key: try PublicJWK(phone.jwk))
        let token = try Self.integrityToken(Self.verdict(requestHash: hash, at: broker.clock.now))
        let (_, account) = try await broker.finish(
            flow,
            answer: phone.answer(nonce: nonce, issuer: broker.broker.config.server.issuer, attestation: ["format": "play-integrity", "integrityToken": .string(token)]))
        #expect(account?.isTest == false)
        #expect(try await broker.store.signInKey(id: phone.thumbprint)?.attestation == "play-integrity")
        // Secrets are listed by name, never by value.
        let secrets = try await broker.broker.admin.resourceItems("secrets", of: .app("notes")).items
        #expect(secrets.count == 2)
        #expect(!secrets.map { String(decoding: $0.serialized(), as: UTF8.self) }.joined().contains("7d5b44298bf959af"))
    }

    @Test func playIntegrityRefusesStaleOtherAppUnlistedCertificateWeakDeviceAndAnotherKeysVerdict() async throws {
        let broker = try await Self.broker()
        try await Self.setUpPlay(broker)
        let issuer = broker.broker.config.server.issuer
        let phone = Phone()
        func refusal(_ make: (String, String) throws -> JSONValue) async throws -> BrokerError? {
            let (flow, nonce, _) = try await Self.startRegistration(broker)
            let hash = DeviceAttestationProvider.requestBinding(challenge: nonce, key: try PublicJWK(phone.jwk))
            let token = try Self.integrityToken(try make(nonce, hash))
            return await thrownError {
                _ = try await broker.finish(
                    flow, answer: phone.answer(nonce: nonce, issuer: issuer, attestation: ["format": "play-integrity", "integrityToken": .string(token)]))
            }
        }
        let now = broker.clock.now
        #expect(try await refusal { _, hash in Self.verdict(requestHash: hash, at: now.addingTimeInterval(-301)) }?.reason == "verdict_stale")
        #expect(try await refusal { _, hash in Self.verdict(requestHash: hash, at: now, package: "com.example.other") }?.reason == "app_mismatch")
        #expect(try await refusal { _, hash in Self.verdict(requestHash: hash, at: now, device: ["MEETS_BASIC_INTEGRITY"]) }?.reason == "device_integrity_too_low")
        // A verdict asked for the same challenge but another key.
        let other = try PublicJWK(Phone().jwk)
        #expect(
            try await refusal { nonce, _ in Self.verdict(requestHash: DeviceAttestationProvider.requestBinding(challenge: nonce, key: other), at: now) }?.reason
                == "challenge_mismatch")
        _ = try await broker.broker.admin.deleteResourceItem("fingerprints", of: .app("notes"), key: [SigningCertificateDigest.display(Self.certificate)], by: Self.admin)
        #expect(try await refusal { _, hash in Self.verdict(requestHash: hash, at: now) }?.reason == "signing_certificate_not_allowed")
    }

    @Test func anAdminsFingerprintsGoWithTheAdminAndAnAppsSecretsWithTheApp() async throws {
        let broker = try await Self.broker()
        try await Self.setUpPlay(broker, by: AdminIdentity(name: "departed"))
        _ = try await broker.broker.admin.createResourceItem(
            "fingerprints", of: .app("notes"), fields: ["sha256": .string(String(repeating: "cd", count: 32))], by: Self.admin)
        #expect(try await broker.broker.admin.resourceItems("fingerprints", of: .app("notes")).items.count == 2)
        let removed = try await broker.broker.admin.removeWhatDepartedAdminsAdded(remaining: ["ops"])
        #expect(removed == 1)
        let left = try await broker.broker.admin.resourceItems("fingerprints", of: .app("notes")).items
        #expect(left.map { $0["addedBy"] } == ["ops"])
        let audit = try await broker.store.auditEvents(type: "device-attestation.fingerprint_removed", appID: "notes", accountID: nil, since: nil, limit: 10)
        #expect(audit.first?.details["addedBy"] == "departed")
        let error = await thrownError {
            _ = try await broker.broker.admin.createResourceItem("fingerprints", of: .app("notes"), fields: ["sha256": "not-a-digest"], by: Self.admin)
        }
        #expect(error?.code == .invalidRequest)
        let badSecret = await thrownError {
            _ = try await broker.broker.admin.createResourceItem(
                "secrets", of: .app("notes"), fields: ["name": "play-integrity-decryption-key", "value": "short"], by: Self.admin)
        }
        #expect(badSecret?.code == .invalidRequest)
        let plugin = try #require(broker.broker.plugins.all["attest"] as? DeviceAttestationProvider)
        try await broker.broker.admin.deleteApp(id: "notes", by: Self.admin)
        #expect(try await plugin.fingerprints.entries(app: "notes").isEmpty)
        #expect(try await plugin.secrets.list(app: "notes").isEmpty)
    }

    // MARK: - DeviceCheck

    @Test func deviceCheckRelaysApplesAnswersAsReasons() async throws {
        let standIn = DeviceCheckStandIn(publicKey: Self.deviceCheckKey.publicKey)
        let broker = try await Self.broker(http: standIn)
        let issuer = broker.broker.config.server.issuer
        func register(_ token: String) async throws -> BrokerError? {
            var phone = Phone()
            phone.platform = "ios"
            let (flow, nonce, _) = try await Self.startRegistration(broker)
            do {
                _ = try await broker.finish(
                    flow, answer: phone.answer(nonce: nonce, issuer: issuer, attestation: ["format": "apple-devicecheck", "deviceToken": .string(token)]))
                return nil
            } catch let error as BrokerError { return error }
        }
        // Without the key set, the operator is told what to set.
        #expect(try await register("genuine-device")?.reason == "secret_missing")
        _ = try await broker.broker.admin.createResourceItem(
            "secrets", of: .app("notes"), fields: ["name": "devicecheck-private-key", "value": .string(Self.deviceCheckKey.pemRepresentation)], by: Self.admin
        )
        #expect(try await register("genuine-device") == nil)
        // A token names no challenge and no key: it is good once.
        #expect(try await register("genuine-device")?.reason == "invalid_token")
        #expect(try await register("forged")?.reason == "invalid_token")
        #expect(try await register("busy")?.reason == "service_rate_limited")
        #expect(standIn.requests.withLock { $0.count } == 3)
        // Another key than the one Apple knows: Apple refuses the broker's credentials.
        _ = try await broker.broker.admin.createResourceItem(
            "secrets", of: .app("notes"), fields: ["name": "devicecheck-private-key", "value": .string(P256.Signing.PrivateKey().pemRepresentation)], by: Self.admin
        )
        let refused = try await register("genuine-device-2")
        #expect(refused?.reason == "service_refused_credentials")
        #expect(refused?.code == .providerUnavailable)
    }

    // MARK: - As a factor

    @Test func asASecondFactorAFreshVerdictFinishesTheSignInAndATestKeyDoesNotForARealAccount() async throws {
        let broker = try await Self.broker()
        try await Self.setUpPlay(broker, app: "guarded")
        let (kid, key) = try await Self.testKey(broker, app: "guarded")
        let issuer = broker.broker.config.server.issuer
        /// Registers a plain key at the guarded app; answers the flow and its attestation challenge.
        func factorChallenge() async throws -> (flow: String, challenge: Challenge)? {
            let (flow, challenge) = try await broker.start(FlowRequest(appID: "guarded", providerID: "device", purpose: .register))
            let nonce = try #require(challenge.fields["nonce"]?.stringValue)
            let outcome = try await broker.engine.resume(
                flowID: flow, answer: ChallengeResponse(Phone().answer(nonce: nonce, issuer: issuer, attestation: nil)), client: nil)
            guard case .challenge(_, let factor, _) = outcome else { return nil }
            return (flow, factor)
        }
        let first = try #require(try await factorChallenge())
        #expect(first.challenge.type == "attestation")
        #expect(first.challenge.fields["formats"]?.arrayValue?.contains("play-integrity") == true)
        // The Play Integrity verdict asked with the challenge's requestHash passes the factor.
        let hash = try #require(first.challenge.fields["requestHash"]?.stringValue)
        let token = try Self.integrityToken(Self.verdict(requestHash: hash, at: broker.clock.now))
        let (tokens, account) = try await broker.finish(first.flow, answer: ["format": "play-integrity", "integrityToken": .string(token)])
        #expect(!tokens.accessToken.isEmpty)
        #expect(account?.isTest == false)
        // A test key does not vouch for the real account a registration just made.
        let second = try #require(try await factorChallenge())
        let attestChallenge = try #require(second.challenge.fields["challenge"]?.stringValue)
        let wrong = await thrownError {
            _ = try await broker.finish(second.flow, answer: Self.testToken(kid: kid, key: key, nonce: attestChallenge, jkt: nil, broker: broker).objectValue!)
        }
        #expect(wrong?.reason == "test_key_for_real_account")
    }

    // MARK: - Config

    @Test func configMistakesNameTheirPath() async throws {
        let cases: [(String, String)] = [
            ("apps: {notes: {apple: {appIDs: [com.example]}}}", "providers[0].config.apps.notes.apple.appIDs[0]"),
            ("apps: {notes: {android: {packageNames: []}}}", "providers[0].config.apps.notes.android.packageNames"),
            ("apps: {notes: {android: {packageNames: [a], minimumSecurityLevel: software}}}", "providers[0].config.apps.notes.android.minimumSecurityLevel"),
            ("apps: {notes: {android: {packageNames: [a], signingCertificates: [zz]}}}", "providers[0].config.apps.notes.android.signingCertificates[0]"),
            ("apps: {notes: {formats: [play-integrity]}}", "providers[0].config.apps.notes.formats[0]"),
            (
                "apps: {notes: {android: {packageNames: [a], playIntegrity: {deviceIntegrity: great}}}}",
                "providers[0].config.apps.notes.android.playIntegrity.deviceIntegrity"
            ),
            ("revocationList: {url: 'http://example.com/status'}", "providers[0].config.revocationList.url"),
            ("challengeLifetime: 5", "providers[0].config.challengeLifetime"),
        ]
        var registry = PluginRegistry()
        registry.register(DeviceKeyPlugin.self)
        registry.register(DeviceAttestationPlugin.self)
        for (config, path) in cases {
            let yaml = "providers:\n  - id: attest\n    type: device-attestation\n    config: {\(config)}\n"
            let error = await thrownError(ConfigIssues.self) { _ = try await TestBroker.make(yaml: yaml, registry: registry) }
            #expect(error?.issues.contains { $0.path == path } == true, "\(config): \(error?.description ?? "no error")")
        }
    }
}
