/// A stable machine-readable error code. Clients and operators match on these strings, so a code,
/// once published, never changes meaning. Where OAuth 2.0 defines a code it is reused as is.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The code as it goes on the wire.
    public let rawValue: String
    /// A code by its wire text.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A code by its wire text (a plugin's own codes, such as a refusal's `reason`).
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The wire text.
    public var description: String { rawValue }

    // OAuth 2.0 (RFC 6749 section 5.2) codes.
    /// The request is malformed: a missing, repeated or ill-formed parameter or field.
    public static let invalidRequest = ErrorCode("invalid_request")
    /// The client could not be authenticated (unknown id, wrong secret, wrong method).
    public static let invalidClient = ErrorCode("invalid_client")
    /// The grant (code, refresh token, assertion) is invalid, expired, revoked or another client's.
    public static let invalidGrant = ErrorCode("invalid_grant")
    /// A scope the app may not ask for.
    public static let invalidScope = ErrorCode("invalid_scope")
    /// The client may not use this grant or endpoint (a public app where a confidential one is needed).
    public static let unauthorizedClient = ErrorCode("unauthorized_client")
    /// The person or the broker refused the request.
    public static let accessDenied = ErrorCode("access_denied")
    /// The broker failed unexpectedly; nothing the caller can fix.
    public static let serverError = ErrorCode("server_error")
    /// A grant type the token endpoint does not support.
    public static let unsupportedGrantType = ErrorCode("unsupported_grant_type")
    /// A response type the authorization endpoint does not support.
    public static let unsupportedResponseType = ErrorCode("unsupported_response_type")
    /// A (more recent) sign-in is needed first.
    public static let loginRequired = ErrorCode("login_required")
    // OIDC Core section 3.1.2.6 (`prompt=none`).
    /// `prompt=none` was asked, but the person would have to act.
    public static let interactionRequired = ErrorCode("interaction_required")
    /// `prompt=none` was asked, but the person has not allowed the app these scopes.
    public static let consentRequired = ErrorCode("consent_required")
    /// RFC 6749 §4.1.2.1: the server cannot handle the request now (its database is unreachable).
    public static let temporarilyUnavailable = ErrorCode("temporarily_unavailable")
    /// A request object (`request`) the broker does not accept.
    public static let requestNotSupported = ErrorCode("request_not_supported")
    // RFC 6750 (bearer tokens).
    /// The access token is missing, malformed, expired or revoked (RFC 6750).
    public static let invalidToken = ErrorCode("invalid_token")
    /// The access token does not allow this request (RFC 6750).
    public static let insufficientScope = ErrorCode("insufficient_scope")
    /// The access token's sign-in is too old for this action (RFC 9470): sign in again, within `max_age`.
    public static let insufficientUserAuthentication = ErrorCode("insufficient_user_authentication")
    // RFC 9449 (DPoP).
    /// The DPoP proof is missing or does not check out (RFC 9449).
    public static let invalidDPoPProof = ErrorCode("invalid_dpop_proof")
    /// The DPoP proof must carry the nonce the broker hands out (RFC 9449 section 8).
    public static let useDPoPNonce = ErrorCode("use_dpop_nonce")
    // RFC 8628 (device authorization grant).
    /// The person has not finished at the verification page yet: poll again after `interval`.
    public static let authorizationPending = ErrorCode("authorization_pending")
    /// The device polls faster than `interval`: wait 5 seconds more from now on.
    public static let slowDown = ErrorCode("slow_down")
    /// The device code expired before the person approved it: start again.
    public static let expiredToken = ErrorCode("expired_token")
    // RFC 8693 (token exchange).
    /// The audience or resource asked for is unknown, or this client may not get tokens for it.
    public static let invalidTarget = ErrorCode("invalid_target")
    // RFC 9101 and RFC 9126 (request objects, pushed authorization requests).
    /// The request object is malformed, not signed by the client's key, or its claims do not check out.
    public static let invalidRequestObject = ErrorCode("invalid_request_object")
    /// The `request_uri` is unknown, expired, used, or another client's.
    public static let invalidRequestURI = ErrorCode("invalid_request_uri")

    // Flows and policy.
    /// No app with this id.
    public static let unknownApp = ErrorCode("unknown_app")
    /// No provider instance with this id is configured.
    public static let unknownProvider = ErrorCode("unknown_provider")
    /// The app's policy does not list this provider.
    public static let providerNotAllowed = ErrorCode("provider_not_allowed")
    /// The app does not let people create accounts themselves.
    public static let registrationDisabled = ErrorCode("registration_disabled")
    /// The identity has an account already; sign in instead.
    public static let alreadyRegistered = ErrorCode("already_registered")
    /// The app's policy has stateless sign-in off.
    public static let statelessDisabled = ErrorCode("stateless_disabled")
    /// What was asked needs an account, which a stateless sign-in never has.
    public static let statelessUnsupported = ErrorCode("stateless_unsupported")
    /// A stateless sign-in gets no refresh token.
    public static let statelessNoRefresh = ErrorCode("stateless_no_refresh")
    /// No such flow, or it expired or finished.
    public static let flowNotFound = ErrorCode("flow_not_found")
    /// The flow was answered concurrently; the other answer won.
    public static let flowConflict = ErrorCode("flow_conflict")
    /// The flow had too many wrong answers and was closed.
    public static let tooManyAttempts = ErrorCode("too_many_attempts")
    /// The answer does not fit the challenge (a field missing or of the wrong kind).
    public static let invalidAnswer = ErrorCode("invalid_answer")
    /// Wrong username or password (never says which).
    public static let invalidCredentials = ErrorCode("invalid_credentials")
    /// The username belongs to someone else.
    public static let usernameTaken = ErrorCode("username_taken")
    /// The username breaks the provider's rules.
    public static let invalidUsername = ErrorCode("invalid_username")
    /// The account (or key) is locked after wrong answers; `lockedUntil` says until when.
    public static let lockedOut = ErrorCode("locked_out")
    /// Too many requests from this address or for this client; `retryAfter` says when to try again.
    public static let rateLimited = ErrorCode("rate_limited")
    /// The provider's upstream (directory, API, mail server) does not answer.
    public static let providerUnavailable = ErrorCode("provider_unavailable")
    /// No such item.
    public static let notFound = ErrorCode("not_found")
    /// The item exists already or was changed concurrently.
    public static let conflict = ErrorCode("conflict")
    /// The admin API is off: no admin token is configured.
    public static let adminDisabled = ErrorCode("admin_api_disabled")

    // One-time codes and addresses.
    /// The one-time code is wrong.
    public static let invalidCode = ErrorCode("invalid_code")
    /// The one-time code expired; ask for a new one.
    public static let codeExpired = ErrorCode("code_expired")
    /// The code could not be sent.
    public static let deliveryFailed = ErrorCode("delivery_failed")
    /// Not an email address.
    public static let invalidEmail = ErrorCode("invalid_email")
    /// The account has no verified address to send to.
    public static let noVerifiedEmail = ErrorCode("no_verified_email")
    /// The address belongs to another account.
    public static let emailInUse = ErrorCode("email_in_use")

    // Provisional identities.
    /// The provisional identity is attached to an account already.
    public static let provisionalIdentityAttached = ErrorCode("provisional_identity_already_attached")

    // Password / PIN policy.
    /// The password is shorter than the policy allows.
    public static let passwordTooShort = ErrorCode("password_too_short")
    /// The password is longer than the policy allows.
    public static let passwordTooLong = ErrorCode("password_too_long")
    /// The password is on a deny list (the common ones, or the policy's).
    public static let passwordDenied = ErrorCode("password_denied")
    /// The password has a run of sequential characters.
    public static let passwordSequence = ErrorCode("password_sequence")
    /// The password repeats one character too often in a row.
    public static let passwordRepeated = ErrorCode("password_repeated")
    /// The password contains the username.
    public static let passwordContainsUsername = ErrorCode("password_contains_username")
    /// The PIN has characters other than digits.
    public static let pinNotNumeric = ErrorCode("pin_not_numeric")

    // Devices and their sign-in keys.
    /// The public key is not accepted, or is registered already.
    public static let invalidKey = ErrorCode("invalid_key")

    // Activations, invitations and profiles.
    // Admin console.
    /// The account signed in but holds no admin role (and is in no `admin.consoleGroups` group).
    public static let adminRoleRequired = ErrorCode("admin_role_required")
    /// A dangerous action needs a sign-in more recent than `admin.console.reauthenticateAfter`.
    public static let reauthenticationRequired = ErrorCode("reauthentication_required")
    /// A console form came without the session's CSRF token, or with another one.
    public static let invalidCSRFToken = ErrorCode("invalid_csrf_token")
}
