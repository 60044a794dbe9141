import GatehouseAttestation
import GatehousePluginKit

/// Why an attestation or an attested key's assertion was refused: one stable code per failed check,
/// which is all a person (or app) ever sees. The audit log keeps the facts.
struct AttestationRefusal: Error, Sendable, Equatable {
    enum Reason: String, Sendable, CaseIterable {
        /// The evidence does not parse (CBOR, certificates, JWE, JWS, JSON).
        case malformed = "malformed_attestation"
        /// The app does not accept this format, or it is not set up for it.
        case formatNotAccepted = "format_not_accepted"
        /// The certificate chain does not lead to the platform's pinned root.
        case untrustedChain = "untrusted_chain"
        /// A certificate of the chain is outside its validity at the broker's time.
        case certificateExpired = "certificate_expired"
        /// A serial number of the chain is on the revocation status list (revoked or suspended).
        case certificateRevoked = "certificate_revoked"
        /// The evidence is not bound to this flow's challenge (nonce, request hash, attestation challenge).
        case challengeMismatch = "challenge_mismatch"
        /// The app id (App Attest rpIdHash), package name or request package is not the app's.
        case appMismatch = "app_mismatch"
        /// The key id, credential id or attested key is not the key being registered.
        case keyMismatch = "key_mismatch"
        /// App Attest: a development key where only production is allowed, or the reverse.
        case environmentNotAllowed = "environment_not_allowed"
        /// A counter that is not 0 at attestation, or does not grow on an assertion.
        case counterInvalid = "counter_invalid"
        /// A signature that does not verify (assertion, JWS, receipt).
        case invalidSignature = "invalid_signature"
        /// Android: the key lives in software or a weaker place than the app's minimum.
        case securityLevelTooLow = "security_level_too_low"
        /// Android: the device's boot state or bootloader lock fails the app's rule.
        case bootStateNotAllowed = "boot_state_not_allowed"
        /// Android / Play: the app's signing certificate is not in the allow-list.
        case signingCertificateNotAllowed = "signing_certificate_not_allowed"
        /// Play Integrity: Play does not recognise the app binary.
        case appNotRecognized = "app_not_recognized"
        /// Play Integrity: the device verdict is below the app's threshold.
        case deviceIntegrityTooLow = "device_integrity_too_low"
        /// Play Integrity: the account's licence verdict fails the app's rule.
        case notLicensed = "not_licensed"
        /// Play Integrity: the verdict is older (or newer) than the freshness window.
        case stale = "verdict_stale"
        /// Play Integrity / DeviceCheck: the token could not be decrypted, or the platform calls it invalid.
        case invalidToken = "invalid_token"
        /// DeviceCheck: Apple refused the broker's developer token (a configuration problem).
        case serviceRefusedCredentials = "service_refused_credentials"
        /// DeviceCheck / Play: the platform is rate limiting the broker.
        case serviceRateLimited = "service_rate_limited"
        /// A test registration key signed the evidence but the key is unknown or revoked.
        case unknownTestKey = "unknown_test_key"
    }

    var reason: Reason
    var message: String

    init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// As an answer in a flow: a refused attestation counts as a wrong answer.
    var brokerError: BrokerError {
        switch reason {
        case .formatNotAccepted, .malformed:
            BrokerError(.invalidAttestation, .badRequest, message).publicly(because: reason.rawValue)
        case .serviceRefusedCredentials, .serviceRateLimited:
            BrokerError(.providerUnavailable, .unavailable, message).publicly(because: reason.rawValue)
        default:
            BrokerError(.invalidAttestation, .failedAttempt, message).publicly(because: reason.rawValue)
        }
    }

    /// Runs a certificate path check; a path that does not lead to a trusted key is `untrusted_chain`.
    static func checking(_ check: () throws(CertificatePathProblem) -> Void) throws(AttestationRefusal) {
        do { try check() } catch { throw AttestationRefusal(.untrustedChain, error.message) }
    }
}
