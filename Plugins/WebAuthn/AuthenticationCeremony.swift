import Foundation
import GatehousePluginKit
import GatehouseSupport

/// What a verified assertion tells about the credential now.
struct VerifiedAssertion: Sendable {
    let signCount: UInt32
    /// The counter did not grow although one of the two counts is not zero (§6.1.1: a sign the
    /// authenticator may be cloned).
    let counterRegressed: Bool
    let userVerified: Bool
    let backupState: Bool
}

/// Verifying an authentication assertion (W3C Web Authentication Level 3 §7.2) against a stored
/// credential: the user handle (when given) is the credential's, the client data (type, challenge,
/// origin), the authenticator data (RP ID hash, UP, UV when required, backup flags consistent with
/// registration), the signature over authenticator data ‖ SHA-256(clientDataJSON), and the counter.
struct AuthenticationCeremony: Sendable {
    let relyingParty: RelyingParty
    let challenge: [UInt8]
    let userVerification: UserVerification

    /// The stored facts an assertion is checked against.
    struct Stored: Sendable {
        let publicKey: [UInt8]
        let signCount: UInt32
        let userHandle: [UInt8]
        let backupEligible: Bool
    }

    func verify(
        clientDataJSON: [UInt8], authenticatorData raw: [UInt8], signature: [UInt8], userHandle: [UInt8]?, stored: Stored, userHandleRequired: Bool = false
    ) throws(WebAuthnRefusal) -> VerifiedAssertion {
        // Step 6: when the person was not identified before the ceremony (a passkey sign-in), the
        // user handle must be present; a user handle the authenticator returns must be the
        // credential's owner's.
        if userHandleRequired, userHandle?.isEmpty != false {
            throw WebAuthnRefusal(.userHandleMissing, "A sign-in without a username needs the authenticator's user handle.")
        }
        if let userHandle, !userHandle.isEmpty, !SecretDigest.constantTimeEquals(userHandle, stored.userHandle) {
            throw WebAuthnRefusal(.unknownCredential, "The user handle is not the credential's.")
        }
        // Steps 10 to 14: the client data.
        let clientData = try CollectedClientData(clientDataJSON)
        try clientData.check(type: "webauthn.get", challenge: challenge, origins: relyingParty.origins)
        // Steps 15 to 18: the authenticator data.
        let authenticatorData = try AuthenticatorData(raw)
        try authenticatorData.check(rpID: relyingParty.id, requireUserVerification: userVerification == .required)
        guard authenticatorData.attested == nil else { throw WebAuthnRefusal(.malformed, "An assertion carries no new credential.") }
        // Step 19: backup eligibility is fixed when the credential is made.
        guard authenticatorData.flags.contains(.backupEligible) == stored.backupEligible else {
            throw WebAuthnRefusal(.invalidBackupFlags, "The credential's backup eligibility changed since it was registered.")
        }
        // Steps 20 to 21: the signature.
        let key = try COSEKey(bytes: stored.publicKey)
        guard key.verifies(signature, over: raw + clientData.hash) else { throw WebAuthnRefusal(.invalidSignature, "The assertion signature does not verify.") }
        // Step 22: the signature counter.
        let count = authenticatorData.signCount
        let regressed = (count != 0 || stored.signCount != 0) && count <= stored.signCount
        return VerifiedAssertion(
            signCount: max(count, stored.signCount), counterRegressed: regressed, userVerified: authenticatorData.flags.contains(.userVerified),
            backupState: authenticatorData.flags.contains(.backupState)
        )
    }
}
