import Foundation
import GatehousePluginKit
import GatehouseSupport

/// One `device-key` instance. Registration (`purpose: register`) answers a `register_key` challenge
/// with a new public key, a proof of possession (a JWS over the challenge's nonce and the broker's
/// issuer, signed by that key) and the device's facts; sign-in answers an `assertion` challenge
/// with a JWS signed by a registered key. The same assertions, without a server nonce, are accepted
/// at the JWT bearer grant.
public struct DeviceKeyProvider: IdentityProvider {
    public var traits: PluginTraits { PluginTraits(registration: .device) }
    public let id: String
    let config: DeviceKeyPlugin.Config
    let environment: PluginEnvironment
    let devices: DeviceDirectory

    init(id: String, config: DeviceKeyPlugin.Config, environment: PluginEnvironment, devices: DeviceDirectory) {
        self.id = id
        self.config = config
        self.environment = environment
        self.devices = devices
    }

    /// What a flow keeps between its two steps: the nonce it handed out, and until when it works.
    struct State: Codable, Sendable {
        var nonce: String
        var expiresAt: Date
    }

    public func begin(in context: FlowContext) async throws -> FlowStep {
        var fields: [String: JSONValue] = [:]
        if context.purpose == .register {
            let rule = try context.app.settings(DeviceKeySettings.self, for: id)
            if rule.attestation != .off {
                let formats = context.deviceAttestation?.attestationFormats(for: context.app) ?? []
                if rule.attestation == .required, formats.isEmpty {
                    throw BrokerError(
                        .attestationRequired, .forbidden,
                        "This app requires device attestation, but no device-attestation provider set up for it is in its policy: an administrator adds one."
                    )
                }
                fields["attestation"] = .string(rule.attestation.rawValue)
                fields["attestationFormats"] = .array(formats.map(JSONValue.string))
            }
            switch (rule.account, context.signedInAccountID) {
            case (.signedIn, nil):
                throw BrokerError(
                    .signedInAccountRequired, .forbidden, "This app adds device keys only to a signed-in account: start the flow with the account's access token."
                )
            case (.new, .some):
                throw BrokerError(.invalidRequest, .badRequest, "This app registers device keys only as new accounts; start the flow without an access token.")
            default: break
            }
        }
        let state = State(nonce: RandomToken.make(), expiresAt: environment.clock.now.addingTimeInterval(config.nonceLifetime.timeInterval))
        fields.merge([
            "nonce": .string(state.nonce), "nonceExpiresAt": .string(ISO8601DateFormatter().string(from: state.expiresAt)), "audience": .string(environment.issuer),
            "algorithms": .array(config.algorithms.map(JSONValue.string)),
        ]) { _, new in new }
        let type = context.purpose == .register ? Self.registerChallenge.type : Self.assertionChallenge.type
        return .challenge(Challenge(type: type, fields: fields), state: state)
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let current = try context.state(State.self)
        do {
            guard environment.clock.now < current.expiresAt else { throw DeviceKeyRefusal(.nonceExpired, "The challenge's nonce has expired; start a new flow.") }
            if context.purpose == .register {
                return .identified(try await register(answer, nonce: current.nonce, context: context))
            }
            if answer.values["appAttestAssertion"] != nil {
                return .identified(try await verifyAppAttest(answer, nonce: current.nonce, context: context))
            }
            let identity = try await verify(try answer.string("assertion"), nonce: current.nonce, app: context.app)
            return .identified(identity)
        } catch let refusal as DeviceKeyRefusal {
            throw refusal.flowError
        }
    }

    public func verifyAssertion(_ assertion: String, for app: AppView) async throws -> ExternalIdentity {
        do {
            return try await verify(assertion, nonce: nil, app: app)
        } catch let refusal as DeviceKeyRefusal {
            throw refusal.grantError
        }
    }

    // MARK: - Registration

