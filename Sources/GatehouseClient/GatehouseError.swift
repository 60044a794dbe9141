import Foundation

/// What went wrong, mirroring the broker's error codes (docs/flow-api.md, docs/openapi.yaml): the
/// cases an app reacts to differently are typed; every other refusal is `.refused` with the broker's
/// code. `code` always answers the broker's code, so an app may also switch on that.
public enum GatehouseError: Error, Sendable, Equatable {
    /// Too many wrong answers for this account, device or address. `until` is when it may try again;
    /// `permanent` means an administrator must unlock it.
    case lockedOut(until: Date?, permanent: Bool)
    /// Too many requests from here; try again after `retryAfter` seconds.
    case rateLimited(retryAfter: Int?)
    /// The flow has had too many wrong answers and is gone: start a new one.
    case tooManyAttempts
    /// Wrong username or password.
    case invalidCredentials
    /// Wrong PIN.
    case invalidPIN
    /// Wrong emailed code.
    case invalidCode
    /// The PIN breaks one of the app's PIN rules; the same create-PIN challenge stays open.
    case pinRule(PINRule, message: String)
    /// The password breaks one of the provider's password rules.
    case passwordRule(code: String, message: String)
    /// The app's policy has stateless authentication off.
    case statelessDisabled
    /// The app does not let people register themselves.
    case registrationDisabled
    /// The flow is over (completed, expired or ended by a refusal): start a new one.
    case flowNotFound
    /// A signed-in operation (deregistration, a second device) needs a sign-in less than 15 minutes old.
    case loginRequired
    /// The refresh token no longer works (used, revoked, expired, account deleted): sign in again.
    case invalidGrant(String)
    /// The access token is not (or no longer) valid.
    case invalidToken
    /// The broker refused a DPoP proof, or a bound token came without one.
    case invalidDPoPProof
    /// The client holds no tokens: register or sign in first.
    case notSignedIn
    /// The app's own API (custom-api) refused the registration; the message is the app's.
    case registrationRefused(String)
    /// Any other refusal: the broker's code, its description, the HTTP status, and the public reason
    /// where the broker sends one (attestation and activation refusals).
    case refused(code: String, description: String, status: Int, reason: String?)
    /// The broker could not be reached, or answered something that is not its API.
    case transport(String)

    /// The broker's error code for this error (`locked_out`, `invalid_pin`, ...), or `transport`.
    public var code: String {
        switch self {
        case .lockedOut: "locked_out"
        case .rateLimited: "rate_limited"
        case .tooManyAttempts: "too_many_attempts"
        case .invalidCredentials: "invalid_credentials"
        case .invalidPIN: "invalid_pin"
        case .invalidCode: "invalid_code"
        case .pinRule(let rule, _): rule.rawValue
        case .passwordRule(let code, _): code
        case .statelessDisabled: "stateless_disabled"
        case .registrationDisabled: "registration_disabled"
        case .flowNotFound: "flow_not_found"
        case .loginRequired: "login_required"
        case .invalidGrant: "invalid_grant"
        case .invalidToken: "invalid_token"
        case .invalidDPoPProof: "invalid_dpop_proof"
        case .notSignedIn: "not_signed_in"
        case .registrationRefused: "registration_refused"
        case .refused(let code, _, _, _): code
        case .transport: "transport"
        }
    }
}

extension GatehouseError {
    /// Whether the broker ended the flow with this refusal (docs/flow-api.md): a new flow is needed.
    public var endsFlow: Bool {
        switch self {
        case .flowNotFound, .tooManyAttempts, .registrationRefused, .invalidGrant: true
        case .refused(let code, _, _, let reason):
            ["nonce_expired", "no_verified_email", "email_in_use", "activation_in_use", "access_denied", "conflict"].contains(code)
                || (code == "invalid_activation" && reason != nil)
        default: false
        }
    }
}

/// The PIN rules a create-PIN answer can break, in the order the broker checks them.
public enum PINRule: String, Sendable, CaseIterable {
    case notNumeric = "pin_not_numeric"
    case tooShort = "pin_too_short"
    case tooLong = "pin_too_long"
    case sequence = "pin_sequence"
    case repeated = "pin_repeated"
    case denied = "pin_denied"
}

extension GatehouseError {
    /// The typed error for one of the broker's error answers (`{"error", "error_description", ...}`).
    static func from(status: Int, body: Data, headers: [String: String]) -> GatehouseError {
        guard let json = try? JSON.decode(body), let code = json["error"]?.string else {
            return .transport("HTTP \(status) without the broker's error body")
        }
        let description = json["error_description"]?.string ?? ""
        switch code {
        case "locked_out": return .lockedOut(until: json["lockedUntil"]?.date, permanent: json["permanent"]?.bool ?? false)
        case "rate_limited": return .rateLimited(retryAfter: json["retryAfter"]?.int ?? headers["retry-after"].flatMap(Int.init))
        case "too_many_attempts": return .tooManyAttempts
        case "invalid_credentials": return .invalidCredentials
        case "invalid_pin": return .invalidPIN
        case "invalid_code": return .invalidCode
        case "stateless_disabled": return .statelessDisabled
        case "registration_disabled": return .registrationDisabled
        case "flow_not_found": return .flowNotFound
        case "login_required": return .loginRequired
        case "invalid_grant": return .invalidGrant(description)
        case "invalid_token": return .invalidToken
        case "invalid_dpop_proof": return .invalidDPoPProof
        case "registration_refused": return .registrationRefused(description)
        default:
            if let rule = PINRule(rawValue: code) { return .pinRule(rule, message: description) }
            if code.hasPrefix("password_") { return .passwordRule(code: code, message: description) }
            return .refused(code: code, description: description, status: status, reason: json["reason"]?.string)
        }
    }
}
