import Foundation

/// One part of a challenge type's declaration (`ChallengeDescription`): an answer field and how a page
/// asks for it, a button, a link-out, a callback from elsewhere, a fact the client is told, a picture,
/// a value shown to copy, or the script the page runs.
public struct ChallengeElement: Sendable, Hashable {
    /// The JSON type of a fact the challenge tells the client (`detail`).
    public enum ValueType: String, Sendable, Hashable { case string, integer, boolean, object, array, any }

    package enum Part: Sendable, Hashable {
        case input(ChallengeInput)
        case action(ChallengeAction)
        case link(ChallengeLink)
        case detail(ChallengeDetail)
        case callback(ChallengeCallback)
        case image(ChallengeImage)
        case fact(ChallengeFact)
        case script(ChallengeScript)
    }

    package let part: Part

    // MARK: - Answer fields

    /// A free-text answer field (`<input type=text>`). `autocomplete` and `inputmode` are the HTML
    /// hints; `maxLength` the most bytes; `prefill` the challenge field whose value fills it (a
    /// suggested username); `elementID` the HTML id (`field-<name>` unless a page keeps an older one);
    /// `required` whether a page's form must have it (a field only some answers carry is not).
    public static func text(
        _ name: String, label: String, autocomplete: String? = nil, inputmode: String? = nil, maxLength: Int = 1024, prefill: String? = nil,
        elementID: String? = nil, required: Bool = true
    ) -> ChallengeElement {
        input(.text, name, label, autocomplete, inputmode, maxLength, prefill, elementID, required)
    }

    /// A secret answer field: never shown, never logged (`<input type=password>`).
    public static func secret(
        _ name: String, label: String, autocomplete: String? = nil, inputmode: String? = nil, maxLength: Int = 1024, elementID: String? = nil,
        required: Bool = true
    ) -> ChallengeElement {
        input(.secret, name, label, autocomplete, inputmode, maxLength, nil, elementID, required)
    }

    /// An email address (`<input type=email>`).
    public static func email(
        _ name: String, label: String, autocomplete: String? = nil, maxLength: Int = 1024, prefill: String? = nil, required: Bool = true
    ) -> ChallengeElement {
        input(.email, name, label, autocomplete, nil, maxLength, prefill, nil, required)
    }

    /// A one-time code or another number typed digit by digit (`inputmode=numeric`,
    /// `autocomplete=one-time-code` unless given).
    public static func code(_ name: String, label: String, autocomplete: String? = nil, maxLength: Int = 1024, required: Bool = true) -> ChallengeElement {
        input(.code, name, label, autocomplete, nil, maxLength, nil, nil, required)
    }

    /// A field set from the challenge itself, not typed (`<input type=hidden>`); `prefill` names the
    /// challenge field it takes.
    public static func hidden(_ name: String, label: String, maxLength: Int = 1024, prefill: String? = nil, required: Bool = true) -> ChallengeElement {
        input(.hidden, name, label, nil, nil, maxLength, prefill, nil, required)
    }

    /// Any JSON value (custom data relayed to an API); every other field is a JSON string. A page shows
    /// a text area and reads JSON.
    public static func json(_ name: String, label: String, maxLength: Int = 1024, required: Bool = true) -> ChallengeElement {
        input(.json, name, label, nil, nil, maxLength, nil, nil, required)
    }

    private static func input(
        _ kind: ChallengeInput.Kind, _ name: String, _ label: String, _ autocomplete: String?, _ inputmode: String?, _ maxLength: Int, _ prefill: String?,
        _ elementID: String?, _ required: Bool
    ) -> ChallengeElement {
        ChallengeElement(
            part: .input(
                ChallengeInput(
                    name: name, label: label, kind: kind, autocomplete: autocomplete, inputmode: inputmode, maxLength: maxLength, prefill: prefill,
                    elementID: elementID, required: required
                )
            )
        )
    }

    // MARK: - What a page shows besides the fields

    /// An extra button: it answers with `name` = `value` instead of the form (the flow API sends `true`).
    public static func action(_ name: String, value: String = "true", label: String) -> ChallengeElement {
        ChallengeElement(part: .action(ChallengeAction(name: name, value: value, label: label)))
    }

    /// A link the person follows to go on elsewhere: the challenge's string field holding an `https` (or
    /// loopback `http`) URL, and the link's text.
    public static func link(urlField: String, label: String) -> ChallengeElement {
        ChallengeElement(part: .link(ChallengeLink(urlField: urlField, label: label)))
    }

    /// The challenge is answered elsewhere (an upstream sign-in page): its string field `urlField`
    /// holds the URL a browser is sent to (a native app opens it in the system browser); that page sends
    /// the browser back to `PluginEnvironment.callbackURL` with the flow's id as `stateParameter`
    /// (`state`, or SAML's `RelayState`) and the answer as the other parameters, of which the broker
    /// keeps the declared fields. With `formField` (an object field `{"action": URL, "fields":
    /// {name: string}}`), a browser flow posts those fields to `action` instead of going to the URL (SAML's HTTP-POST binding), on a page that
    /// submits itself. A callback counts only with at least one of `answerFields`; one callback per
    /// challenge.
    public static func callback(urlField: String, answerFields: [String], stateParameter: String = "state", formField: String? = nil) -> ChallengeElement {
        ChallengeElement(part: .callback(ChallengeCallback(urlField: urlField, answerFields: answerFields, stateParameter: stateParameter, formField: formField)))
    }

    /// A fact the challenge tells the client in its fields (`sentTo`, `codeExpiresAt`...), of a JSON
    /// type, for the API reference.
    public static func detail(_ name: String, _ type: ValueType, _ summary: String) -> ChallengeElement {
        ChallengeElement(part: .detail(ChallengeDetail(name, type, summary)))
    }

    /// A picture the page shows above the form (a QR code): the challenge field holding a
    /// `data:image/svg+xml` or `data:image/png` base64 URL (`svgDataURL(_:)`), and its text alternative.
    public static func image(field: String, alt: String) -> ChallengeElement {
        ChallengeElement(part: .image(ChallengeImage(field: field, alt: alt)))
    }

    /// A value the page shows as it is, to copy or keep (a key, recovery codes): the challenge field and its label.
    public static func fact(field: String, label: String) -> ChallengeElement {
        ChallengeElement(part: .fact(ChallengeFact(field: field, label: label)))
    }

    /// The script the page runs (a WebAuthn ceremony), served as a static file under the page's strict
    /// Content-Security-Policy; `data` names the challenge fields it reads.
    public static func script(source: String, data: [String]) -> ChallengeElement {
        ChallengeElement(part: .script(ChallengeScript(source: source, data: data)))
    }

    /// An SVG drawing as the `data:` URL an `image` field holds.
    public static func svgDataURL(_ svg: String) -> String { ChallengeImage.svgDataURL(svg) }
}

extension [ChallengeElement] {
    /// The answer fields among the elements (an operation's or an endpoint's fields).
    package var answerFields: [ChallengeInput] {
        compactMap { if case .input(let input) = $0.part { input } else { nil } }
    }
}
