/// Every challenge type the broker knows: the core's own (`credentials`, `retry`) and those the
/// registered plugins declare. The engine refuses to show an undeclared challenge and checks each
/// answer against its declaration; the server renders pages and the OpenAPI document from it.
public struct ChallengeCatalog: Sendable {
    private var descriptions: [String: ChallengeDescription] = [:]
    /// The registered plugins' texts in every language (`PluginFactory.translations`), merged: what
    /// the pages and the flow API show their challenges and errors in.
    public private(set) var translations = TextTranslations()

    /// The core's challenges and `declared`.
    public init(_ declared: [ChallengeDescription] = []) {
        for description in Self.core + declared { add(description) }
    }

    /// Adds a plugin's texts; a later plugin's translation of the same English text wins.
    public mutating func add(_ translations: TextTranslations) {
        self.translations = self.translations.merging(translations)
    }

    /// Adds a declaration. Two plugins may share a type only with the same declaration; anything else
    /// is a programming error caught by the first test that registers both.
    public mutating func add(_ description: ChallengeDescription) {
        if let existing = descriptions[description.type] {
            precondition(existing == description, "challenge type '\(description.type)' is declared twice, differently")
        }
        descriptions[description.type] = description
    }

    public func description(of type: String) -> ChallengeDescription? { descriptions[type] }

    /// Every declaration, by type.
    public var all: [ChallengeDescription] { descriptions.values.sorted { $0.type < $1.type } }

    /// The declaration of a challenge a plugin asked for; a plugin that uses an undeclared type is a bug.
    func declaration(of challenge: Challenge) throws(BrokerError) -> ChallengeDescription {
        guard let description = descriptions[challenge.type] else {
            throw BrokerError.internalFailure("The challenge type '\(challenge.type)' is not declared by any plugin.")
        }
        return description
    }

    /// The challenges of the core itself.
    static let core: [ChallengeDescription] = [
        .credentials, .retry, .callbackReceived, .confirmProfile, .consent, .deviceConsent, .recoverAccount, .recoveryCode, .newPassword,
    ]
}

extension ChallengeDescription {
    /// A new account's profile, as the identity provider gave it, for the person to confirm or edit
    /// (`Policy.confirmProfile`); a changed address is proven with an emailed `code` before it is kept.
    public static let confirmProfile = ChallengeDescription(
        type: "confirm_profile",
        summary: "Confirm the profile (answer `{}`), or send the fields to change; a new `email` is proven by the `code` sent to it (`codeSentTo`).",
        title: "Confirm your profile", prompt: "Check the details we received. Change anything that is wrong.",
        inputs: [
            ChallengeInput(name: "name", label: "Name", autocomplete: "name", maxLength: 256, prefill: "name", required: false),
            ChallengeInput(name: "email", label: "Email address", kind: .email, maxLength: 254, prefill: "email", required: false),
            ChallengeInput(name: "picture", label: "Picture URL", autocomplete: "photo", maxLength: 2048, prefill: "picture", required: false),
            ChallengeInput(name: "code", label: "Code sent to the new address (after changing it)", kind: .code, maxLength: 16, required: false),
        ],
        actions: [ChallengeAction(name: "resend", label: "Send the code again")],
        details: [
            ChallengeDetail("profile", .object, "`name`, `email`, `emailVerified`, `picture` as the broker holds them."),
            ChallengeDetail("codeSentTo", .string, "Set once a changed address was sent a code: the address, masked."),
        ],
        submitLabel: "Confirm"
    )
}

extension ChallengeDescription {
    /// A third-party app (`Policy.consentRequired`) asks for the person's data: they allow it (answer
    /// `{}`, remembered for this app and these scopes) or deny it (`deny`, the app hears `access_denied`).
    public static let consent = ChallengeDescription(
        type: "consent",
        summary: "The app asks for the person's data (`scopes`): answer `{}` to allow it, `{\"deny\": \"true\"}` to refuse.",
        title: "Allow access", prompt: "{appName} asks to: {purposes}",
        actions: [ChallengeAction(name: "deny", label: "Deny")],
        details: [
            ChallengeDetail("appName", .string, "The app's name."),
            ChallengeDetail("scopes", .array, "The scopes the app asks for."),
            ChallengeDetail("purposes", .string, "What the scopes let the app do, in words, for the page."),
        ],
        submitLabel: "Allow"
    )
}

extension ChallengeDescription {
    /// The last page of a device's verification (RFC 8628 section 5.4): the person checks that the
    /// device shows the same code and allows the app on it (answer `{}`) or refuses it (`deny`, the
    /// device hears `access_denied`). Always asked, even for apps that need no consent.
    public static let deviceConsent = ChallengeDescription(
        type: "device_consent",
        summary: "A device asks to sign in: check its `userCode`, answer `{}` to allow it or `{\"deny\": \"true\"}` to refuse.",
        title: "Sign in on your device",
        prompt: "Check that your device shows the code {userCode}. Only allow it if you started this sign-in yourself. {appName} on that device asks to: {purposes}",
        actions: consent.actions,
        details: consent.details + [ChallengeDetail("userCode", .string, "The code the device shows, as the person typed it.")],
        submitLabel: "Allow"
    )
}
