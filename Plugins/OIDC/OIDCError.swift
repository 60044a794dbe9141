import GatehousePluginKit

/// The refusals of the `oidc` plugin. Each ends the flow (an upstream answer is never tried twice);
/// the precise reason goes to the audit event and the log, never the upstream's own text to a person.
enum OIDCError {
    /// The upstream could not be used: down, slow, an error at its token endpoint, a broken
    /// discovery document or key set, or an error it sent back instead of a code.
    static let upstreamUnavailableCode = ErrorCode("upstream_unavailable")
    /// The ID token failed a check: signature, algorithm, `iss`, `aud`, `azp`, time, `nonce`, `at_hash`.
    static let invalidIDTokenCode = ErrorCode("invalid_id_token")

    static func unavailable(_ reason: String, _ message: String = "The sign-in service is not available right now; try again later.") -> BrokerError {
        BrokerError(upstreamUnavailableCode, .unavailable, message).because(reason).endingFlow()
    }

    static func invalidIDToken(_ reason: String) -> BrokerError {
        BrokerError(invalidIDTokenCode, .badRequest, "The sign-in service's answer did not pass the broker's checks; nobody was signed in.").because(reason).endingFlow()
    }

    static func denied(_ reason: String, _ message: String) -> BrokerError {
        BrokerError(.accessDenied, .forbidden, message).because(reason).endingFlow()
    }
}
