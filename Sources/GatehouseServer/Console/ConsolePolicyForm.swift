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
    static let optionalKeys = [
        "secondFactor", "logout.backchannelLogoutURI", "webhook.url", "branding.displayName", "branding.logo", "branding.primaryColor", "branding.supportURL",
        "branding.privacyURL", "branding.defaultLanguage",
    ]

    /// The policy's sections, in page order, with their top-level keys: what admins change most
    /// first. A key no section names goes to "Advanced", so a key added to `Policy` still appears.
    static let sectionKeys: [(id: String, legend: String, keys: [String])] = [
        (
            "policy-sign-in", "Sign-in",
            [
                "identityProviders", "statelessAuthentication", "selfRegistration", "passwordPolicy", "confirmProfile", "consentRequired", "provisionedOnly",
                "linkAccountsByVerifiedEmail",
            ]
        ),
        ("policy-second-factor", "Second factor", ["authenticators", "secondFactor"]),
        (
            "policy-tokens", "Tokens and lifetimes",
            ["accessTokenLifetime", "refreshTokenLifetime", "session", "flowLifetime", "defaultScopes", "allowedScopes", "idTokenSigningAlg", "logout"]
        ),
        ("policy-devices", "Devices", ["deviceAuthorizationGrant", "deviceCodeLifetime", "devicePollingInterval", "dpop", "dpopNonce", "renewalWindow"]),
        ("policy-branding", "Branding (the sign-in pages)", ["branding"]),
    ]

    /// Keys whose numbers are durations: shown with a unit (`30d`), read with or without one.
    static let durationWords = ["Lifetime", "lifetime", "Duration", "Window", "Grace", "Interval"]

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
    /// showing its error from `errors` (keyed by field name): the named sections, then "Advanced"
    /// (folded away unless a field in it has an error), then one per plugin instance the app uses.
    /// `statelessUnavailable`: why the stateless switch cannot be turned on, when it cannot.
    func sections(values: [String: JSONValue], errors: [String: String], statelessUnavailable: String? = nil) -> [[String: Any]] {
        var sections: [[String: Any]] = []
        var placed: Set<String> = ["plugins"]
        for (id, legend, keys) in Self.sectionKeys {
            let fields = keys.compactMap { key -> [[String: Any]]? in
                guard let value = values[key] else { return nil }
                placed.insert(key)
                return fieldsOf(key: key, value: value, errors: errors, statelessUnavailable: statelessUnavailable)
            }.flatMap { $0 }
            sections.append(["id": id, "legend": legend, "fields": fields, "folded": false])
        }
        let advanced = values.keys.sorted().filter { !placed.contains($0) }.flatMap { key in
            fieldsOf(key: key, value: values[key]!, errors: errors, statelessUnavailable: nil)
        }
        if !advanced.isEmpty {
            let hasError = advanced.contains { ($0["error"] as? String) != nil }
            sections.append(["id": "policy-advanced", "legend": "Advanced", "fields": advanced, "folded": !hasError])
        }
        return sections + pluginSections(values["plugins"]?.objectValue ?? [:], errors: errors).map { $0.merging(["folded": false]) { _, new in new } }
    }

    /// The fields of one top-level key: one field, or for an object (`lockout`, `session`) one per inner
    /// key, labelled with the object's name.
    private func fieldsOf(key: String, value: JSONValue, errors: [String: String], statelessUnavailable: String?) -> [[String: Any]] {
        if case .object(let inner) = value {
            return inner.keys.sorted().map { innerKey in
                var made = field(path: "\(key).\(innerKey)", key: innerKey, value: inner[innerKey]!, errors: errors)
                made["label"] = "\(ConsoleField.label(forKey: key)): \((made["label"] as? String ?? "").lowercasedFirst)"
                return made
            }
        }
        var made = field(path: key, key: key, value: value, errors: errors)
        if key == "statelessAuthentication", let statelessUnavailable, value != .bool(true) {
            made["disabled"] = true
            made["hint"] = statelessUnavailable
        }
        return [made]
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
            let isDuration = Self.durationWords.contains { key.contains($0) }
            let text = Int(exactly: number).map { isDuration ? Self.duration($0) : String($0) } ?? String(number)
            return ConsoleField.text(name, label: label, value: text, hint: isDuration ? "With a unit: 90s, 15m, 1h, 30d." : nil, error: error)
        case (_, .string(let text)) where Self.durationWords.contains { key.contains($0) }:
            // What was posted comes back as typed (a refused "forever" included).
            return ConsoleField.text(name, label: label, value: text, hint: "With a unit: 90s, 15m, 1h, 30d.", error: error)
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

    /// The form as the page posts it for `values`: what a Save without any edit would send. A draft
    /// keeps only what differs from it.
    func postedForm(values: [String: JSONValue]) -> [String: String] {
        var form: [String: String] = [:]
        for section in sections(values: values, errors: [:]) {
            for field in section["fields"] as? [[String: Any]] ?? [] {
                guard let name = field["name"] as? String else { continue }
                if field["checkbox"] as? Bool == true {
                    if field["checked"] as? Bool == true { form[name] = "on" }
                } else if field["choices"] as? Bool == true {
                    for option in field["options"] as? [[String: Any]] ?? [] where option["checked"] as? Bool == true {
                        if let optionName = option["name"] as? String { form[optionName] = "on" }
                    }
                } else if field["select"] as? Bool == true {
                    let selected = (field["options"] as? [[String: Any]] ?? []).first { $0["selected"] as? Bool == true }
                    form[name] = selected?["value"] as? String ?? ""
                } else {
                    form[name] = field["value"] as? String ?? ""
                }
            }
        }
        return form
    }

    /// What `form` changes against `stored` (a form as `postedForm` makes it): changed values, and an
    /// empty value for a box unticked.
    static func changes(_ form: [String: String], against stored: [String: String]) -> [String: String] {
        // Browsers send a textarea's lines with CRLF.
        func normalized(_ text: String?) -> String? {
            text.map { $0.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        var changes = form.filter { normalized(stored[$0.key]) != normalized($0.value) && $0.key != "csrf" }
        for (name, _) in stored where form[name] == nil { changes[name] = "" }
        return changes
    }

    /// Seconds in the largest unit that divides them: `2592000` → `30d`, `900` → `15m`, `90` → `90s`.
    static func duration(_ seconds: Int) -> String {
        for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60)] where seconds >= size && seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }
}

extension String {
    /// `Max failures` → `max failures`, but `IP` stays `IP`.
    var lowercasedFirst: String {
        guard let first, count < 2 || !self[index(after: startIndex)].isUppercase else { return self }
        return first.lowercased() + dropFirst()
    }
}
