import Crypto
import Foundation
import GatehouseAttestation
import GatehousePluginKit
import GatehouseSupport
import Logging

/// One `device-attestation` instance: checks each format's evidence against the app's settings, for
/// `device-key` registrations (`DeviceAttesting`) and as a factor of its own (`Authenticator`: the
/// `attestation` challenge). Its administrators manage each app's signing-certificate fingerprints,
/// secrets and test registration keys.
public struct DeviceAttestationProvider: Authenticator, DeviceAttesting {
    public let id: String
    let config: DeviceAttestationPlugin.Config
    let environment: PluginEnvironment
    let devices: DeviceDirectory
    let appAttest: AppAttestVerifier
    let android: AndroidKeyAttestationVerifier
    let revocations: RevocationListSource
    let secrets: AttestationSecrets
    let fingerprints: SigningCertificateList
    let testKeys: TestRegistrationKeys

    init(id: String, config: DeviceAttestationPlugin.Config, environment: PluginEnvironment, devices: DeviceDirectory) throws {
        self.id = id
        self.config = config
        self.environment = environment
        self.devices = devices
        appAttest = AppAttestVerifier(rootCertificates: DeviceAttestationTrust.appleRoots)
        android = AndroidKeyAttestationVerifier(trustedKeys: DeviceAttestationTrust.googleRootKeys)
        revocations = try RevocationListSource(settings: config.revocationList, http: environment.http, clock: environment.clock, logger: environment.logger)
        secrets = AttestationSecrets(storage: environment.storage, clock: environment.clock)
        fingerprints = SigningCertificateList(storage: environment.storage, clock: environment.clock)
        testKeys = TestRegistrationKeys(storage: environment.storage, clock: environment.clock)
    }

    // MARK: - DeviceAttesting

    public func attestationFormats(for app: AppView) -> [String] {
        config.apps[app.id]?.formats.map(\.rawValue) ?? []
    }

    public func verifyRegistration(_ evidence: AttestationEvidence, app: AppView) async throws -> AttestationVerdict {
        do {
            return try await verify(evidence, app: app)
        } catch let refusal as AttestationRefusal {
            environment.logger.info(
                "device attestation refused", metadata: ["app": .string(app.id), "format": .string(evidence.format), "reason": .string(refusal.reason.rawValue)])
            throw refusal.brokerError
        }
    }

    public func verifyKeyAssertion(_ assertion: String, key: SignInKey, challenge: String, app: AppView) async throws -> Int {
        do {
            guard key.attestation == AttestationFormat.appleAppAttest.rawValue, let settings = config.apps[app.id]?.apple else {
                throw AttestationRefusal(.formatNotAccepted, "This key signs assertions as a JWS, not with App Attest.")
            }
            guard let object = Data(base64Encoded: assertion), let point = Self.point(of: key.publicKey) else {
                throw AttestationRefusal(.malformed, "The App Attest assertion must be base64 CBOR.")
            }
            var last: AttestationRefusal?
            for appID in settings.appIDs {
                do {
                    return try appAttest.verifyAssertion(Array(object), clientData: Array(challenge.utf8), publicKey: point, appID: appID, lastCounter: key.counter ?? 0)
                } catch { last = error }
            }
            throw last ?? AttestationRefusal(.appMismatch, "The app has no Apple app id set up.")
        } catch let refusal as AttestationRefusal {
            throw refusal.brokerError
        }
    }

    /// The format's check, with the app's settings.
    func verify(_ evidence: AttestationEvidence, app: AppView) async throws -> AttestationVerdict {
        guard let settings = config.apps[app.id], let format = AttestationFormat(rawValue: evidence.format), settings.formats.contains(format) else {
            let accepted = config.apps[app.id]?.formats.map(\.rawValue).joined(separator: ", ") ?? ""
            throw AttestationRefusal(
                .formatNotAccepted, "This app does not accept '\(evidence.format)' attestations\(accepted.isEmpty ? "" : " (it accepts \(accepted))").")
        }
        let now = environment.clock.now
        switch format {
        case .appleAppAttest:
            return try appleAppAttest(evidence, settings: settings.apple!, now: now)
        case .androidKeyAttestation:
            return try await androidKeyAttestation(evidence, app: app, settings: settings.android!, now: now)
        case .playIntegrity:
            return try await playIntegrity(evidence, app: app, settings: settings.android!, now: now)
        case .appleDeviceCheck:
            return try await deviceCheck(evidence, app: app, settings: settings.apple!.deviceCheck!, now: now)
        case .test:
            return try await testKeys.verify(evidence, app: app, audience: environment.issuer, now: now)
        }
    }

