import Foundation

/// What the broker asks for next in a flow (docs/flow-api.md, "Challenges"), typed. Every case keeps
/// the challenge as the broker sent it in `raw`, so facts this SDK does not model are not lost.
public enum Challenge: Sendable, Equatable {
    /// Open `url` in the system browser; when the broker redirects to the app's return URI, hand that
    /// URL back with `FlowAnswer.browserReturn(_:)`.
    case browser(url: URL, provider: String?, raw: JSON)
    /// A username and password (`local`, `ldap`). `passwordPolicy` is there when registering.
    case credentials(provider: String?, usernameHint: String?, passwordPolicy: PasswordPolicy?, raw: JSON)
    /// Data for the app's own registration API (`custom-api`): `step` is `register` (one step) or
    /// `finish` (after the broker's init call, with `data` from the app's API); `error` after a
    /// refusal the app may retry.
    case customData(provider: String?, step: String?, data: JSON?, error: CustomDataError?, raw: JSON)
    /// Choose a PIN, within `rules`; `reset` when this replaces a forgotten one.
    case createPIN(rules: PINRules, reset: Bool, raw: JSON)
    /// Enter the PIN; `resetAvailable` says whether `FlowAnswer.forgotPIN` may be sent.
    case pin(resetAvailable: Bool, raw: JSON)
    /// An email address to send a one-time code to; `enrol` when it becomes the account's.
    case emailAddress(enrol: Bool, raw: JSON)
    /// The code just emailed to `sentTo` (masked); a new one may be asked after `resendAfter`.
    case emailCode(sentTo: String?, codeLength: Int?, expiresAt: Date?, resendAfter: Date?, raw: JSON)
    /// Register this installation's device key (`device-key`): answer `FlowAnswer.registerDeviceKey`,
    /// and the SDK makes the key, its proof and the device facts. `attestation` is `optional` or
    /// `required` when the app's policy asks for a device attestation with the key.
    case registerDeviceKey(nonce: String, audience: String, algorithms: [String], attestation: String?, attestationFormats: [String], raw: JSON)
    /// Prove the device key: answer `FlowAnswer.signWithDeviceKey`, and the SDK signs the assertion.
    case deviceKeyAssertion(nonce: String, audience: String, raw: JSON)
    /// A device attestation for `challenge` (only the device can make one: see `AttestationProvider`).
    case attestation(challenge: String, formats: [String], requestHash: String?, raw: JSON)
    /// The activation code (QR, deep link or typed) and its PIN.
    case activation(raw: JSON)
    /// The activation found something to decide: `outcome` (`re_activation`, `already_activated`,
    /// `merge`) and the `choices` the broker accepts.
    case activationChoice(outcome: String, choices: [String], raw: JSON)
    /// Confirm (or change) the profile the broker will keep.
    case confirmProfile(profile: JSON?, raw: JSON)
    /// Starting the second factor failed (`error`: `delivery_failed`, `rate_limited`, `locked_out`);
    /// answer `FlowAnswer.retry` to try again.
    case retry(error: String?, raw: JSON)
    /// A signed JWT from the app's back end (`fsso-jwt`).
    case signedJWT(audience: String?, raw: JSON)
    /// The name a new passkey and its account are made with (`webauthn`): answer `FlowAnswer.passkeyName`.
    case passkeyName(raw: JSON)
    /// Create a passkey (or a security key, as a second factor): hand `options` to the platform's
    /// passkey API and answer `FlowAnswer.passkey` with what it made.
    case createPasskey(options: PasskeyOptions, raw: JSON)
    /// Sign in with a passkey: `options.credentialIDs` is empty for a sign-in without a username
    /// (any passkey of the relying party), else the account's credentials (a second factor).
    case usePasskey(options: PasskeyOptions, raw: JSON)
    /// Set up an authenticator app (`totp`): show `uri` (or its QR code, `raw["qrCode"]`, or the
    /// Base32 `secret`), then answer `FlowAnswer.authenticatorCode` with the app's first code.
    case authenticatorAppSetup(uri: URL?, secret: String, raw: JSON)
    /// The authenticator app is set up: show these recovery codes once, then answer `FlowAnswer.recoveryCodesSaved`.
    case recoveryCodes([String], raw: JSON)
    /// The authenticator app's current code (`FlowAnswer.authenticatorCode`), or `FlowAnswer.useRecoveryCode`.
    case authenticatorCode(digits: Int?, raw: JSON)
    /// One of the recovery codes (`FlowAnswer.recoveryCode`), or `FlowAnswer.useAuthenticatorApp`.
    case recoveryCode(raw: JSON)
    /// A challenge type this SDK does not know; answer it with `FlowAnswer.fields`.
    case other(type: String, raw: JSON)

    /// The challenge's `type` on the wire.
    public var type: String { raw["type"]?.string ?? "" }