    /// Checks the new key, its attestation where the app asks for one, and its proof of possession
    /// (a key the attestation itself vouches for, bound to the nonce, needs none: App Attest keys
    /// cannot sign a JWS); the engine stores the key once it knows the account.
    func register(_ answer: ChallengeResponse, nonce: String, context: FlowContext) async throws -> ExternalIdentity {
        let facts = try DeviceFacts(answer: answer)
        var sentKey: PublicJWK?
        if let keyValue = answer.values["publicKey"], keyValue != .null {
            do { sentKey = try PublicJWK(keyValue) } catch { throw DeviceKeyRefusal(.invalidKey, "The public key is not accepted: \(error.message).") }
        }
        let verdict = try await attestation(answer, nonce: nonce, key: sentKey, platform: facts.platform, context: context)
        let key: PublicJWK
        if let attested = verdict?.attestedKey {
            if let sentKey, sentKey.thumbprint != attested.thumbprint {
                throw DeviceKeyRefusal(.invalidKey, "The public key is not the key the attestation vouches for.")
            }
            key = attested
        } else {
            guard let sentKey else { throw BrokerError.invalidAnswer("The answer needs the public key as a JWK in 'publicKey'.") }
            key = sentKey
        }
        guard let algorithm = key.algorithms.first(where: config.algorithms.contains) else {
            throw DeviceKeyRefusal(.invalidKey, "Keys of this type are not accepted here; use \(config.algorithms.joined(separator: " or ")).")
        }
        if verdict?.attestedKey == nil || answer.values["proof"] != nil {
            guard let proof = CompactJWS(try answer.string("proof")) else { throw DeviceKeyRefusal(.invalidProof, "The proof is not a compact JWS.") }
            guard proof.algorithm == algorithm else {
                throw DeviceKeyRefusal(.algorithmNotAllowed, "The proof must be signed with \(algorithm), the key's algorithm.")
            }
            guard proof.isSigned(by: key, allowed: [algorithm]) else { throw DeviceKeyRefusal(.invalidProof, "The proof is not signed by the public key sent.") }
            guard let sent = proof.claims["nonce"]?.stringValue, SecretDigest.constantTimeEquals(sent, nonce) else {
                throw DeviceKeyRefusal(.nonceMismatch, "The proof does not carry the challenge's nonce.")
            }
            guard Self.audiences(proof.claims).contains(environment.issuer) else {
                throw DeviceKeyRefusal(.invalidProof, "The proof's aud must be the broker's issuer (\(environment.issuer)).")
            }
        }
        let keyID = verdict?.platformKeyID ?? key.thumbprint
        let registration = NewSignInKey(
            keyID: keyID, publicKey: key.json, thumbprint: key.thumbprint, algorithm: algorithm, counter: verdict?.counter, attestation: verdict?.format, device: facts,
            attestationFacts: verdict?.facts
        )
        var identity = ExternalIdentity(
            providerID: id, subject: keyID, username: "device-" + keyID.prefix(8), methods: [verdict == nil ? "swk" : "hwk"], isTest: verdict?.isTest ?? false
        )
        identity.newSignInKey = registration
        return identity
    }

    /// The attestation step: checked by the app's device-attestation provider when the answer brings
    /// one and the app's policy asks for attestation; required when the policy says so.
    func attestation(_ answer: ChallengeResponse, nonce: String, key: PublicJWK?, platform: DevicePlatform, context: FlowContext) async throws -> AttestationVerdict? {
        let rule = try context.app.settings(DeviceKeySettings.self, for: id).attestation
        guard rule != .off else { return nil }
        guard let value = answer.values["attestation"], value != .null else {
            if rule == .required {
                throw BrokerError(.attestationRequired, .badRequest, "This app requires device attestation: answer with 'attestation' ({format, ...}).")
            }
            return nil
        }
        guard case .object(let fields) = value, let format = fields["format"]?.stringValue else {
            throw BrokerError.invalidAnswer("'attestation' must be an object naming its 'format'.")
        }
        guard let attesting = context.deviceAttestation else {
            throw BrokerError(.attestationRequired, .forbidden, "No device-attestation provider is set up for this app.")
        }
        let verdict = try await attesting.verifyRegistration(
            AttestationEvidence(format: format, fields: fields, challenge: nonce, key: key, platform: platform), app: context.app)
        if let attestedPlatform = verdict.facts["platform"], attestedPlatform != platform.rawValue {
            throw BrokerError.invalidAnswer("The attestation is from an \(attestedPlatform) device, but 'platform' says \(platform.rawValue).")
        }
        return verdict
    }

    // MARK: - Assertions

