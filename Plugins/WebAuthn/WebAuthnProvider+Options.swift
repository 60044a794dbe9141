import Foundation
import GatehousePluginKit
import GatehouseSupport

/// The options of each ceremony, as the JSON the browser's `PublicKeyCredential.parseCreationOptionsFromJSON`
/// / `parseRequestOptionsFromJSON` (§5.1.9, §5.1.10) and the iOS and Android passkey APIs take: every
/// binary member base64url. A fresh 32-byte challenge each time, kept in the flow's state.
extension WebAuthnProvider {
    func usernameStep() throws -> FlowStep {
        .challenge(Challenge(type: Self.usernameChallenge.type), state: State(mode: .username))
    }

    /// `PublicKeyCredentialCreationOptionsJSON` for `handle`; the account's credentials are excluded
    /// (one credential per authenticator), a passkey must be discoverable.
    func createStep(handle: String, username: String, accountID: String?, discoverable: Bool) async throws -> FlowStep {
        let challenge = RandomToken.make(byteCount: 32)
        var existing: [StoredCredential] = []
        if let accountID { existing = try await book.credentials(of: accountID).map(\.value) }
        let residentKey = discoverable ? config.residentKey : "discouraged"
        var selection: [String: JSONValue] = ["residentKey": .string(residentKey), "userVerification": .string(config.userVerification)]
        if residentKey == "required" { selection["requireResidentKey"] = true }
        let options: JSONValue = [
            "rp": ["id": .string(relyingParty.id), "name": .string(relyingParty.name)],
            "user": ["id": .string(handle), "name": .string(username), "displayName": .string(username)],
            "challenge": .string(challenge),
            "pubKeyCredParams": .array(algorithms.map { ["type": "public-key", "alg": .number(Double($0.rawValue))] }),
            "timeout": .number(Double(config.timeout.value * 1000)),
            "excludeCredentials": .array(existing.map(Self.descriptor)),
            "authenticatorSelection": .object(selection),
            "attestation": .string(config.attestation),
            "extensions": ["credProps": true],
        ]
        let mode: State.Mode = discoverable ? .register : .factorRegister
        let state = State(mode: mode, challenge: challenge, userHandle: handle, username: username, accountID: accountID)
        return .challenge(Challenge(type: Self.createChallenge.type, fields: ["publicKey": options]), state: state)
    }

    /// `PublicKeyCredentialRequestOptionsJSON`: no credentials listed for a passkey sign-in (the
    /// authenticator offers its discoverable ones; `mediation: "conditional"` in a browser), the
    /// account's for a second factor.
    func getStep(allowed: [StoredCredential]?, mode: State.Mode) throws -> FlowStep {
        let challenge = RandomToken.make(byteCount: 32)
        let options: JSONValue = [
            "challenge": .string(challenge), "rpId": .string(relyingParty.id), "timeout": .number(Double(config.timeout.value * 1000)),
            "allowCredentials": .array((allowed ?? []).map(Self.descriptor)), "userVerification": .string(config.userVerification),
        ]
        let state = State(mode: mode, challenge: challenge, allowed: allowed?.map(\.id))
        return .challenge(
            Challenge(type: Self.getChallenge.type, fields: ["publicKey": options, "mediation": .string(allowed == nil ? "conditional" : "required")]),
            state: state)
    }

    static func descriptor(_ credential: StoredCredential) -> JSONValue {
        var descriptor: [String: JSONValue] = ["type": "public-key", "id": .string(credential.id)]
        if !credential.transports.isEmpty { descriptor["transports"] = .array(credential.transports.map(JSONValue.string)) }
        return .object(descriptor)
    }

    static let usernameChallenge = ChallengeDescription(
        type: "webauthn_username", summary: "The name a new passkey's account is made with (the authenticator shows it).", title: "Create a passkey",
        prompt: "Choose the name your passkey is saved under.", submitLabel: "Continue",
        elements: [.text("username", label: "Username", autocomplete: "username", maxLength: 64)])

    static let createChallenge = ChallengeDescription(
        type: "webauthn_create",
        summary:
            "Create a credential: pass `publicKey` to `navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(publicKey)})` (or the platform's passkey API) and answer `{\"credential\": credential.toJSON()}`.",
        title: "Create a passkey", prompt: "Your browser or phone asks you to create a passkey.", submitLabel: "Create a passkey",
        elements: [
            .json("credential", label: "Credential", maxLength: 65_536),
            .detail(
                "publicKey", .object,
                "PublicKeyCredentialCreationOptionsJSON (W3C Web Authentication Level 3 §5.4): rp, user, challenge, pubKeyCredParams, timeout, excludeCredentials, authenticatorSelection, attestation, extensions."
            ), CeremonyScript.script,
        ])

    static let getChallenge = ChallengeDescription(
        type: "webauthn_get",
        summary:
            "Sign in with a credential: pass `publicKey` to `navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey)})` (with `mediation`, or the platform's passkey API) and answer `{\"credential\": credential.toJSON()}`.",
        title: "Sign in with a passkey", prompt: "Your browser or phone asks for your passkey.", submitLabel: "Sign in with a passkey",
        elements: [
            .json("credential", label: "Credential", maxLength: 16_384),
            .detail(
                "publicKey", .object,
                "PublicKeyCredentialRequestOptionsJSON (§5.5): challenge, rpId, timeout, allowCredentials (empty for a passkey sign-in), userVerification."),
            .detail(
                "mediation", .string,
                "`conditional` for a passkey sign-in (the browser may offer passkeys in the username field's autofill), `required` for a second factor."),
            CeremonyScript.script,
        ])
}