    /// The challenge as the broker sent it.
    public var raw: JSON {
        switch self {
        case .browser(_, _, let raw), .credentials(_, _, _, let raw), .customData(_, _, _, _, let raw), .createPIN(_, _, let raw),
            .pin(_, let raw), .emailAddress(_, let raw), .emailCode(_, _, _, _, let raw), .registerDeviceKey(_, _, _, _, _, let raw),
            .deviceKeyAssertion(_, _, let raw), .attestation(_, _, _, let raw), .activation(let raw), .activationChoice(_, _, let raw),
            .confirmProfile(_, let raw), .retry(_, let raw), .signedJWT(_, let raw), .passkeyName(let raw), .createPasskey(_, let raw), .usePasskey(_, let raw),
            .authenticatorAppSetup(_, _, let raw), .recoveryCodes(_, let raw), .authenticatorCode(_, let raw), .recoveryCode(let raw), .other(_, let raw):
            raw
        }
    }

    init(_ raw: JSON) {
        let type = raw["type"]?.string ?? ""
        switch type {
        case "redirect":
            if let url = raw["url"]?.string.flatMap(URL.init(string:)) {
                self = .browser(url: url, provider: raw["provider"]?.string, raw: raw)
            } else {
                self = .other(type: type, raw: raw)
            }
        case "credentials":
            let policy = raw["passwordPolicy"].map { PasswordPolicy(minLength: $0["minLength"]?.int, maxLength: $0["maxLength"]?.int) }
            self = .credentials(provider: raw["provider"]?.string, usernameHint: raw["username"]?.string, passwordPolicy: policy, raw: raw)
        case "custom":
            let error = raw["error"].map { CustomDataError(code: $0["code"]?.string ?? "", message: $0["message"]?.string ?? "") }
            self = .customData(provider: raw["provider"]?.string, step: raw["step"]?.string, data: raw["data"], error: error, raw: raw)
        case "create_pin":
            let rules = PINRules(minLength: raw["minLength"]?.int ?? 0, maxLength: raw["maxLength"]?.int ?? 0, digitsOnly: raw["digitsOnly"]?.bool ?? true)
            self = .createPIN(rules: rules, reset: raw["reset"]?.bool ?? false, raw: raw)
        case "pin":
            self = .pin(resetAvailable: raw["resetAvailable"]?.bool ?? false, raw: raw)
        case "email_address":
            self = .emailAddress(enrol: raw["enrol"]?.bool ?? false, raw: raw)
        case "email_code":
            self = .emailCode(
                sentTo: raw["sentTo"]?.string, codeLength: raw["codeLength"]?.int, expiresAt: raw["codeExpiresAt"]?.date,
                resendAfter: raw["resendAfter"]?.date, raw: raw
            )
        case "register_key":
            self = .registerDeviceKey(
                nonce: raw["nonce"]?.string ?? "", audience: raw["audience"]?.string ?? "", algorithms: raw["algorithms"]?.array?.compactMap(\.string) ?? ["ES256"],
                attestation: raw["attestation"]?.string, attestationFormats: raw["attestationFormats"]?.array?.compactMap(\.string) ?? [], raw: raw
            )
        case "assertion":
            self = .deviceKeyAssertion(nonce: raw["nonce"]?.string ?? "", audience: raw["audience"]?.string ?? "", raw: raw)
        case "attestation":
            self = .attestation(
                challenge: raw["challenge"]?.string ?? "", formats: raw["formats"]?.array?.compactMap(\.string) ?? [], requestHash: raw["requestHash"]?.string,
                raw: raw
            )
        case "activation":
            self = .activation(raw: raw)
        case "activation_choice":
            self = .activationChoice(outcome: raw["outcome"]?.string ?? "", choices: raw["choices"]?.array?.compactMap(\.string) ?? [], raw: raw)
        case "confirm_profile":
            self = .confirmProfile(profile: raw["profile"], raw: raw)
        case "retry":
            self = .retry(error: raw["error"]?.string, raw: raw)
        case "jwt":
            self = .signedJWT(audience: raw["audience"]?.string, raw: raw)
        case "webauthn_username":
            self = .passkeyName(raw: raw)
        case "webauthn_create":
            self = .createPasskey(options: PasskeyOptions(raw["publicKey"] ?? [:]), raw: raw)
        case "webauthn_get":
            self = .usePasskey(options: PasskeyOptions(raw["publicKey"] ?? [:]), raw: raw)
        case "totp_setup":
            self = .authenticatorAppSetup(uri: raw["otpauthURI"]?.string.flatMap(URL.init(string:)), secret: raw["secret"]?.string ?? "", raw: raw)
        case "totp_recovery_codes":
            self = .recoveryCodes(raw["recoveryCodes"]?.array?.compactMap(\.string) ?? [], raw: raw)
        case "totp":
            self = .authenticatorCode(digits: raw["digits"]?.int, raw: raw)
        case "totp_recovery":
            self = .recoveryCode(raw: raw)
        default:
            self = .other(type: type, raw: raw)
        }
    }
}

/// The password rules a registering credentials challenge states.
public struct PasswordPolicy: Sendable, Equatable {
    public var minLength: Int?
    public var maxLength: Int?
}

/// The PIN rules a create-PIN challenge states (the deny-list, sequence and repeat rules are the
/// broker's to check: their refusals come back as `GatehouseError.pinRule`).
public struct PINRules: Sendable, Equatable {
    public var minLength: Int
    public var maxLength: Int
    public var digitsOnly: Bool
}

/// A refusal from the app's registration API that the person may correct and send again.
public struct CustomDataError: Sendable, Equatable {
    public var code: String
    public var message: String
}
