import GatehousePluginKit

extension TOTPProvider {
    static let setupChallenge = ChallengeDescription(
        type: "totp_setup",
        summary: "Set up an authenticator app: scan the QR code (or open `otpauthURI`, or type `secret`), then answer with the code the app shows.",
        title: "Set up your authenticator app",
        prompt: "Scan this code with your authenticator app, or type the key into it, then enter the code it shows.",
        inputs: [ChallengeInput(name: "code", label: "Code from the app", kind: .code, autocomplete: "one-time-code", inputmode: "numeric", maxLength: 16)],
        details: [
            ChallengeDetail("otpauthURI", .string, "The `otpauth://totp/` URI (Key URI Format) holding the secret: open it, or draw it as a QR code."),
            ChallengeDetail("qrCode", .string, "The URI as a QR code: a `data:image/svg+xml;base64,` URL."),
            ChallengeDetail("secret", .string, "The secret in Base32, in groups of four, to type into an app by hand."),
            ChallengeDetail("issuer", .string, "The issuer the app shows."), ChallengeDetail("account", .string, "The account name the app shows."),
            ChallengeDetail("algorithm", .string, "SHA1, SHA256 or SHA512."), ChallengeDetail("digits", .integer, "Digits of a code."),
            ChallengeDetail("period", .integer, "Seconds per code."),
        ],
        submitLabel: "Confirm",
        image: ChallengeImage(field: "qrCode", alt: "QR code of the authenticator app's key"),
        facts: [ChallengeFact(field: "secret", label: "Key (to type in instead)")]
    )

    static let recoveryCodesChallenge = ChallengeDescription(
        type: "totp_recovery_codes",
        summary: "The authenticator app is set up: keep these single-use recovery codes somewhere safe (shown this once); answer `{}` to go on.",
        title: "Save your recovery codes",
        prompt: "Each code signs you in once if you lose your authenticator app. They are shown only now.",
        details: [ChallengeDetail("recoveryCodes", .array, "The recovery codes, as the person types them.")],
        submitLabel: "I have saved them", choice: true,
        facts: [ChallengeFact(field: "recoveryCodes", label: "Recovery codes")]
    )

    static let codeChallenge = ChallengeDescription(
        type: "totp", summary: "Enter the code the authenticator app shows now; `use_recovery_code` asks for a recovery code instead.",
        title: "Enter the code from your authenticator app",
        inputs: [ChallengeInput(name: "code", label: "Code", kind: .code, autocomplete: "one-time-code", inputmode: "numeric", maxLength: 16)],
        actions: [ChallengeAction(name: "use_recovery_code", label: "Use a recovery code")],
        details: [ChallengeDetail("digits", .integer, "Digits of a code.")],
        submitLabel: "Continue"
    )

    static let recoveryChallenge = ChallengeDescription(
        type: "totp_recovery", summary: "Enter one of the recovery codes shown when the app was set up; `use_app` goes back to the app's code.",
        title: "Enter a recovery code",
        inputs: [ChallengeInput(name: "recoveryCode", label: "Recovery code", kind: .text, autocomplete: "off", maxLength: 32)],
        actions: [ChallengeAction(name: "use_app", label: "Use the app's code")],
        submitLabel: "Continue"
    )
}
