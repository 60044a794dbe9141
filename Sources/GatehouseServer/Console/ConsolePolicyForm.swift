import Foundation
import GatehouseCore

/// The policy form: every key of `Policy`, read from the policy's own JSON (so a key added to
/// `Policy` appears here without a change), grouped into fieldsets, and a fieldset for the settings
/// of each plugin instance the app uses, drawn from the fields the plugin declares. The form posts
/// one value per key under its path (`policy.lockout.failureWindow`, `policy.plugins.pin.minLength`);
/// `patch(from:)` turns the post back into the policy's JSON, which the admin service checks with
/// the same decoder as the config file and the admin API, so errors come back with the same paths,
/// messages and codes.
struct ConsolePolicyForm {
    /// The provider instances that can sign people in, and the authenticators.
    let identityProviders: [String]
    let authenticators: [String]
    /// The plugins' settings: what each instance the app uses declares.
    let settings: PolicySettingsBook

    /// Keys a policy may leave out (nil), shown empty so that they can be set.
    static let optionalKeys = ["secondFactor", "logout.backchannelLogoutURI", "webhook.url"]

    /// The order of the top-level keys: what admins change most first. Keys not named here follow.
    static let signInKeys = [
        "identityProviders", "authenticators", "secondFactor", "statelessAuthentication", "selfRegistration", "confirmProfile", "consentRequired",
        "provisionedOnly", "linkAccountsByVerifiedEmail", "clientCredentialsGrant", "deviceAuthorizationGrant",
    ]
    static let tokenKeys = [
        "accessTokenLifetime", "refreshTokenLifetime", "refreshReuseGrace", "flowLifetime", "renewalWindow", "defaultScopes", "allowedScopes", "idTokenSigningAlg",
        "introspectTokensOf", "dpop", "dpopNonce", "deviceCodeLifetime", "devicePollingInterval",
    ]

