import Crypto
import Foundation

/// One registration or sign-in in progress at the broker (docs/flow-api.md). Answer each challenge
/// with `answer(_:)`; follow it through `states` (an `AsyncSequence`) or drive it with a
/// `FlowDelegate` (`GatehouseClient.run`). A wrong answer throws and leaves the flow where it was,
/// unless the broker ended it (`flowNotFound`, `tooManyAttempts`).
public actor Flow {
    /// The broker's flow id: a capability, keep it to this flow's code.
    public nonisolated let id: String
    public private(set) var state: FlowState
    /// Every state the flow reaches, from the first challenge to its end (then the sequence finishes).
    public nonisolated let states: AsyncStream<FlowState>

    private let client: GatehouseClient
    private let codeVerifier: String
    private let continuation: AsyncStream<FlowState>.Continuation

    init(id: String, state: FlowState, client: GatehouseClient, codeVerifier: String) {
        self.id = id
        self.state = state
        self.client = client
        self.codeVerifier = codeVerifier
        (states, continuation) = AsyncStream<FlowState>.makeStream()
        continuation.yield(state)
        if case .challenge = state {} else { continuation.finish() }
    }

    /// The challenge the flow waits on, if it waits on one.
    public var challenge: Challenge? {
        if !ended, case .challenge(let challenge) = state { return challenge }
        return nil
    }

    /// Whether the broker ended the flow with a refusal: no challenge is open any more.
    public private(set) var ended = false

    deinit {
        continuation.finish()
    }

    /// Sends `answer` to the current challenge and answers the flow's next state.
    @discardableResult
    public func answer(_ answer: FlowAnswer) async throws -> FlowState {
        guard let challenge else { throw GatehouseError.flowNotFound }
        let fields = try await fields(for: answer, to: challenge)
        let json: JSON
        do {
            (json, _) = try await client.connection.json(
                "POST", "/v1/flows/\(id)", body: .object(["answer": .object(fields)].merging(client.secretInBody) { first, _ in first }),
                .init(dpop: client.configuration.bindTokens)
            )
        } catch let error as GatehouseError where error.endsFlow {
            ended = true
            continuation.finish()
            throw error
        }
        let next = try await client.state(of: json)
        state = next
        continuation.yield(next)
        if case .challenge = next {} else { continuation.finish() }
        return next
    }

    private func fields(for answer: FlowAnswer, to challenge: Challenge) async throws -> [String: JSON] {
        switch answer {
        case .credentials(let username, let password): return ["username": .string(username), "password": .string(password)]
        case .customData(let data): return ["customData": data]
        case .pin(let pin): return ["pin": .string(pin)]
        case .forgotPIN: return ["forgot": true]
        case .email(let address): return ["email": .string(address)]
        case .emailCode(let code), .profileCode(let code): return ["code": .string(code)]
        case .resendCode: return ["resend": true]
        case .retry: return [:]
        case .signedJWT(let jwt): return ["assertion": .string(jwt)]
        case .fields(let fields): return fields
        case .passkeyName(let name): return ["username": .string(name)]
        case .passkey(let credential): return ["credential": credential.json]
        case .authenticatorCode(let code): return ["code": .string(code)]
        case .useRecoveryCode: return ["use_recovery_code": true]
        case .useAuthenticatorApp: return ["use_app": true]
        case .recoveryCode(let code): return ["recoveryCode": .string(code)]
        case .recoveryCodesSaved: return [:]
        case .confirmProfile(let changes): return changes
        case .attestation(let evidence): return evidence.answerFields
        case .attest:
            guard case .attestation(let nonce, let formats, let requestHash, _) = challenge else {
                throw GatehouseError.refused(code: "invalid_answer", description: "This challenge does not ask for an attestation.", status: 400, reason: nil)
            }
            guard let provider = client.attestationProvider else {
                throw GatehouseError.refused(
                    code: "invalid_answer", description: "The client has no AttestationProvider to make the attestation.", status: 400, reason: nil)
            }
            let key = try await client.connection.keys.existingOrNewKey(named: BrokerConnection.deviceKeyName)
            return try await provider.attestation(challenge: nonce, formats: formats, requestHash: requestHash, key: key).answerFields
        case .activation(let code, let pin):
            return client.configuration.installation.answerFields.merging(["activation": .string(code), "pin": .string(pin)]) { _, new in new }
        case .activationChoice(let choice, let pin, let alias, let email):
            var fields: [String: JSON] = ["choice": .string(choice)]
            if let pin { fields["pin"] = .string(pin) }
            if let alias { fields["alias"] = .string(alias) }
            if let email { fields["email"] = .string(email) }
            return fields
        case .registerDeviceKey(let given):
            guard case .registerDeviceKey(let nonce, let audience, let algorithms, let asked, let formats, _) = challenge else {
                throw GatehouseError.refused(code: "invalid_answer", description: "This challenge does not register a device key.", status: 400, reason: nil)
            }
            // The SDK's keys are P-256 (what the Secure Enclave makes): say so rather than send a key the broker refuses.
            guard algorithms.contains("ES256") else {
                throw GatehouseError.refused(
                    code: "unsupported_algorithm", description: "The broker accepts \(algorithms.joined(separator: ", ")) device keys; this SDK makes ES256 keys.",
                    status: 400,
                    reason: nil
                )
            }
            let key = try await client.connection.keys.existingOrNewKey(named: BrokerConnection.deviceKeyName)
            var fields = client.configuration.installation.answerFields
            fields["publicKey"] = key.publicJWK
            fields["proof"] = .string(try await key.jws(claims: ["nonce": .string(nonce), "aud": .string(audience)]))
            var evidence = given
            if evidence == nil, asked != nil, let provider = client.attestationProvider {
                // Play Integrity's request hash binds the nonce and this key (docs/plugins/device-key.md).
                let requestHash = Base64URL.encode(SHA256.hash(data: Data("\(nonce).\(key.thumbprint)".utf8)))
                do {
                    evidence = try await provider.attestation(challenge: nonce, formats: formats, requestHash: requestHash, key: key)
                } catch  where asked == "optional" {
                    // An optional attestation the device cannot make (no App Attest on a simulator, Play
                    // services missing): register without one, as the policy allows.
                    evidence = nil
                }
            }
            if let evidence { fields["attestation"] = .object(evidence.answerFields) }
            return fields
        case .signWithDeviceKey:
            guard case .deviceKeyAssertion(let nonce, let audience, _) = challenge else {
                throw GatehouseError.refused(code: "invalid_answer", description: "This challenge does not ask for a device-key assertion.", status: 400, reason: nil)
            }
            guard let key = try await client.connection.keys.key(named: BrokerConnection.deviceKeyName) else { throw GatehouseError.notSignedIn }
            let now = Date().timeIntervalSince1970.rounded(.down)
            let assertion = try await key.jws(claims: [
                "iss": .string(key.thumbprint), "aud": .string(audience), "nonce": .string(nonce), "iat": .number(now), "jti": .string(UUID().uuidString),
            ])
            return ["assertion": .string(assertion)]
        case .browserReturn(let url):
            let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            func item(_ name: String) -> String? { items.first { $0.name == name }?.value }
            guard item("flow") == id else {
                throw GatehouseError.refused(code: "invalid_request", description: "The return URL is not this flow's.", status: 400, reason: nil)
            }
            if let error = item("error") {
                // The broker deleted the flow before it redirected with an error.
                ended = true
                continuation.finish()
                throw GatehouseError.from(
                    status: 400,
                    body: (try? JSON.object(["error": .string(error), "error_description": .string(item("error_description") ?? "")]).compactData()) ?? Data(),
                    headers: [:]
                )
            }
            guard let code = item("code") else {
                throw GatehouseError.refused(code: "invalid_request", description: "The return URL has no code.", status: 400, reason: nil)
            }
            // Every flow starts with a PKCE challenge, so the verifier goes back whatever the client
            // type (RFC 9700 section 2.1.1 recommends PKCE for confidential clients too).
            return ["code": .string(code), "codeVerifier": .string(codeVerifier)]
        }
    }

    /// A PKCE pair (RFC 7636, S256): the flow starts with the challenge, and a browser flow's return
    /// is answered with the verifier, so that a return URL intercepted by another app is worthless.
    static func makeCodeVerifier() -> (verifier: String, challenge: String) {
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        let verifier = Base64URL.encode(bytes)
        return (verifier, Base64URL.encode(SHA256.hash(data: Data(verifier.utf8))))
    }
}
