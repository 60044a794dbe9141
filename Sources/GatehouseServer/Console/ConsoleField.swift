/// The template values of one console form field. Every key the `field` template reads is always
/// present (false when unused): Mustache would otherwise find a same-named value of an outer
/// context, such as another field's error.
enum ConsoleField {
    typealias Values = [String: Any]

    static func text(_ name: String, label: String, value: String, hint: String? = nil, error: String? = nil, required: Bool = false, type: String = "text") -> Values {
        base(name, label: label, hint: hint, error: error).merging(["control": true, "text": true, "value": value, "required": required, "inputType": type]) { _, new in
            new
        }
    }

    /// A value the form carries back unchanged (not shown).
    static func hidden(_ name: String, value: String) -> Values {
        base(name, label: "", hint: nil, error: nil).merging(["hidden": true, "value": value]) { _, new in new }
    }

    static func textarea(_ name: String, label: String, lines: [String], hint: String? = "One per line.", error: String? = nil, rows: Int = 3) -> Values {
        base(name, label: label, hint: hint, error: error)
            .merging(["control": true, "textarea": true, "value": lines.joined(separator: "\n"), "rows": max(rows, min(lines.count + 1, 8))]) { _, new in new }
    }

    static func checkbox(_ name: String, label: String, checked: Bool, hint: String? = nil, error: String? = nil) -> Values {
        base(name, label: label, hint: hint, error: error).merging(["checkbox": true, "checked": checked]) { _, new in new }
    }

    static func select(_ name: String, label: String, options: [(value: String, label: String)], selected: String, hint: String? = nil, error: String? = nil) -> Values {
        base(name, label: label, hint: hint, error: error).merging([
            "control": true, "select": true,
            "options": options.map { ["value": $0.value, "label": $0.label, "selected": $0.value == selected] as Values },
        ]) { _, new in new }
    }

    /// A group of checkboxes, one per option, each posted as `<name>.<option>` = `on`.
    static func choices(_ name: String, label: String, options: [String], checked: Set<String>, hint: String? = nil, error: String? = nil) -> Values {
        base(name, label: label, hint: hint, error: error).merging([
            "choices": true,
            "options": options.map { option in
                ["id": elementID("\(name).\(option)"), "name": "\(name).\(option)", "label": option, "checked": checked.contains(option)] as Values
            },
        ]) { _, new in new }
    }

    private static func base(_ name: String, label: String, hint: String?, error: String?) -> Values {
        [
            "id": elementID(name), "name": name, "label": label, "hint": hint ?? false, "error": error ?? false,
            "checkbox": false, "choices": false, "control": false, "hidden": false, "disabled": false, "text": false, "textarea": false, "select": false,
            "checked": false, "required": false, "value": "", "options": [Values](), "rows": 3, "inputType": "text",
        ]
    }

    /// An HTML id from a field name: `policy.lockout.failureWindow` → `f-policy-lockout-failureWindow`.
    static func elementID(_ name: String) -> String {
        "f-" + String(name.map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }

    /// `maxFailedAttemptsPerIP` → `Max failed attempts per IP`.
    static func label(forKey key: String) -> String {
        if let special = specialLabels[key] { return special }
        var words: [String] = []
        var current = ""
        let characters = Array(key)
        for (index, character) in characters.enumerated() {
            let previous = index > 0 ? characters[index - 1] : nil
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            if character.isUppercase, let previous, previous.isLowercase || (previous.isUppercase && next?.isLowercase == true) {
                words.append(current)
                current = ""
            }
            current.append(character)
        }
        words.append(current)
        let text = words.enumerated().map { index, word in
            word.count > 1 && word == word.uppercased() ? word : (index == 0 ? word.prefix(1).uppercased() + word.dropFirst() : word.lowercased())
        }.joined(separator: " ")
        return text
    }

    static let specialLabels: [String: String] = [
        "dpop": "DPoP (RFC 9449)", "dpopNonce": "DPoP proofs must carry a broker nonce", "idTokenSigningAlg": "ID token signing algorithm",
        "introspectTokensOf": "May introspect tokens of (app ids, * for every app)", "statelessAuthentication": "Stateless authentication",
        "backchannelLogoutURI": "Back-channel logout URI", "postLogoutRedirectURIs": "Post-logout redirect URIs", "redirectURIs": "Redirect URIs",
        "secondFactor": "Second factor every sign-in must pass", "selfRegistration": "Self-registration (people may create accounts)",
        "provisionedOnly": "Only accounts a SCIM client provisioned sign in",
        "maxFailedAttemptsPerIP": "Max failed attempts per IP address", "maxFailedAuthenticationsPerIP": "Max failed client authentications per IP address",
        "maxFailedAuthenticationsPerClient": "Max failed client authentications per client",
        "displayName": "Name people see (empty: the app's name)", "logo": "Logo (an https image URL, or a data:image URL up to 64 KB)",
        "primaryColor": "Colour of buttons and links (#rrggbb, dark enough for white text)", "supportURL": "Help link (https or mailto:)",
        "privacyURL": "Privacy notice link", "defaultLanguage": "Default language (en, de, fr, es or nl; the person's own comes first)",
        "maxFlowStartsPerIPPerMinute": "Max flow starts per IP address per minute",
    ]
}