    /// The policy's keys with their current values (optional ones present, empty); under `plugins`,
    /// the settings of each instance the app uses, defaults filled and declared fields present.
    func values(of policy: Policy) -> [String: JSONValue] {
        let encoder = JSONEncoder()
        guard let data = try? encoder.encode(settings.normalized(policy)), case .object(var object)? = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            return [:]
        }
        var plugins: [String: JSONValue] = [:]
        for (instance, fields, values) in settings.effectiveSettings(of: policy) {
            var values = values
            for field in fields where values[field.name] == nil { values[field.name] = .string("") }
            plugins[instance] = .object(values)
        }
        object["plugins"] = .object(plugins)
        for path in Self.optionalKeys {
            let parts = path.split(separator: ".").map(String.init)
            if parts.count == 1 {
                if object[parts[0]] == nil { object[parts[0]] = .string("") }
            } else if case .object(var inner)? = object[parts[0]] {
                if inner[parts[1]] == nil { inner[parts[1]] = .string("") }
                object[parts[0]] = .object(inner)
            }
        }
        return object
    }

    /// The fieldsets, filled with `values` (the stored policy, or what was just posted), each field
    /// showing its error from `errors` (keyed by field name).
    func sections(values: [String: JSONValue], errors: [String: String]) -> [[String: Any]] {
        var signIn: [[String: Any]] = []
        var tokens: [[String: Any]] = []
        var nested: [[String: Any]] = []
        let ordered = Self.signInKeys + Self.tokenKeys + values.keys.sorted().filter { !Self.signInKeys.contains($0) && !Self.tokenKeys.contains($0) }
        var other: [[String: Any]] = []
        for key in ordered {
            guard let value = values[key] else { continue }
            if key == "plugins" {
                nested += pluginSections(value.objectValue ?? [:], errors: errors)
            } else if case .object(let inner) = value {
                let fields = inner.keys.sorted().map { field(path: "\(key).\($0)", key: $0, value: inner[$0]!, errors: errors) }
                nested.append(["id": ConsoleField.elementID("policy.\(key)"), "legend": ConsoleField.label(forKey: key), "fields": fields])
            } else if Self.signInKeys.contains(key) {
                signIn.append(field(path: key, key: key, value: value, errors: errors))
            } else if Self.tokenKeys.contains(key) {
                tokens.append(field(path: key, key: key, value: value, errors: errors))
            } else {
                other.append(field(path: key, key: key, value: value, errors: errors))
            }
        }
        var sections: [[String: Any]] = [
            ["id": "policy-sign-in", "legend": "Sign-in", "fields": signIn], ["id": "policy-tokens", "legend": "Tokens and scopes", "fields": tokens],
        ]
        if !other.isEmpty { sections.append(["id": "policy-other", "legend": "Other", "fields": other]) }
        return sections + nested
    }

    private func field(path: String, key: String, value: JSONValue, errors: [String: String]) -> [String: Any] {
        let name = "policy.\(path)"
        let label = ConsoleField.label(forKey: key)
        let error = errors[name]
        switch (path, value) {
        case ("identityProviders", _), ("authenticators", _):
            let options = path == "identityProviders" ? identityProviders : authenticators
            let checked = Set(value.arrayValue?.compactMap(\.stringValue) ?? [])
            // A stored id no longer configured still shows, so that saving does not drop it silently.
            return ConsoleField.choices(name, label: label, options: options + checked.subtracting(options).sorted(), checked: checked, error: error)
        case ("secondFactor", _):
            return ConsoleField.select(
                name, label: label, options: [("", "None")] + authenticators.map { ($0, $0) }, selected: value.stringValue ?? "",
                hint: "It must also be one of the authenticators above.", error: error
            )
        case ("dpop", _): return choice(name, label, DPoPMode.allCases.map(\.rawValue), value, error)
        case ("idTokenSigningAlg", _): return choice(name, label, SigningAlgorithm.allCases.map(\.rawValue), value, error)
        case ("requestObjectKeys", _):
            // JWKs are objects: one JSON object per line, not split at commas.
            let lines = (value.arrayValue ?? []).map { String(decoding: $0.serialized(), as: UTF8.self) }
            return ConsoleField.textarea(name, label: label, lines: lines, hint: "One public JWK (JSON) per line.", error: error)
        case (_, .bool(let flag)):
            return ConsoleField.checkbox(name, label: label, checked: flag, error: error)
        case (_, .array(let items)):
            return ConsoleField.textarea(name, label: label, lines: items.map { ConsolePages.text($0) }, error: error)
        case (_, .number(let number)):
            let isDuration = ["Lifetime", "Duration", "Window", "lifetime", "Grace"].contains { key.contains($0) }
            return ConsoleField.text(
                name, label: label, value: Int(exactly: number).map(String.init) ?? String(number),
                hint: isDuration ? "Seconds, or with a unit: 90s, 15m, 1h, 30d." : nil, error: error
            )
        default:
            return ConsoleField.text(
                name, label: label, value: value.stringValue ?? "", hint: Self.optionalKeys.contains(path) ? "Leave empty for none." : nil, error: error)
        }
    }

    /// One fieldset per plugin instance, its declared fields first (with their labels, choices and
    /// hints), then any other key of its settings by its JSON type.
    private func pluginSections(_ plugins: [String: JSONValue], errors: [String: String]) -> [[String: Any]] {
        plugins.keys.sorted().map { instance in
            let values = plugins[instance]?.objectValue ?? [:]
            let declared = settings.fields(of: instance)
            let names = declared.map(\.name).filter { values[$0] != nil } + values.keys.sorted().filter { key in !declared.contains { $0.name == key } }
            let fields = names.map { key -> [String: Any] in
                let path = "plugins.\(instance).\(key)"
                let value = values[key]!
                guard let field = declared.first(where: { $0.name == key }) else { return self.field(path: path, key: key, value: value, errors: errors) }
                let name = "policy.\(path)"
                if !field.choices.isEmpty {
                    let current = value.stringValue ?? ""
                    let options = field.choices.contains(current) ? field.choices : [current] + field.choices
                    return ConsoleField.select(name, label: field.label, options: options.map { ($0, $0) }, selected: current, hint: field.hint, error: errors[name])
                }
                if case .bool(let flag) = value { return ConsoleField.checkbox(name, label: field.label, checked: flag, error: errors[name]) }
                return ConsoleField.text(name, label: field.label, value: value.stringValue ?? ConsolePages.text(value), hint: field.hint, error: errors[name])
            }
            return ["id": ConsoleField.elementID("policy.plugins.\(instance)"), "legend": "Settings of \(instance)", "fields": fields]
        }
    }

    private func choice(_ name: String, _ label: String, _ options: [String], _ value: JSONValue, _ error: String?) -> [String: Any] {
        let current = value.stringValue ?? ""
        return ConsoleField.select(
            name, label: label, options: (options.contains(current) ? options : [current] + options).map { ($0, $0) }, selected: current, error: error)
    }

    /// The posted form as the policy's JSON, shaped like `template` (the stored policy's values):
    /// checkboxes absent are false, lists are split at lines (and commas), empty optional keys are
    /// null, and a number that does not read as one is passed on as text (a duration such as `15m`
    /// is valid; anything else gets the decoder's error for that key).
    func patch(from form: [String: String], template: [String: JSONValue]) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for (key, value) in template {
            if key == "plugins" {
                var plugins: [String: JSONValue] = [:]
                for (instance, settings) in value.objectValue ?? [:] {
                    var object: [String: JSONValue] = [:]
                    for (field, current) in settings.objectValue ?? [:] {
                        let posted = posted(path: "plugins.\(instance).\(field)", like: current, form: form)
                        // An emptied text field is unset: the plugin's default.
                        object[field] = posted == .string("") ? .null : posted
                    }
                    plugins[instance] = .object(object)
                }
                result[key] = .object(plugins)
            } else if case .object(let inner) = value {
                var object: [String: JSONValue] = [:]
                for (innerKey, innerValue) in inner { object[innerKey] = posted(path: "\(key).\(innerKey)", like: innerValue, form: form) }
                result[key] = .object(object)
            } else {
                result[key] = posted(path: key, like: value, form: form)
            }
        }
        return result
    }

    private func posted(path: String, like value: JSONValue, form: [String: String]) -> JSONValue {
        let name = "policy.\(path)"
        if path == "identityProviders" || path == "authenticators" {
            let known = (path == "identityProviders" ? identityProviders : authenticators) + (value.arrayValue?.compactMap(\.stringValue) ?? [])
            return .array(known.uniqued().filter { form["\(name).\($0)"] == "on" }.map(JSONValue.string))
        }
        let text = (form[name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if path == "requestObjectKeys" {
            // A line that is not JSON goes on as text, for the policy's own check to name.
            return .array(
                text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { line in
                    (try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))) ?? .string(line)
                })
        }
        switch value {
        case .bool: return .bool(form[name] == "on")
        case .array:
            return .array(
                text.split(whereSeparator: { $0.isNewline || $0 == "," }).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map(JSONValue.string))
        case .number: return Int(text).map { .number(Double($0)) } ?? .string(text)
        default: return text.isEmpty && Self.optionalKeys.contains(path) ? .null : .string(text)
        }
    }
}
