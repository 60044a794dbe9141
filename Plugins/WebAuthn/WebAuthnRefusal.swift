import GatehousePluginKit

/// Why a WebAuthn ceremony was refused: one stable code per failed check of W3C Web Authentication
/// Level 3 §7.1 and §7.2 (and the attestation formats of §8), which is what the app sees as
/// `reason`. The message says which check, never a secret.
struct WebAuthnRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    enum Reason: String, Sendable, CaseIterable {
        /// The response does not parse (JSON, base64url, CBOR, authenticator data, a certificate).
        case malformed = "malformed_response"
        /// `clientDataJSON.type` is not `webauthn.create` (registration) or `webauthn.get`.
        case wrongType = "wrong_type"
        /// The challenge is not this flow's.
        case challengeMismatch = "challenge_mismatch"
        /// The origin is not one of the relying party's (or a cross-origin iframe was not allowed).
        case originNotAllowed = "origin_not_allowed"
        /// The authenticator data's RP ID hash is not SHA-256 of the relying party's id.
        case rpIDMismatch = "rp_id_mismatch"
        /// The UP flag is not set.
        case userNotPresent = "user_not_present"
        /// The UV flag is not set where the policy requires user verification.
        case userNotVerified = "user_not_verified"
        /// BS set without BE (§6.1: a credential that cannot be backed up is not backed up).
        case invalidBackupFlags = "invalid_backup_flags"
        /// The credential's algorithm is not one the relying party offered.
        case algorithmNotAllowed = "algorithm_not_allowed"
        /// A signature (the assertion's, or the attestation statement's) does not verify.
        case invalidSignature = "invalid_signature"
        /// The attestation format is not accepted (or not known).
        case formatNotAllowed = "attestation_format_not_allowed"
        /// The attestation statement does not meet its format's rules (§8).
        case invalidAttestation = "invalid_attestation"
        /// The attestation does not chain to a trust anchor, or is self/none where trust is required.
        case untrustedAttestation = "untrusted_attestation"
        /// The credential is unknown, or not allowed for this person.
        case unknownCredential = "unknown_credential"
        /// A sign-in that did not identify the person first got no user handle (§7.2 step 6).
        case userHandleMissing = "user_handle_missing"
        /// The credential id is registered already.
        case credentialInUse = "credential_in_use"
        /// The signature counter did not grow (a cloned authenticator, per §6.1.1), where refused.
        case counterRegressed = "counter_regressed"
    }

    var reason: Reason
    var message: String

    init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    var description: String { "\(reason.rawValue): \(message)" }

    /// As an answer in a flow: a refused ceremony counts as a wrong answer (`invalid_credentials`
    /// with the reason); a missing or malformed one is `invalid_answer`, as a missing answer field of
    /// any challenge.
    var brokerError: BrokerError {
        switch reason {
        case .malformed: BrokerError.invalidAnswer(message).publicly(because: reason.rawValue)
        case .credentialInUse: BrokerError(.conflict, .conflict, message).publicly(because: reason.rawValue)
        default: BrokerError(.invalidCredentials, .failedAttempt, message).publicly(because: reason.rawValue)
        }
    }
}
