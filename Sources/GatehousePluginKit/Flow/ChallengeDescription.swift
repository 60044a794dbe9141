import Foundation

/// How one challenge type looks, declared once by the plugin (or the core) that uses it: the answer
/// fields a client sends (names, JSON types, which are secret, size limits), the facts the challenge
/// tells the client, and how a person sees it in a browser (title, prompt, labels, input kinds,
/// `autocomplete`, `inputmode`, extra buttons, a link-out). The server renders any declared challenge
/// with one generic page and checks every answer against its declaration before the plugin sees it,
/// so a plugin with a new challenge type needs no change to the server or the core.
public struct ChallengeDescription: Sendable, Hashable {
    /// The `challenge.type` on the wire, e.g. `email_code`.
    public var type: String
    /// What the challenge is, for docs/openapi.yaml.
    public var summary: String
    /// The page's heading.
    public var title: String
    /// What the page says above the form. `{name}` is replaced by the challenge's string field `name`
    /// (`Enter the code we sent to {sentTo}.`); a challenge may bring its own (`Challenge.prompt`).
    public var prompt: String?
    /// The answer fields, in page order.
    package var inputs: [ChallengeInput]
    /// Extra buttons: each submits its field with its value instead of the inputs (`resend`).
    package var actions: [ChallengeAction]
    /// A link the person follows to go on elsewhere (an upstream sign-in page).
    package var link: ChallengeLink?
    /// Facts the challenge carries to the client besides `fields` (for docs/openapi.yaml).
    package var details: [ChallengeDetail]
    /// The main button's label.
    public var submitLabel: String
    /// Set for challenges the person answers elsewhere (an upstream sign-in page): the browser is sent
    /// to the URL, and the answer (the declared `inputs`) comes back at the broker's callback.
    package var callback: ChallengeCallback?
    /// Its answers are choices, not guesses (how to go on with an activation): they are not held back
    /// by the address and account lockouts. Such a challenge checks no secret; a wrong answer it
    /// reports anyway still counts against the flow and is audited.
    public var choice: Bool
    /// A picture the page shows above the form (a QR code); the flow API carries its field as is.
    package var image: ChallengeImage?
    /// Values the page shows as they are, to copy or keep (a key, recovery codes).
    package var facts: [ChallengeFact]
    /// The script the page runs (a WebAuthn ceremony), served as a static file; nil: none.
    package var script: ChallengeScript?

    /// A declaration: the page's texts, whether its answers are choices, and its parts (answer fields,
    /// buttons, facts the client is told...) in page order. A challenge has at most one `link`,
    /// `callback`, `image` and `script`: a later one replaces an earlier.
    public init(
        type: String, summary: String, title: String = "Sign in", prompt: String? = nil, submitLabel: String = "Continue", choice: Bool = false,
        elements: [ChallengeElement]
    ) {
        self.init(type: type, summary: summary, title: title, prompt: prompt, submitLabel: submitLabel, choice: choice)
        for element in elements {
            switch element.part {
            case .input(let input): inputs.append(input)
            case .action(let action): actions.append(action)
            case .link(let link): self.link = link
            case .detail(let detail): details.append(detail)
            case .callback(let callback): self.callback = callback
            case .image(let image): self.image = image
            case .fact(let fact): facts.append(fact)
            case .script(let script): self.script = script
            }
        }
    }

    /// A declaration by parts, for the broker's own challenge types.
    package init(
        type: String, summary: String, title: String = "Sign in", prompt: String? = nil, inputs: [ChallengeInput] = [], actions: [ChallengeAction] = [],
        link: ChallengeLink? = nil, details: [ChallengeDetail] = [], submitLabel: String = "Continue", callback: ChallengeCallback? = nil,
        choice: Bool = false, image: ChallengeImage? = nil, facts: [ChallengeFact] = [], script: ChallengeScript? = nil
    ) {
        self.choice = choice
        self.script = script
        self.image = image
        self.facts = facts
        self.type = type
        self.summary = summary
        self.title = title
        self.prompt = prompt
        self.inputs = inputs
        self.actions = actions
        self.link = link
        self.details = details
        self.submitLabel = submitLabel
        self.callback = callback
    }

