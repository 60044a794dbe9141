import Foundation

// The parts of a challenge declaration as the broker reads them; plugins declare them as
// `ChallengeElement`s.

/// One answer field of a challenge, and how a page asks for it.
package struct ChallengeInput: Sendable, Hashable {
    /// What kind of value the field takes, which decides its JSON type and its HTML input.
    package enum Kind: Sendable, Hashable {
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
        package var htmlType: String {
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
    package var name: String
    /// The label a person sees.
    package var label: String
    /// How a page asks for it.
    package var kind: Kind
    /// The HTML `autocomplete` hint (`username`, `current-password`, `one-time-code`, `email`, `off`).
    package var autocomplete: String
    /// The HTML `inputmode`, when the kind does not imply one.
    package var inputmode: String?
    /// The most bytes the value may have (serialized, for JSON values).
    package var maxLength: Int
    /// The challenge field whose value fills this input (a username the app suggested).
    package var prefill: String?
    /// The HTML element id; `field-<name>` unless a page keeps an older one.
    package var elementID: String
    /// Whether a page's form must have it filled in (`required`); a field only some answers carry
    /// (a code after a changed address) is not.
    package var required: Bool

    /// An answer field.
    package init(
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
package struct ChallengeAction: Sendable, Hashable {
    /// The answer field the button sets.
    package var name: String
    /// The value it sets.
    package var value: String
    /// The button's label.
    package var label: String

    /// A button that answers with `name` = `value` instead of the form.
    package init(name: String, value: String = "true", label: String) {
        self.name = name
        self.value = value
        self.label = label
    }
}

/// A link-out of a challenge page: the challenge field holding an `https` (or loopback `http`) URL,
/// and the link's text.
package struct ChallengeLink: Sendable, Hashable {
    /// The challenge's string field holding the URL.
    package var urlField: String
    /// The link's text.
    package var label: String

    /// A link-out.
    package init(urlField: String, label: String) {
        self.urlField = urlField
        self.label = label
    }
}

/// How a challenge that is answered elsewhere works. The challenge's string field `urlField` holds an
/// `https` (or loopback `http`) URL: a browser flow is sent there at once, a native app opens it in the
/// system browser. The page there sends the browser back to the broker's callback
/// (`PluginEnvironment.callbackURL`) with the flow's id as the `stateParameter` query or form
/// parameter (`state`; SAML's `RelayState`) and the answer as the other parameters; the broker keeps
/// only the declared inputs. With `formField`, a browser flow posts instead (SAML's HTTP-POST binding):
/// that field is an object `{"action": URL, "fields": {name: string}}`; a native app still opens `urlField`. One callback per
/// challenge: a second one finds the step done.
package struct ChallengeCallback: Sendable, Hashable {
    /// The challenge's string field holding the URL the browser goes to.
    package var urlField: String
    /// A callback counts as an answer only with at least one of these inputs (`code`, `error`);
    /// anything else (a prefetch, a bare `state`) is refused and changes nothing.
    package var answerFields: [String]
    /// The callback parameter that names the flow.
    package var stateParameter: String
    /// The challenge's object field `{"action": URL, "fields": {name: string}}` a browser posts, if any.
    package var formField: String?

    /// A callback declaration.
    package init(urlField: String, answerFields: [String], stateParameter: String = Self.stateParameter, formField: String? = nil) {
        self.urlField = urlField
        self.answerFields = answerFields
        self.stateParameter = stateParameter
        self.formField = formField
    }

    /// The callback parameter that names the flow unless a challenge declares another.
    package static let stateParameter = "state"
}

/// A fact a challenge tells the client (`sentTo`, `codeExpiresAt`...), for docs/openapi.yaml.
package struct ChallengeDetail: Sendable, Hashable {
    /// The JSON type of a challenge field.
    package typealias ValueType = ChallengeElement.ValueType

    /// The field's name.
    package var name: String
    /// Its JSON type.
    package var type: ValueType
    /// What it holds, for the API reference.
    package var summary: String

    /// A challenge field.
    package init(_ name: String, _ type: ValueType, _ summary: String) {
        self.name = name
        self.type = type
        self.summary = summary
    }
}
