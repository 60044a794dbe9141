import GatehousePluginKit

/// Why a device's key, proof or assertion was refused. In a flow each refusal answers with its own
/// code; at the JWT bearer grant every one is `invalid_grant` (RFC 7523) with the code as reason.
struct DeviceKeyRefusal: Error, Sendable {
    enum Reason: String, Sendable {
        /// The public key is not a key this instance accepts.
        case invalidKey = "invalid_key"
        /// The registration's proof of possession is not a valid signature of the nonce by that key.
        case invalidProof = "invalid_proof"
        /// The assertion is malformed, signed by another key, or for another audience.
        case invalidAssertion = "invalid_assertion"
        /// `none`, HMAC or an algorithm the instance does not allow.
        case algorithmNotAllowed = "alg_not_allowed"
        /// The nonce is not the challenge's.
        case nonceMismatch = "nonce_mismatch"
        /// The challenge's nonce ran out; start a new flow.
        case nonceExpired = "nonce_expired"
        /// The assertion's `iat`/`exp` are outside the lifetime allowed.
        case assertionExpired = "assertion_expired"
        /// The assertion's `jti` was used before.
        case assertionReplayed = "assertion_replayed"
        /// No such key (never registered, its device removed, or its installation replaced by a reinstall).
        case unknownKey = "unknown_key"
        /// The assertion names another account (`sub`) than the key's.
        case accountMismatch = "account_mismatch"
        /// The signature counter did not grow.
        case counterNotIncreasing = "counter_not_increasing"
        /// The app requires attested keys, and this key was not attested when registered through it.
        case attestationRequired = "attestation_required"
    }

    var reason: Reason
    var message: String

    init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// As an answer in a flow: its own code; wrong signatures and keys count as wrong answers, an
    /// expired nonce ends the flow.
    var flowError: BrokerError {
        switch reason {
        case .nonceExpired:
            BrokerError(ErrorCode(reason.rawValue), .badRequest, message).because(reason.rawValue).endingFlow()
        case .invalidKey, .algorithmNotAllowed:
            BrokerError(ErrorCode(reason.rawValue), .badRequest, message).because(reason.rawValue)
        case .attestationRequired:
            BrokerError(.attestationRequired, .forbidden, message).because(reason.rawValue).endingFlow()
        default:
            BrokerError(ErrorCode(reason.rawValue), .failedAttempt, message).because(reason.rawValue)
        }
    }

    /// At the JWT bearer grant.
    var grantError: BrokerError {
        BrokerError(.invalidGrant, .badRequest, message).because(reason == .unknownKey ? "unknown_issuer" : reason.rawValue)
    }
}