    /// Checks an assertion in the order that never uses a key on a token it should not: shape and
    /// `alg`, the key its `iss` names, the signature, audience, nonce, times, subject, the counter and
    /// last the replay cache (so that a refused assertion does not use up its `jti`).
    func verify(_ text: String, nonce: String?, app: AppView) async throws -> ExternalIdentity {
        guard let assertion = CompactJWS(text) else { throw DeviceKeyRefusal(.invalidAssertion, "The assertion is not a compact JWS.") }
        guard let algorithm = assertion.algorithm, config.algorithms.contains(algorithm) else {
            throw DeviceKeyRefusal(.algorithmNotAllowed, "The assertion's alg must be one of \(config.algorithms.joined(separator: ", ")).")
        }
        guard let keyID = assertion.claims["iss"]?.stringValue, let key = try await devices.signInKey(id: keyID), key.providerID == id else {
            throw DeviceKeyRefusal(.unknownKey, "No key with the assertion's iss is registered (or its device was removed); register the device again.")
        }
        guard key.algorithm == algorithm, let publicKey = try? PublicJWK(key.publicKey), assertion.isSigned(by: publicKey, allowed: [key.algorithm]) else {
            throw DeviceKeyRefusal(.invalidAssertion, "The assertion is not signed by the key its iss names.")
        }
        try checkPolicy(of: key, at: app)
        let audiences = Self.audiences(assertion.claims)
        let accepted = nonce == nil ? [environment.issuer, environment.issuer + "/oauth2/token"] : [environment.issuer]
        guard audiences.contains(where: accepted.contains) else {
            throw DeviceKeyRefusal(.invalidAssertion, "The assertion's aud must be the broker's issuer (\(environment.issuer)).")
        }
        if let nonce {
            guard let sent = assertion.claims["nonce"]?.stringValue, SecretDigest.constantTimeEquals(sent, nonce) else {
                throw DeviceKeyRefusal(.nonceMismatch, "The assertion does not carry the challenge's nonce.")
            }
        } else {
            // At the grant: an assertion made for a flow (it answers a nonce) is not redeemable here,
            // and RFC 7523 section 3 requires `exp`.
            guard assertion.claims["nonce"] == nil else { throw DeviceKeyRefusal(.nonceMismatch, "An assertion made for a flow's nonce answers that flow only.") }
            guard assertion.claims["exp"] != nil else { throw DeviceKeyRefusal(.assertionExpired, "An assertion at the JWT bearer grant needs an exp (RFC 7523).") }
        }
        let now = environment.clock.now
        let lifetime = config.assertionLifetime.timeInterval
        let skew = config.clockSkew.timeInterval
        guard let issuedAt = assertion.time("iat"), issuedAt <= now.addingTimeInterval(skew), issuedAt >= now.addingTimeInterval(-lifetime) else {
            throw DeviceKeyRefusal(.assertionExpired, "The assertion's iat must be within the last \(Int(lifetime)) seconds.")
        }
        if assertion.claims["exp"] != nil {
            guard let expiresAt = assertion.time("exp"), expiresAt > now.addingTimeInterval(-skew), expiresAt.timeIntervalSince(issuedAt) <= lifetime else {
                throw DeviceKeyRefusal(.assertionExpired, "The assertion has expired, or asks for a lifetime longer than \(Int(lifetime)) seconds.")
            }
        }
        if let subject = assertion.claims["sub"] {
            guard subject.stringValue == key.id || subject.stringValue == key.accountID else {
                throw DeviceKeyRefusal(.accountMismatch, "The assertion's sub names another account than the key's.")
            }
        }
        guard let jti = assertion.claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw DeviceKeyRefusal(.invalidAssertion, "The assertion needs a jti.")
        }
        var counter: Int?
        if let value = assertion.claims["counter"] {
            guard case .number(let number) = value, number >= 0, number < 9e15, number == number.rounded() else {
                throw DeviceKeyRefusal(.invalidAssertion, "The assertion's counter must be a non-negative integer.")
            }
            counter = Int(number)
        } else if key.counter != nil {
            // A key that once counted must keep counting, or a clone of it would go unnoticed.
            throw DeviceKeyRefusal(.counterNotIncreasing, "This key's assertions carry a counter; send the next one.")
        }
        guard try await environment.storage.insert(true, key: "jti:\(key.id):\(SecretDigest.sha256Hex(jti))", expiresAt: issuedAt.addingTimeInterval(lifetime + skew))
        else {
            throw DeviceKeyRefusal(.assertionReplayed, "The assertion's jti was used before; sign a fresh assertion.")
        }
        guard try await devices.recordSignInKeyUse(id: key.id, counter: counter, now: now) else {
            if counter != nil, try await devices.signInKey(id: key.id) != nil {
                throw DeviceKeyRefusal(.counterNotIncreasing, "The assertion's counter must be higher than the last one seen.")
            }
            throw DeviceKeyRefusal(.unknownKey, "The key was removed.")
        }
        var identity = ExternalIdentity(providerID: id, subject: key.id, username: "device-" + key.id.prefix(8), methods: [key.attestation == nil ? "swk" : "hwk"])
        identity.signInKeyID = key.id
        return identity
    }

    /// Sign-in with an App Attest key: the platform's assertion over the nonce, checked by the app's
    /// device-attestation provider, and its counter recorded only if it grew (atomically, so that of
    /// two nodes given the same assertion only one accepts it).
    func verifyAppAttest(_ answer: ChallengeResponse, nonce: String, context: FlowContext) async throws -> ExternalIdentity {
        // Apple hands apps their key id in base64; the broker names the key with its base64url.
        let keyID = try answer.string("keyID").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        guard let key = try await devices.signInKey(id: keyID), key.providerID == id else {
            throw DeviceKeyRefusal(.unknownKey, "No key with this keyID is registered (or its device was removed); register the device again.")
        }
        guard let attesting = context.deviceAttestation else {
            throw BrokerError(.attestationRequired, .forbidden, "No device-attestation provider is set up for this app.")
        }
        try checkPolicy(of: key, at: context.app)
        let counter = try await attesting.verifyKeyAssertion(try answer.string("appAttestAssertion"), key: key, challenge: nonce, app: context.app)
        guard try await devices.recordSignInKeyUse(id: key.id, counter: counter, now: environment.clock.now) else {
            if try await devices.signInKey(id: key.id) != nil {
                throw DeviceKeyRefusal(.counterNotIncreasing, "The assertion's counter must be higher than the last one seen.")
            }
            throw DeviceKeyRefusal(.unknownKey, "The key was removed.")
        }
        var identity = ExternalIdentity(providerID: id, subject: key.id, username: "device-" + key.id.prefix(8), methods: ["hwk"])
        identity.signInKeyID = key.id
        return identity
    }

    /// The policy of the app a sign-in happens at, held against how the key was registered: keys
    /// belong to the instance, so one registered through another app may sign in here, but an app
    /// that requires attestation accepts only keys that were attested when registered through it (an
    /// attestation vouches for one app's identity: its App ID or package), whatever the other app
    /// allowed. Checked at every use (flow and JWT bearer grant), not only at registration.
    func checkPolicy(of key: SignInKey, at app: AppView) throws {
        guard try app.settings(DeviceKeySettings.self, for: id).attestation == .required else { return }
        guard key.attestation != nil else {
            throw DeviceKeyRefusal(
                .attestationRequired, "This app requires an attested device key, and this key was registered without attestation; register this device again in this app."
            )
        }
        guard key.registeredAppID == app.id else {
            throw DeviceKeyRefusal(
                .attestationRequired, "This app requires a device key attested for it, and this key was attested for another app; register this device again in this app."
            )
        }
    }

    /// A refresh of what a sign-in with one of this instance's keys got: the app's attestation rule
    /// as it is now (`checkPolicy`).
    public func checkKeyUse(_ key: SignInKey, at app: AppView) async throws {
        do {
            try checkPolicy(of: key, at: app)
        } catch let refusal as DeviceKeyRefusal {
            throw refusal.grantError
        }
    }

    static func audiences(_ claims: [String: JSONValue]) -> [String] {
        switch claims["aud"] {
        case .string(let one)?: [one]
        case .array(let many)?: many.compactMap(\.stringValue)
        default: []
        }
    }

    // MARK: - Challenges

    static let registerChallenge = ChallengeDescription(
        type: "register_key",
        summary:
            "Register a new sign-in key: the public key (JWK), a proof of possession (a compact JWS with claims `nonce` and `aud` = the issuer, signed by the key), and the device's facts.",
        title: "Register this device", submitLabel: "Register",
        elements: [.json("publicKey", label: "Public key (JWK)", maxLength: 2048), .text("proof", label: "Proof of possession", maxLength: 4096)]
            + DeviceFacts.challengeInputs + [
                .json("attestation", label: "Device attestation", maxLength: 49_152), .detail("nonce", .string, "The single-use nonce the proof signs."),
                .detail("nonceExpiresAt", .string, "When the nonce stops working (RFC 3339)."),
                .detail("audience", .string, "The `aud` the proof carries: the broker's issuer."),
                .detail("algorithms", .array, "The JWS algorithms keys may use (`ES256`, `EdDSA`)."),
                .detail("attestation", .string, "`optional` or `required` when the app asks for a device attestation (absent: it does not)."),
                .detail("attestationFormats", .array, "The attestation formats the app accepts (`apple-app-attest`, `play-integrity`, ...)."),
            ])

    static let assertionChallenge = ChallengeDescription(
        type: "assertion",
        summary:
            "Sign in with a registered device key: a compact JWS with claims `iss` = the key id, `aud` = the issuer, `nonce`, `iat`, `jti` (and optionally a growing `counter`).",
        title: "Sign in with this device", submitLabel: "Sign in",
        elements: [
            .text("assertion", label: "Assertion", maxLength: 4096), .text("keyID", label: "App Attest key id", maxLength: 128),
            .text("appAttestAssertion", label: "App Attest assertion (base64)", maxLength: 8192),
            .detail("nonce", .string, "The single-use nonce the assertion carries."), .detail("nonceExpiresAt", .string, "When the nonce stops working (RFC 3339)."),
            .detail("audience", .string, "The `aud` the assertion carries: the broker's issuer."), .detail("algorithms", .array, "The JWS algorithms accepted."),
        ])
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension DeviceKeyProvider: AssertionVerifying {}
extension DeviceKeyProvider: KeyUseChecking {}
