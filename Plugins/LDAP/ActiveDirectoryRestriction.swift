import GatehousePluginKit

/// Why Active Directory refused a bind whose password was right: the `data` code in its answer. AD
/// sends these codes only for the right password (a wrong one is `52e` whatever the account's
/// state), so the person may be told; `775` (locked) comes with any password and is not one of them.
enum ActiveDirectoryRestriction: String, Sendable, Codable {
    /// `530`: not allowed to sign in at this time (`logonHours`).
    case outsideLogonHours = "outside_logon_hours"
    /// `531`: not allowed to sign in from here (`userWorkstations`).
    case workstationNotAllowed = "workstation_not_allowed"
    /// `532`: the password is older than the domain allows.
    case passwordExpired = "password_expired"
    /// `533`: the account is disabled (`userAccountControl` ACCOUNTDISABLE).
    case accountDisabled = "account_disabled"
    /// `701`: the account has expired (`accountExpires`).
    case accountExpired = "account_expired"
    /// `773`: an administrator set "must change password at next logon".
    case passwordMustChange = "password_must_change"
    /// `534`: the account was not granted this logon type.
    case logonTypeNotGranted = "logon_type_not_granted"
    /// `52f`: another restriction of the account's (a blank password, a policy) prevents the sign-in.
    case accountRestricted = "account_restricted"

    init?(dataCode: String) {
        switch dataCode.lowercased() {
        case "530": self = .outsideLogonHours
        case "531": self = .workstationNotAllowed
        case "532": self = .passwordExpired
        case "533": self = .accountDisabled
        case "701": self = .accountExpired
        case "773": self = .passwordMustChange
        case "534": self = .logonTypeNotGranted
        case "52f": self = .accountRestricted
        default: return nil
        }
    }

    /// The `data` code in AD's message for a refused bind (`80090308: LdapErr: ..., data 52e, v4563`).
    static func dataCode(_ message: String) -> String? {
        guard let range = message.range(of: "data ") else { return nil }
        let code = message[range.upperBound...].prefix { $0.isHexDigit }
        return code.isEmpty ? nil : code.lowercased()
    }

    /// The audit reason of a refusal shown as a wrong password: AD's codes that come with any
    /// password, and every code on a directory not configured as Active Directory.
    static func refusalReason(dataCode: String) -> String {
        switch dataCode.lowercased() {
        case "525": "unknown_user"
        case "775": "account_locked"
        default: ActiveDirectoryRestriction(dataCode: dataCode)?.rawValue ?? "wrong_password"
        }
    }

    /// A new password makes the sign-in possible.
    var passwordChangeHelps: Bool { self == .passwordExpired || self == .passwordMustChange }

    /// What the person is told.
    var message: String {
        switch self {
        case .outsideLogonHours: "Your account may not sign in at this time of day. Ask your administrator."
        case .workstationNotAllowed: "Your account may not sign in from here. Ask your administrator."
        case .passwordExpired: "Your password has expired. Change it, or ask your administrator."
        case .accountDisabled: "Your account is disabled. Ask your administrator."
        case .accountExpired: "Your account has expired. Ask your administrator."
        case .passwordMustChange: "You must change your password before you sign in. Change it, or ask your administrator."
        case .logonTypeNotGranted: "Your account may not sign in this way. Ask your administrator."
        case .accountRestricted: "A restriction on your account prevents this sign-in. Ask your administrator."
        }
    }

    /// The refusal on the wire: `access_denied` (HTTP 403) with this restriction as its public reason,
    /// ending the flow (the same answer would only be refused again).
    var error: BrokerError {
        BrokerError(.accessDenied, .forbidden, message).publicly(because: rawValue).endingFlow()
    }
}