    /// The prompt for one challenge: its own, else the declared one with `{field}`s filled in.
    public func prompt(for challenge: Challenge) -> String? {
        if let own = challenge.prompt { return own }
        guard var text = prompt else { return nil }
        for (name, value) in challenge.fields {
            if let string = value.stringValue { text = text.replacingOccurrences(of: "{\(name)}", with: string) }
        }
        return text
    }

    /// Checks an answer before the plugin sees it: every field must be declared (an input or an
    /// action), of its declared JSON type, and within its size limit. Refusals are `invalid_request`
    /// naming the field. Whether required fields are there is the plugin's to say (an action such as
    /// `resend` comes without them).
    public func validate(_ answer: ChallengeResponse) throws(BrokerError) {
        for (name, value) in answer.values.sorted(by: { $0.key < $1.key }) {
            if let action = actions.first(where: { $0.name == name }) {
                guard value == .bool(true) || value == .string(action.value) else { throw Self.refused(name, "must be true") }
                continue
            }
            guard let input = inputs.first(where: { $0.name == name }) else {
                throw Self.refused(name, "is not a field of the \(type) challenge")
            }
            if input.kind == .json {
                if value.serialized().count > input.maxLength { throw Self.refused(name, "is larger than \(input.maxLength) bytes") }
            } else {
                guard let string = value.stringValue else { throw Self.refused(name, "must be a string") }
                if string.utf8.count > input.maxLength { throw Self.refused(name, "is longer than \(input.maxLength) bytes") }
            }
        }
    }

    /// A browser form's answer (every value a string) with the JSON inputs read as JSON; text that is
    /// not JSON stays a string.
    public func readingForm(_ answer: ChallengeResponse) -> ChallengeResponse {
        var values = answer.values
        for input in inputs where input.kind == .json {
            if let text = values[input.name]?.stringValue, let parsed = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) {
                values[input.name] = parsed
            }
        }
        return ChallengeResponse(values)
    }

    static func refused(_ field: String, _ message: String) -> BrokerError {
        BrokerError(.invalidRequest, .badRequest, "The answer field '\(field)' \(message).", issues: [ConfigIssue(path: "answer.\(field)", message)])
    }
}

extension ChallengeDescription {
    /// A username and a password (the `local` and `ldap` providers, and any other that checks one).
    public static let credentials = ChallengeDescription(
        type: "credentials", summary: "A username and a password.",
        inputs: [
            ChallengeInput(name: "username", label: "Username", autocomplete: "username", maxLength: 256, prefill: "username", elementID: "username"),
            ChallengeInput(name: "password", label: "Password", kind: .secret, maxLength: 1024, elementID: "password"),
        ],
        details: [
            ChallengeDetail("username", .string, "A username to suggest (the app's `login_hint`)."),
            ChallengeDetail("passwordPolicy", .object, "Registration only: `minLength` and `maxLength` of the app's password policy."),
            ChallengeDetail("passwordRules", .array, "Registration only: every rule of the app's password policy, in words, to show before the person types."),
        ], submitLabel: "Sign in"
    )

    /// A step that could not start (a code was not delivered): answering it (`{}`) starts it again.
    public static let retry = ChallengeDescription(
        type: Challenge.retryType, summary: "The next step could not start; answer `{}` to try again.",
        prompt: "The next step could not start ({error}). Try again.",
        details: [ChallengeDetail("error", .string, "Why the step could not start (`delivery_failed`, `rate_limited`, `locked_out`).")]
    )

    /// A flow whose answer came back at the broker's callback (the person signed in upstream) waits
    /// for the app that started it: a native app answers this to go on. A public app proves with the
    /// PKCE verifier of the `codeChallenge` it started the flow with that it is the app that started
    /// it (RFC 8252 section 8.1: another app may have received the redirect); a confidential app
    /// authenticates as on every flow request.
    public static let callbackReceived = ChallengeDescription(
        type: Challenge.callbackReceivedType,
        summary: "The browser came back from the sign-in elsewhere; answer with the `code` the return URI carried and, for a public app, the PKCE `codeVerifier`.",
        prompt: "Signed in. Return to the app to go on.",
        inputs: [ChallengeInput(name: "code", label: "Code", maxLength: 64), ChallengeInput(name: "codeVerifier", label: "Code verifier", maxLength: 128)]
    )
}
