/// A stable machine-readable error code. Clients and operators match on these strings, so a code,
/// once published, never changes meaning. Where OAuth 2.0 defines a code it is reused as is.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    // OAuth 2.0 (RFC 6749 section 5.2) codes.
    public static let invalidRequest = ErrorCode("invalid_request")
    public static let invalidClient = ErrorCode("invalid_client")
    public static let invalidGrant = ErrorCode("invalid_grant")
    public static let invalidScope = ErrorCode("invalid_scope")
    public static let unauthorizedClient = ErrorCode("unauthorized_client")
    public static let accessDenied = ErrorCode("access_denied")
    public static let serverError = ErrorCode("server_error")
    public static let unsupportedGrantType = ErrorCode("unsupported_grant_type")
    public static let unsupportedResponseType = ErrorCode("unsupported_response_type")
    public static let loginRequired = ErrorCode("login_required")
    // OIDC Core section 3.1.2.6 (`prompt=none`).
    public static let interactionRequired = ErrorCode("interaction_required")
    public static let consentRequired = ErrorCode("consent_required")
    /// RFC 6749 §4.1.2.1: the server cannot handle the request now (its database is unreachable).
    public static let temporarilyUnavailable = ErrorCode("temporarily_unavailable")
    public static let requestNotSupported = ErrorCode("request_not_supported")
    // RFC 6750 (bearer tokens).
    public static let invalidToken = ErrorCode("invalid_token")
    public static let insufficientScope = ErrorCode("insufficient_scope")
    // RFC 9449 (DPoP).
    public static let invalidDPoPProof = ErrorCode("invalid_dpop_proof")
    public static let useDPoPNonce = ErrorCode("use_dpop_nonce")

    // Flows and policy.
    public static let unknownApp = ErrorCode("unknown_app")
    public static let unknownProvider = ErrorCode("unknown_provider")
    public static let providerNotAllowed = ErrorCode("provider_not_allowed")
    public static let registrationDisabled = ErrorCode("registration_disabled")
    public static let alreadyRegistered = ErrorCode("already_registered")
    public static let statelessDisabled = ErrorCode("stateless_disabled")
    public static let statelessUnsupported = ErrorCode("stateless_unsupported")
    public static let statelessNoRefresh = ErrorCode("stateless_no_refresh")
    public static let flowNotFound = ErrorCode("flow_not_found")
    public static let flowConflict = ErrorCode("flow_conflict")
    public static let tooManyAttempts = ErrorCode("too_many_attempts")
    public static let invalidAnswer = ErrorCode("invalid_answer")
    public static let invalidCredentials = ErrorCode("invalid_credentials")
    public static let usernameTaken = ErrorCode("username_taken")
    public static let invalidUsername = ErrorCode("invalid_username")
    public static let lockedOut = ErrorCode("locked_out")
    public static let rateLimited = ErrorCode("rate_limited")
    public static let providerUnavailable = ErrorCode("provider_unavailable")
    public static let notFound = ErrorCode("not_found")
    public static let conflict = ErrorCode("conflict")
    public static let adminDisabled = ErrorCode("admin_api_disabled")

    // One-time codes and addresses.
    public static let invalidCode = ErrorCode("invalid_code")
    public static let codeExpired = ErrorCode("code_expired")
    public static let deliveryFailed = ErrorCode("delivery_failed")
    public static let invalidEmail = ErrorCode("invalid_email")
    public static let noVerifiedEmail = ErrorCode("no_verified_email")
    public static let emailInUse = ErrorCode("email_in_use")

    // Provisional identities.
    public static let provisionalIdentityAttached = ErrorCode("provisional_identity_already_attached")

    // Password / PIN policy.
    public static let passwordTooShort = ErrorCode("password_too_short")
    public static let passwordTooLong = ErrorCode("password_too_long")
    public static let passwordDenied = ErrorCode("password_denied")
    public static let passwordSequence = ErrorCode("password_sequence")
    public static let passwordRepeated = ErrorCode("password_repeated")
    public static let passwordContainsUsername = ErrorCode("password_contains_username")
    public static let pinNotNumeric = ErrorCode("pin_not_numeric")
    public static let pinTooShort = ErrorCode("pin_too_short")
    public static let pinTooLong = ErrorCode("pin_too_long")
    public static let pinSequence = ErrorCode("pin_sequence")
    public static let pinRepeated = ErrorCode("pin_repeated")
    public static let pinDenied = ErrorCode("pin_denied")
    public static let invalidPIN = ErrorCode("invalid_pin")
    public static let pinResetUnavailable = ErrorCode("pin_reset_unavailable")

    // Devices and their sign-in keys.
    public static let invalidAssertion = ErrorCode("invalid_assertion")
    public static let invalidKey = ErrorCode("invalid_key")
    public static let attestationRequired = ErrorCode("attestation_required")
    /// An attestation (or an attested key's assertion) was refused; `reason` says which check failed.
    public static let invalidAttestation = ErrorCode("invalid_attestation")
    public static let signedInAccountRequired = ErrorCode("signed_in_account_required")

    // Activations, invitations and profiles.
    /// The activation data are unknown, expired, revoked, used, or were locked by wrong PINs.
    public static let invalidActivation = ErrorCode("invalid_activation")
    /// Another installation is redeeming the same activation right now.
    public static let activationInUse = ErrorCode("activation_in_use")
    /// The app's policy does not let its back end issue activations.
    public static let activationNotAllowed = ErrorCode("activation_not_allowed")
    public static let invalidInvitation = ErrorCode("invalid_invitation")
    // Admin console.
    /// The account signed in but holds no admin role (and is in no `admin.consoleGroups` group).
    public static let adminRoleRequired = ErrorCode("admin_role_required")
    /// A dangerous action needs a sign-in more recent than `admin.console.reauthenticateAfter`.
    public static let reauthenticationRequired = ErrorCode("reauthentication_required")
    /// A console form came without the session's CSRF token, or with another one.
    public static let invalidCSRFToken = ErrorCode("invalid_csrf_token")
}
