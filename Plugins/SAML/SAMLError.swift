import GatehousePluginKit

/// Why the `saml` plugin refused a response, metadata or setting. The reason goes to the audit event
/// and the log; a person sees the one generic message, never the IdP's or the parser's text.
enum SAMLError: Error, Equatable {
    /// Not XML we accept: not well-formed, a DTD, an element missing or repeated.
    case malformed(String)
    /// A signature is missing where one is required, or does not verify with the IdP's keys.
    case signature(String)
    /// A condition failed: audience, time, destination, InResponseTo, replay, subject.
    case condition(String)
    /// The IdP answered that it did not sign the person in (a SAML status other than success).
    case status(String)
    /// The IdP's metadata cannot be used.
    case metadata(String)

    /// The machine-readable reason for the audit and the log.
    var reason: String {
        switch self {
        case .malformed(let why): "malformed: \(why)"
        case .signature(let why): "signature: \(why)"
        case .condition(let why): "condition: \(why)"
        case .status(let why): "status: \(why)"
        case .metadata(let why): "metadata: \(why)"
        }
    }

    /// A refused response: `invalid_saml_response`, 400, ending the flow (an assertion is never tried twice).
    static let invalidResponseCode = ErrorCode("invalid_saml_response")
    /// The IdP could not be reached or its metadata is unusable.
    static let unavailableCode = ErrorCode("upstream_unavailable")

    /// The refusal the broker answers.
    var brokerError: BrokerError {
        switch self {
        case .status(let status) where status.hasSuffix(":AuthnFailed") || status.hasSuffix(":RequestDenied"):
            BrokerError(.accessDenied, .forbidden, "The identity provider did not sign you in.").because(reason).endingFlow()
        case .metadata:
            BrokerError(Self.unavailableCode, .unavailable, "The sign-in service is not available right now; try again later.").because(reason).endingFlow()
        default:
            BrokerError(Self.invalidResponseCode, .badRequest, "The identity provider's answer did not pass the broker's checks; nobody was signed in.")
                .because(reason).endingFlow()
        }
    }
}