    func appleAppAttest(_ evidence: AttestationEvidence, settings: AppAttestationSettings.Apple, now: Date) throws(AttestationRefusal) -> AttestationVerdict {
        guard let object = evidence.fields["attestationObject"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else {
            throw AttestationRefusal(.malformed, "An App Attest attestation needs 'attestationObject' (base64).")
        }
        let keyID = try evidence.fields["keyID"].map { value throws(AttestationRefusal) in
            guard let bytes = value.stringValue.flatMap({ Data(base64Encoded: $0) ?? Base64URL.decode($0) }) else {
                throw AttestationRefusal(.malformed, "'keyID' must be base64.")
            }
            return Array(bytes)
        }
        let attested = try appAttest.verifyAttestation(
            Array(object), keyID: keyID, clientDataHash: Array(SHA256.hash(data: Data(evidence.challenge.utf8))), appIDs: settings.appIDs,
            environments: settings.environments, at: now
        )
        let jwk = try Self.jwk(point: attested.publicKey)
        return AttestationVerdict(
            format: AttestationFormat.appleAppAttest.rawValue, attestedKey: jwk, platformKeyID: Base64URL.encode(Data(attested.keyID)), counter: 0,
            facts: ["platform": "ios", "appID": attested.appID, "environment": attested.environment]
        )
    }

    func androidKeyAttestation(_ evidence: AttestationEvidence, app: AppView, settings: AppAttestationSettings.Android, now: Date) async throws -> AttestationVerdict {
        guard let encoded = evidence.fields["certificateChain"]?.arrayValue, (2...10).contains(encoded.count) else {
            throw AttestationRefusal(.malformed, "An Android key attestation needs 'certificateChain': 2 to 10 base64 DER certificates, the attested key's first.")
        }
        let chain: [AttestationCertificate]
        do {
            chain = try encoded.map { value in
                guard let der = value.stringValue.flatMap({ Data(base64Encoded: $0) }) else { throw AttestationCertificate.Malformed() }
                return try AttestationCertificate(der: Array(der))
            }
        } catch { throw AttestationRefusal(.malformed, "A certificate of the chain does not parse.") }
        let rules = AndroidKeyAttestationVerifier.Rules(
            challenge: Array(evidence.challenge.utf8), minimumSecurityLevel: settings.securityLevel, packageNames: Set(settings.packageNames),
            signingCertificates: Set(try await fingerprints.digests(app: app.id, configured: settings.signingCertificates).compactMap(SigningCertificateDigest.bytes)),
            requireVerifiedBoot: settings.requireVerifiedBoot
        )
        let verdict = try android.verify(chain: chain, rules: rules, revoked: try await revocations.current(), at: now)
        guard let key = try? P256.Signing.PublicKey(derRepresentation: verdict.publicKeyInfo) else {
            throw AttestationRefusal(.keyMismatch, "The attested key must be an EC P-256 key (ES256).")
        }
        let jwk = try Self.jwk(point: Array(key.x963Representation))
        if let sent = evidence.key, sent.thumbprint != jwk.thumbprint { throw AttestationRefusal(.keyMismatch, "The attested key is not the key being registered.") }
        var facts = [
            "platform": "android", "securityLevel": verdict.description.attestationSecurityLevel.name,
            "keymasterSecurityLevel": verdict.description.keymasterSecurityLevel.name,
            "attestationVersion": String(verdict.description.attestationVersion), "provisioning": verdict.factoryProvisioned ? "factory" : "remote",
        ]
        if let package = verdict.description.packages.first { facts["package"] = package.name }
        if let trust = verdict.description.rootOfTrust { facts["deviceLocked"] = String(trust.deviceLocked) }
        return AttestationVerdict(format: AttestationFormat.androidKeyAttestation.rawValue, attestedKey: jwk, facts: facts)
    }

    func playIntegrity(_ evidence: AttestationEvidence, app: AppView, settings: AppAttestationSettings.Android, now: Date) async throws -> AttestationVerdict {
        guard let play = settings.playIntegrity else { throw AttestationRefusal(.formatNotAccepted, "Play Integrity is not set up for this app.") }
        guard let token = evidence.fields["integrityToken"]?.stringValue, !token.isEmpty else {
            throw AttestationRefusal(.malformed, "A Play Integrity attestation needs 'integrityToken'.")
        }
        let verdict: [String: JSONValue]
        if play.decode == "google" {
            let decoder = PlayIntegrityDecoder(baseURL: config.services.playIntegrity, http: environment.http, clock: environment.clock)
            verdict = try await decoder.decode(token, packageName: settings.packageNames[0], serviceAccount: try await secrets.require(.playServiceAccount, app: app.id))
        } else {
            let decryption = try PlayIntegrityKeys.decryptionKey(String(decoding: try await secrets.require(.playDecryptionKey, app: app.id), as: UTF8.self))
            let verification = try PlayIntegrityKeys.verificationKey(String(decoding: try await secrets.require(.playVerificationKey, app: app.id), as: UTF8.self))
            verdict = try PlayIntegrityVerifier.open(token: token, decryptionKey: decryption, verificationKey: verification)
        }
        let rules = PlayIntegrityVerifier.Rules(
            packageNames: Set(settings.packageNames), requestBinding: Self.requestBinding(challenge: evidence.challenge, key: evidence.key),
            signingCertificates: Set(try await fingerprints.digests(app: app.id, configured: settings.signingCertificates).map(SigningCertificateDigest.normalize)),
            requirePlayRecognized: play.requirePlayRecognized, deviceIntegrity: play.deviceIntegrity, requireLicensed: play.requireLicensed,
            maxAge: play.maxAge.timeInterval
        )
        var facts = try PlayIntegrityVerifier.evaluate(verdict, rules: rules, now: now)
        facts["platform"] = "android"
        return AttestationVerdict(format: AttestationFormat.playIntegrity.rawValue, facts: facts)
    }

    func deviceCheck(_ evidence: AttestationEvidence, app: AppView, settings: AppAttestationSettings.Apple.DeviceCheck, now: Date) async throws -> AttestationVerdict {
        guard let token = evidence.fields["deviceToken"]?.stringValue, !token.isEmpty, token.utf8.count <= 8192 else {
            throw AttestationRefusal(.malformed, "A DeviceCheck attestation needs 'deviceToken' (base64, as DCDevice.generateToken makes it).")
        }
        let client = DeviceCheckClient(
            baseURL: settings.environment == "development" ? config.services.deviceCheckDevelopment : config.services.deviceCheckProduction, teamID: settings.teamID,
            keyID: settings.keyID, http: environment.http, clock: environment.clock, logger: environment.logger
        )
        let privateKey = try await secrets.require(.deviceCheckKey, app: app.id)
        // A DeviceCheck token names no challenge and no key: it is used once, or one token lifted from
        // a genuine device would vouch for any number of keys.
        guard try await environment.storage.insert(true, key: "devicecheck-token/" + SecretDigest.sha256Hex(token), expiresAt: now.addingTimeInterval(7 * 86_400)) else {
            throw AttestationRefusal(.invalidToken, "This DeviceCheck token was used before; generate a new one.")
        }
        try await client.validate(deviceToken: token, privateKey: privateKey)
        return AttestationVerdict(format: AttestationFormat.appleDeviceCheck.rawValue, facts: ["platform": "ios", "environment": settings.environment])
    }

    /// What a Play Integrity request must carry as `requestHash` (or classic `nonce`): base64url of
    /// SHA-256 over the challenge, then `.` and the key's thumbprint when a key is being registered,
    /// so that the verdict was asked for this flow and this key.
    static func requestBinding(challenge: String, key: PublicJWK?) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data((challenge + (key.map { "." + $0.thumbprint } ?? "")).utf8))))
    }

    static func jwk(point: [UInt8]) throws(AttestationRefusal) -> PublicJWK {
        guard point.count == 65, point[0] == 4 else { throw AttestationRefusal(.keyMismatch, "The attested key is not an uncompressed P-256 point.") }
        let members: JSONValue = .object([
            "kty": .string("EC"), "crv": .string("P-256"), "x": .string(Base64URL.encode(Data(point[1..<33]))), "y": .string(Base64URL.encode(Data(point[33..<65]))),
        ])
        do { return try PublicJWK(members) } catch { throw AttestationRefusal(.keyMismatch, "The attested key is not a usable P-256 key.") }
    }

    /// The uncompressed point of a stored P-256 JWK.
    static func point(of jwk: JSONValue) -> [UInt8]? {
        guard let x = jwk["x"]?.stringValue.flatMap(Base64URL.decode), let y = jwk["y"]?.stringValue.flatMap(Base64URL.decode), x.count == 32, y.count == 32 else {
            return nil
        }
        return [4] + Array(x) + Array(y)
    }

    // MARK: - Authenticator

    struct State: Codable, Sendable {
        var challenge: String
        var expiresAt: Date
    }

    public func begin(in context: FlowContext) async throws -> FlowStep {
        let formats = attestationFormats(for: context.app)
        guard !formats.isEmpty else {
            throw BrokerError(.providerNotAllowed, .forbidden, "Device attestation is not set up for this app (\(id).config.apps.\(context.app.id)).")
        }
        let state = State(challenge: RandomToken.make(), expiresAt: environment.clock.now.addingTimeInterval(config.challengeLifetime.timeInterval))
        let fields: [String: JSONValue] = [
            "challenge": .string(state.challenge), "challengeExpiresAt": .string(ISO8601DateFormatter().string(from: state.expiresAt)),
            "formats": .array(formats.map(JSONValue.string)),
            "requestHash": .string(Self.requestBinding(challenge: state.challenge, key: nil)),
        ]
        return .challenge(Challenge(type: Self.attestationChallenge.type, fields: fields), state: state)
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let current = try context.state(State.self)
        guard environment.clock.now < current.expiresAt else {
            throw BrokerError(.invalidAttestation, .badRequest, "The challenge has expired; start a new flow.").publicly(because: "challenge_expired").endingFlow()
        }
        let evidence = AttestationEvidence(
            format: try answer.string("format"), fields: answer.values, challenge: current.challenge, key: nil, platform: Self.platform(of: try answer.string("format"))
        )
        let verdict = try await verifyRegistration(evidence, app: context.app)
        if verdict.isTest, context.account?.isTest != true {
            throw BrokerError(.invalidAttestation, .failedAttempt, "A test registration key vouches for test accounts only.").publicly(
                because: "test_key_for_real_account")
        }
        return .verified(FactorResult(authenticatorID: id, method: "attestation"))
    }

    static func platform(of format: String) -> DevicePlatform {
        format.hasPrefix("apple") ? .ios : format == "test" ? .web : .android
    }

    // MARK: - Forgetting

    /// A deleted app's fingerprints, secrets and test keys go; so do the fingerprints added by admins
    /// who are gone (Sudo Platform's rule), each an audited change.
    public func forget(_ departure: Departure) async throws -> [AdminChange] {
        switch departure {
        case .app(let appID):
            try await fingerprints.removeAll(app: appID)
            try await secrets.removeAll(app: appID)
            try await testKeys.removeAll(app: appID)
            return []
        case .admins(let remaining):
            return try await adminsDeparted(remaining: remaining)
        case .identity, .account:
            return []
        }
    }

    static let attestationChallenge = ChallengeDescription(
        type: "attestation",
        summary:
            "Prove the request comes from a genuine app on a genuine device: answer with `format` and that format's evidence (`attestationObject`, `certificateChain`, `integrityToken`, `deviceToken` or `token`), bound to `challenge`.",
        title: "Verify this device", submitLabel: "Verify",
        elements: [
            .text("format", label: "Format", maxLength: 64), .text("attestationObject", label: "App Attest attestation object (base64)", maxLength: 16_384),
            .text("keyID", label: "App Attest key id", maxLength: 128), .json("certificateChain", label: "Android key attestation chain", maxLength: 32_768),
            .text("integrityToken", label: "Play Integrity token", maxLength: 16_384), .text("deviceToken", label: "DeviceCheck token", maxLength: 8192),
            .text("token", label: "Test registration token", maxLength: 4096),
            .detail("challenge", .string, "What the evidence binds: App Attest's clientData, Android's attestation challenge, the test token's nonce."),
            .detail("challengeExpiresAt", .string, "When the challenge stops working (RFC 3339)."), .detail("formats", .array, "The formats this app accepts."),
            .detail("requestHash", .string, "The Play Integrity requestHash (or classic nonce) to ask for."),
        ])
}

