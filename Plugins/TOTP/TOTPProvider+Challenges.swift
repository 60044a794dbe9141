import GatehousePluginKit

extension TOTPProvider {
    static let setupChallenge = ChallengeDescription(
        type: "totp_setup", summary: "Set up an authenticator app: scan the QR code (or open `otpauthURI`, or type `secret`), then answer with the code the app shows.",
        title: "Set up your authenticator app", prompt: "Scan this code with your authenticator app, or type the key into it, then enter the code it shows.",
        submitLabel: "Confirm",
        elements: [
            .code("code", label: "Code from the app", maxLength: 16),
            .detail("otpauthURI", .string, "The `otpauth://totp/` URI (Key URI Format) holding the secret: open it, or draw it as a QR code."),
            .detail("qrCode", .string, "The URI as a QR code: a `data:image/svg+xml;base64,` URL."),
            .detail("secret", .string, "The secret in Base32, in groups of four, to type into an app by hand."), .detail("issuer", .string, "The issuer the app shows."),
            .detail("account", .string, "The account name the app shows."), .detail("algorithm", .string, "SHA1, SHA256 or SHA512."),
            .detail("digits", .integer, "Digits of a code."), .detail("period", .integer, "Seconds per code."),
            .image(field: "qrCode", alt: "QR code of the authenticator app's key"), .fact(field: "secret", label: "Key (to type in instead)"),
        ])

    static let recoveryCodesChallenge = ChallengeDescription(
        type: "totp_recovery_codes",
        summary: "The authenticator app is set up: keep these single-use recovery codes somewhere safe (shown this once); answer `{}` to go on.",
        title: "Save your recovery codes", prompt: "Each code signs you in once if you lose your authenticator app. They are shown only now.",
        submitLabel: "I have saved them", choice: true,
        elements: [.detail("recoveryCodes", .array, "The recovery codes, as the person types them."), .fact(field: "recoveryCodes", label: "Recovery codes")])

    static let codeChallenge = ChallengeDescription(
        type: "totp", summary: "Enter the code the authenticator app shows now; `use_recovery_code` asks for a recovery code instead.",
        title: "Enter the code from your authenticator app", submitLabel: "Continue",
        elements: [
            .code("code", label: "Code", maxLength: 16), .action("use_recovery_code", label: "Use a recovery code"), .detail("digits", .integer, "Digits of a code."),
        ])

    static let recoveryChallenge = ChallengeDescription(
        type: "totp_recovery", summary: "Enter one of the recovery codes shown when the app was set up; `use_app` goes back to the app's code.",
        title: "Enter a recovery code", submitLabel: "Continue",
        elements: [.text("recoveryCode", label: "Recovery code", maxLength: 32), .action("use_app", label: "Use the app's code")])
}
