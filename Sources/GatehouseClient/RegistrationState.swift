import Foundation

/// Where an installation stands with the broker (`GET /v1/registration-state`, docs/devices.md).
public enum RegistrationState: Sendable, Equatable {
    /// Signed in; renew after `renewAfter` (the SDK's `validAccessToken()` does).
    case active(expiresAt: Date?, renewAfter: Date?, registrationType: String?, account: Account?, profile: JSON?)
    /// Signed in, but the access token is due for renewal.
    case renewalRequired(expiresAt: Date?, registrationType: String?, account: Account?)
    /// Not (or no longer) registered: `reason` is `no_token`, `token_not_valid`,
    /// `token_of_another_app`, `token_of_another_installation`, `session_ended` or `account_deleted`.
    case registrationRequired(reason: String?)
    /// The account waits for the person to confirm it.
    case confirmationRequired
    /// A state this SDK does not know.
    case other(String, JSON)

    init(_ json: JSON) {
        let account = Account(json["account"])
        switch json["state"]?.string ?? "" {
        case "active":
            self = .active(
                expiresAt: json["expiresAt"]?.date, renewAfter: json["renewAfter"]?.date, registrationType: json["registrationType"]?.string, account: account,
                profile: json["profile"]
            )
        case "renewal_required":
            self = .renewalRequired(expiresAt: json["expiresAt"]?.date, registrationType: json["registrationType"]?.string, account: account)
        case "registration_required": self = .registrationRequired(reason: json["reason"]?.string)
        case "confirmation_required": self = .confirmationRequired
        case let state: self = .other(state, json)
        }
    }
}
