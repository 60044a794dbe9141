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
    public var inputs: [ChallengeInput]
    /// Extra buttons: each submits its field with its value instead of the inputs (`resend`).
    public var actions: [ChallengeAction]
    /// A link the person follows to go on elsewhere (an upstream sign-in page).
    public var link: ChallengeLink?
    /// Facts the challenge carries to the client besides `fields` (for docs/openapi.yaml).
    public var details: [ChallengeDetail]
    /// The main button's label.
    public var submitLabel: String
    /// Set for challenges the person answers elsewhere (an upstream sign-in page): the browser is sent
    /// to the URL, and the answer (the declared `inputs`) comes back at the broker's callback.
    public var callback: ChallengeCallback?
    /// Its answers are choices, not guesses (how to go on with an activation): they are not held back
    /// by the address and account lockouts. Such a challenge checks no secret; a wrong answer it
    /// reports anyway still counts against the flow and is audited.
    public var choice: Bool
    /// A picture the page shows above the form (a QR code); the flow API carries its field as is.
    public var image: ChallengeImage?
    /// Values the page shows as they are, to copy or keep (a key, recovery codes).
    public var facts: [ChallengeFact]
    /// The script the page runs (a WebAuthn ceremony), served as a static file; nil: none.
    public var script: ChallengeScript?

    /// A declaration; see each property.
    public init(
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

/// One answer field of a challenge, and how a page asks for it.
public struct ChallengeInput: Sendable, Hashable {
    /// What kind of value the field takes, which decides its JSON type and its HTML input.
    public enum Kind: Sendable, Hashable {
        /// Free text (`<input type=text>`).
        case text
        /// A secret: never shown, never logged (`<input type=password>`).
        case secret
        /// An email address (`<input type=email>`).
        case email
        /// A one-time code or another number typed digit by digit (`inputmode=numeric`).
        case code
        /// Set from the challenge itself, not typed (`<input type=hidden>`); `prefill` names the field.
        case hidden
        /// Any JSON value (custom data relayed to an API); every other kind is a JSON string. A page
        /// shows a text area and reads JSON.
        case json

        /// The HTML input type.
        public var htmlType: String {
            switch self {
            case .text, .code: "text"
            case .secret: "password"
            case .email: "email"
            case .hidden: "hidden"
            case .json: "textarea"
            }
        }
    }

    /// The answer field's name.
    public var name: String
    /// The label a person sees.
    public var label: String
    /// How a page asks for it.
    public var kind: Kind
    /// The HTML `autocomplete` hint (`username`, `current-password`, `one-time-code`, `email`, `off`).
    public var autocomplete: String
    /// The HTML `inputmode`, when the kind does not imply one.
    public var inputmode: String?
    /// The most bytes the value may have (serialized, for JSON values).
    public var maxLength: Int
    /// The challenge field whose value fills this input (a username the app suggested).
    public var prefill: String?
    /// The HTML element id; `field-<name>` unless a page keeps an older one.
    public var elementID: String
    /// Whether a page's form must have it filled in (`required`); a field only some answers carry
    /// (a code after a changed address) is not.
    public var required: Bool

    /// An answer field.
    public init(
        name: String, label: String, kind: Kind = .text, autocomplete: String? = nil, inputmode: String? = nil, maxLength: Int = 1024,
        prefill: String? = nil, elementID: String? = nil, required: Bool = true
    ) {
        self.required = required
        self.name = name
        self.label = label
        self.kind = kind
        self.autocomplete = autocomplete ?? (kind == .secret ? "current-password" : kind == .code ? "one-time-code" : kind == .email ? "email" : "off")
        self.inputmode = inputmode ?? (kind == .code ? "numeric" : nil)
        self.maxLength = maxLength
        self.prefill = prefill
        self.elementID = elementID ?? "field-\(name)"
    }
}

/// An extra button of a challenge page: it submits `name=value` (the flow API sends `true`).
public struct ChallengeAction: Sendable, Hashable {
    /// The answer field the button sets.
    public var name: String
    /// The value it sets.
    public var value: String
    /// The button's label.
    public var label: String

    /// A button that answers with `name` = `value` instead of the form.
    public init(name: String, value: String = "true", label: String) {
        self.name = name
        self.value = value
        self.label = label
    }
}

/// A link-out of a challenge page: the challenge field holding an `https` (or loopback `http`) URL,
/// and the link's text.
public struct ChallengeLink: Sendable, Hashable {
    /// The challenge's string field holding the URL.
    public var urlField: String
    /// The link's text.
    public var label: String

    /// A link-out.
    public init(urlField: String, label: String) {
        self.urlField = urlField
        self.label = label
    }
}

/// How a challenge that is answered elsewhere works. The challenge's string field `urlField` holds an
/// `https` (or loopback `http`) URL: a browser flow is sent there at once, a native app opens it in the
/// system browser. The page there sends the browser back to the broker's callback
/// (`PluginEnvironment.callbackURL`) with the flow's id as the `state` query or form parameter and the
/// answer as the other parameters; the broker keeps only the declared inputs. One callback per
/// challenge: a second one finds the step done.
public struct ChallengeCallback: Sendable, Hashable {
    /// The challenge's string field holding the URL the browser goes to.
    public var urlField: String
    /// A callback counts as an answer only with at least one of these inputs (`code`, `error`);
    /// anything else (a prefetch, a bare `state`) is refused and changes nothing.
    public var answerFields: [String]

    /// A callback declaration.
    public init(urlField: String, answerFields: [String]) {
        self.urlField = urlField
        self.answerFields = answerFields
    }

    /// The callback parameter that names the flow.
    public static let stateParameter = "state"
}

/// A fact a challenge tells the client (`sentTo`, `codeExpiresAt`...), for docs/openapi.yaml.
public struct ChallengeDetail: Sendable, Hashable {
    /// The JSON type of a challenge field.
    public enum ValueType: String, Sendable, Hashable { case string, integer, boolean, object, array, any }

    /// The field's name.
    public var name: String
    /// Its JSON type.
    public var type: ValueType
    /// What it holds, for the API reference.
    public var summary: String

    /// A challenge field.
    public init(_ name: String, _ type: ValueType, _ summary: String) {
        self.name = name
        self.type = type
        self.summary = summary
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
        details: [ChallengeDetail("username", .string, "A username to suggest (the app's `login_hint`).")], submitLabel: "Sign in"
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