/// The trust anchors, parsed once.
enum DeviceAttestationTrust {
    static let appleRoots = try! AttestationCertificate.certificates(pem: TrustAnchors.appleAppAttestationRoot)
    static let googleRootKeys: [[UInt8]] = try!
        (AttestationCertificate.certificates(pem: TrustAnchors.googleHardwareAttestationRoot)
        + AttestationCertificate.certificates(pem: TrustAnchors.googleKeyAttestationCA1)).map(\.publicKeyInfo)
}

/// Play Integrity keys as the Play Console hands them out.
enum PlayIntegrityKeys {
    /// The decryption key: base64 of the 32 bytes of the AES-256 key.
    static func decryptionKey(_ text: String) throws(AttestationRefusal) -> SymmetricKey {
        guard let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32 else {
            throw AttestationRefusal(.serviceRefusedCredentials, "The app's Play Integrity decryption key is not base64 of 32 bytes; set it again.")
        }
        return SymmetricKey(data: bytes)
    }

    /// The verification key: base64 of an EC P-256 SubjectPublicKeyInfo (or a PEM public key).
    static func verificationKey(_ text: String) throws(AttestationRefusal) -> P256.Signing.PublicKey {
        if text.contains("BEGIN"), let key = try? P256.Signing.PublicKey(pemRepresentation: text) { return key }
        guard let der = Data(base64Encoded: text.filter { !$0.isWhitespace }), let key = try? P256.Signing.PublicKey(derRepresentation: der) else {
            throw AttestationRefusal(.serviceRefusedCredentials, "The app's Play Integrity verification key is not a base64 EC P-256 public key; set it again.")
        }
        return key
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension DeviceAttestationProvider: AdminResourceOffering {}
extension DeviceAttestationProvider: Forgetting {}
