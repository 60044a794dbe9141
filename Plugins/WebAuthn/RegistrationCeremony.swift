import Foundation
import GatehouseAttestation

/// A credential the registration ceremony accepted, as it is stored.
struct RegisteredCredential: Sendable {
    let id: [UInt8]
    let publicKey: [UInt8]
    let algorithm: COSEKey.Algorithm
    let signCount: UInt32
    let aaguid: [UInt8]
    let backupEligible: Bool
    let backupState: Bool
    let userVerified: Bool
    /// The format whose statement was verified; `none` when none was (no attestation, or one that
    /// was accepted without being judged).
    let attestationFormat: String
    let attestation: AttestationResult.Kind
    /// Whether an attestation statement was verified by its format's procedure (§7.1 step 22).
    var attestationVerified: Bool { attestationFormat != "none" }
    /// The authenticator model's name from the FIDO metadata, when known.
    let authenticatorDescription: String?
}

/// Registering a new credential (W3C Web Authentication Level 3 §7.1), step by step: the client
/// data (type, challenge, origin), the authenticator data (RP ID hash, UP, UV, backup flags, an
/// offered algorithm), the attestation statement of an accepted format, and, where the app asks
/// for attested authenticators, its trust.
struct RegistrationCeremony: Sendable {
    /// The IANA registry of WebAuthn attestation statement format identifiers (RFC 8809, and
    /// `compound` from Level 3): the formats a relying party may meet. Six of them are verified here.
    static let registeredFormats: Set<String> = ["packed", "tpm", "android-key", "android-safetynet", "fido-u2f", "none", "apple", "compound"]
    let relyingParty: RelyingParty
    let challenge: [UInt8]
    let userVerification: UserVerification
    let algorithms: [COSEKey.Algorithm]
    /// The formats accepted; `none` among them also accepts an authenticator that gives no attestation.
    let formats: [String]
    /// Set when the app accepts only attested authenticators (`attestation: direct` with trust).
    let trust: AttestationTrust?

    func verify(clientDataJSON: [UInt8], attestationObject: [UInt8], at now: Date) throws(WebAuthnRefusal) -> RegisteredCredential {
        // Steps 5 to 12: the client data.
        let clientData = try CollectedClientData(clientDataJSON)
        try clientData.check(type: "webauthn.create", challenge: challenge, origins: relyingParty.origins)
        // Step 13: the attestation object.
        let object: CBOR
        do { object = try CBOR.decode(attestationObject) } catch { throw WebAuthnRefusal(.malformed, "The attestation object is not CBOR.") }
        guard let format = object["fmt"]?.textValue, let statement = object["attStmt"], let authData = object["authData"]?.bytesValue else {
            throw WebAuthnRefusal(.malformed, "The attestation object lacks fmt, attStmt or authData.")
        }
        // Steps 14 to 18: the authenticator data.
        let authenticatorData = try AuthenticatorData(authData)
        try authenticatorData.check(rpID: relyingParty.id, requireUserVerification: userVerification == .required)
        guard let attested = authenticatorData.attested else { throw WebAuthnRefusal(.malformed, "The authenticator data carries no new credential.") }
        // Step 19: one of the algorithms offered in pubKeyCredParams.
        guard algorithms.contains(attested.publicKey.algorithm) else {
            throw WebAuthnRefusal(.algorithmNotAllowed, "The credential uses \(attested.publicKey.algorithm.name), which this app does not accept.")
        }
        // Step 21: the format is one of the registered identifiers (an unknown one is refused, whatever
        // the policy); step 22: the statement of an accepted format verifies.
        guard Self.registeredFormats.contains(format) else {
            throw WebAuthnRefusal(.formatNotAllowed, "'\(format)' is not a registered attestation statement format.")
        }
        guard formats.contains(format) || (format != "none" && trust == nil && formats.contains("none")) else {
            throw WebAuthnRefusal(.formatNotAllowed, "The attestation format '\(format)' is not accepted.")
        }
        let result: AttestationResult
        if trust == nil, !formats.contains(format) {
            // Only `none` is required and the authenticator attested in a format this app does not
            // verify: the statement is not judged, so nothing may claim it was: recorded as `none`.
            result = AttestationResult(format: "none", kind: .none, trustPath: [])
        } else {
            result = try AttestationStatementVerifier.verify(format: format, statement: statement, authenticatorData: authenticatorData, clientDataHash: clientData.hash)
        }
        // Steps 23 and 24: trustworthiness, where the app asks for it.
        let description = try trust?.check(result, aaguid: attested.aaguid, at: now)
        return RegisteredCredential(
            id: attested.credentialID, publicKey: attested.publicKeyBytes, algorithm: attested.publicKey.algorithm, signCount: authenticatorData.signCount,
            aaguid: attested.aaguid, backupEligible: authenticatorData.flags.contains(.backupEligible), backupState: authenticatorData.flags.contains(.backupState),
            userVerified: authenticatorData.flags.contains(.userVerified), attestationFormat: result.format, attestation: result.kind,
            authenticatorDescription: description
        )
    }
}
