import Foundation

/// The options of a passkey ceremony (`webauthn`), as the broker sent them: the JSON that Android's
/// Credential Manager and the browser take as they are (`json`), and the members iOS's
/// `ASAuthorizationPlatformPublicKeyCredentialProvider` asks for, decoded.
public struct PasskeyOptions: Sendable, Equatable {
    /// `PublicKeyCredentialCreationOptionsJSON` or `PublicKeyCredentialRequestOptionsJSON` (W3C Web
    /// Authentication Level 3 §5.4, §5.5), binary members base64url.
    public var json: JSON
    /// The challenge to sign.
    public var challenge: Data
    /// The relying party id (the domain passkeys are scoped to).
    public var relyingPartyID: String
    /// For a registration: the user handle and name the passkey is made for.
    public var userID: Data?
    public var userName: String?
    /// Credentials that may answer (a second factor), or must not be made again (a registration).
    public var credentialIDs: [Data]

    init(_ json: JSON) {
        self.json = json
        challenge = json["challenge"]?.string.flatMap(Base64URL.decode) ?? Data()
        relyingPartyID = json["rpId"]?.string ?? json["rp"]?["id"]?.string ?? ""
        userID = json["user"]?["id"]?.string.flatMap(Base64URL.decode)
        userName = json["user"]?["name"]?.string
        let listed = json["allowCredentials"]?.array ?? json["excludeCredentials"]?.array ?? []
        credentialIDs = listed.compactMap { $0["id"]?.string.flatMap(Base64URL.decode) }
    }
}

/// What the platform's passkey API answered, as the broker takes it: `RegistrationResponseJSON` or
/// `AuthenticationResponseJSON`. Android's Credential Manager gives that JSON (`json(_:)`); on iOS,
/// build it from the `ASAuthorizationPlatformPublicKeyCredentialRegistration` or `…Assertion`.
public struct PasskeyCredential: Sendable, Equatable {
    public var json: JSON

    /// The JSON a platform API answered as it is.
    public static func json(_ json: JSON) -> PasskeyCredential { PasskeyCredential(json: json) }

    /// A new credential: its id, the client data and the attestation object (iOS: `credentialID`,
    /// `rawClientDataJSON`, `rawAttestationObject`).
    public static func registration(credentialID: Data, clientDataJSON: Data, attestationObject: Data, transports: [String] = []) -> PasskeyCredential {
        let id = Base64URL.encode(credentialID)
        return PasskeyCredential(json: [
            "id": .string(id), "rawId": .string(id), "type": "public-key",
            "response": [
                "clientDataJSON": .string(Base64URL.encode(clientDataJSON)), "attestationObject": .string(Base64URL.encode(attestationObject)),
                "transports": .array(transports.map(JSON.string)),
            ],
        ])
    }

    /// An assertion (iOS: `credentialID`, `rawClientDataJSON`, `rawAuthenticatorData`, `signature`, `userID`).
    public static func assertion(credentialID: Data, clientDataJSON: Data, authenticatorData: Data, signature: Data, userHandle: Data?) -> PasskeyCredential {
        let id = Base64URL.encode(credentialID)
        var response: [String: JSON] = [
            "clientDataJSON": .string(Base64URL.encode(clientDataJSON)), "authenticatorData": .string(Base64URL.encode(authenticatorData)),
            "signature": .string(Base64URL.encode(signature)),
        ]
        if let userHandle { response["userHandle"] = .string(Base64URL.encode(userHandle)) }
        return PasskeyCredential(json: ["id": .string(id), "rawId": .string(id), "type": "public-key", "response": .object(response)])
    }
}
