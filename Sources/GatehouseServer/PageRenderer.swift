import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import Mustache

/// Renders the browser pages and gives them the headers every page carries: no caching, a strict
/// Content-Security-Policy (no script but a challenge's declared script file; images only from
/// `data:` URLs), no framing.
struct PageRenderer: Sendable {
    let library: MustacheLibrary
    let issuer: String
    /// How each challenge type looks; any declared challenge renders with the one `challenge` page.
    let challenges: ChallengeCatalog
    /// What the chooser calls each provider (`providers[].name`).
    let providerNames: [String: String]
    /// The plugin templates that did not parse.
    let brokenTemplates: [String]
    /// Every text in every language: the pages', the broker's and the plugins'.
    let catalog: MessageCatalog

    /// `pluginTemplates`: the plugins' page templates, by `<instance>/<name>` (a plugin's own names
    /// cannot clash with the broker's, which have no slash).
    /// The built-in pages, by the names a theme replaces them under.
    static let builtInTemplates: [(name: String, text: String)] = [
        ("layout", PageTemplates.layout), ("challenge", PageTemplates.challenge),
        ("chooser", PageTemplates.chooser), ("error", PageTemplates.error),
        ("logoutConfirm", PageTemplates.logoutConfirm), ("signedOut", PageTemplates.signedOut), ("signInLinks", PageTemplates.signInLinks),
        ("deviceCode", PageTemplates.deviceCode), ("deviceResult", PageTemplates.deviceResult), ("autoPost", PageTemplates.autoPost),
    ]

    /// The operator's theme (`server.themeDir`), checked at start.
    let theme: PageTheme

    init(
        issuer: String, challenges: ChallengeCatalog, providerNames: [String: String] = [:], pluginTemplates: [String: String] = [:], theme: PageTheme = PageTheme()
    ) {
        self.providerNames = providerNames
        self.theme = theme
        var library = MustacheLibrary()
        for (name, text) in Self.builtInTemplates {
            // Built-in templates are constants of this module, and a theme's were parsed when it
            // was loaded: a parse error here is a programming error.
            try! library.register(theme.templates[name] ?? text, named: name)
        }
        var broken: [String] = []
        for (name, text) in pluginTemplates.sorted(by: { $0.key < $1.key }) {
            // A plugin template that does not parse is left out: its page answers an internal
            // failure (tests hold every built-in plugin's templates to parse).
            do { try library.register(text, named: name) } catch { broken.append(name) }
        }
        self.brokenTemplates = broken
        self.library = library
        self.issuer = issuer
        self.challenges = challenges
        self.catalog = MessageCatalog(plugins: challenges.translations)
    }

    /// `script`: the URL of the one script file the page may run (a challenge's declared script).
    /// `brand`: the app's branding (its logo, colour and links), when the page is one of an app's.
    func page(
        _ template: String, title: String, values: [String: Any], status: HTTPResponse.Status = .ok, script: String? = nil, brand: BrandingPolicy? = nil,
        language: String = "en"
    ) -> Response {
        let texts = PageTexts.values(language: language)
        var values = values
        values["t"] = texts
        let content = library.render(values, withTemplate: template) ?? ""
        var layout: [String: Any] = [
            "title": title, "content": content, "brand": false, "themeCSS": theme.stylesheet ?? false, "t": texts,
            // The tab's name: the app's, when the page is one of an app's.
            "siteName": brand?.displayName ?? "Gatehouse",
        ]
        if let brand {
            layout["brand"] =
                [
                    "logo": brand.logo ?? false, "name": brand.displayName ?? "", "color": brand.primaryColor ?? false,
                    "supportURL": brand.supportURL ?? false, "privacyURL": brand.privacyURL ?? false,
                    "hasLinks": brand.supportURL != nil || brand.privacyURL != nil,
                ] as [String: Any]
        }
        let html = library.render(layout, withTemplate: "layout") ?? ""
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        let scripts = script.map { "; script-src \($0)" } ?? ""
        // A branded page may load its logo from the logo's own origin, and nothing else.
        let images = brand?.logoOrigin.map { " \($0)" } ?? ""
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:\(images)\(scripts); frame-ancestors 'none'; base-uri 'none'"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// Where the script of `autoPost` pages is served.
    static let autoPostScriptPath = "/assets/auto-post.js"
    /// The field that tells the callback a form post came from the broker's own page (`autoPost`).
    static let repostMarker = "gatehouse_repost"

    /// A page that posts `fields` to `url` at once: its one script (`autoPostScriptPath`) submits the
    /// form; without script, the person presses Continue. The fields travel in the body only.
    func autoPost(to url: String, fields: [(name: String, value: String)], title: String, language: String = "en") -> Response {
        page(
            "autoPost", title: catalog.text(title, in: language),
            values: ["action": url, "fields": fields.map { ["name": $0.name, "value": $0.value] }, "script": issuer + Self.autoPostScriptPath],
            script: issuer + Self.autoPostScriptPath, language: language
        )
    }

    /// The language a flow's challenge says it is in (chosen when the flow started), if any.
    static func language(of outcome: FlowOutcome) -> String? {
        guard case .challenge(_, let challenge, _) = outcome, let chosen = challenge.fields[Challenge.languageField]?.stringValue,
            TextTranslations.languages.contains(chosen)
        else { return nil }
        return chosen
    }

    /// Where a challenge type's declared script is served.
    func scriptURL(of type: String) -> String { issuer + "/assets/challenges/\(type).js" }

    /// The error page, in `language`: the refusal's message, else what its kind of failure means.
    func error(_ error: BrokerError, requestID: String?, language: String = "en") -> Response {
        page(
            "error", title: catalog.text("Sign-in is not possible", in: language),
            values: ["description": catalog.text(of: error, in: language), "code": error.code.rawValue, "requestID": requestID ?? false],
            status: HTTPResponse.Status(code: error.httpStatus), language: language
        )
    }

    /// The page for a challenge, a provider choice, or the redirect back to the app.
    /// `typed`: what the person posted with a refused answer, for the page to fill in again (never a
    /// secret input).
    func render(
        _ outcome: FlowOutcome, app: App?, csrf: String, error: String? = nil, typed: [String: String] = [:], status: HTTPResponse.Status = .ok, requestID: String?,
        language: String = "en"
    ) -> Response {
        // A flow's challenge says its language (chosen when the flow started); other pages use the browser's.
        let language = Self.language(of: outcome) ?? language
        let say = { (text: String) in catalog.text(text, in: language) }
        let appName: Any = app.map { $0.policy.branding.displayName ?? $0.name } ?? false
        let brand = app.map { app -> BrandingPolicy in
            var brand = app.policy.branding
            brand.displayName = brand.displayName ?? app.name
            return brand
        }
        switch outcome {
        case .authorized(_, let redirect, _):
            return Self.redirect(to: redirect)
        case .chooseProvider(let flowID, let providers, _, let registering):
            return page(
                "chooser", title: say(registering ? "Create your account" : "Sign in"),
                values: [
                    "appName": appName, "flow": flowID, "csrf": csrf, "action": issuer + "/oauth2/authorize/provider",
                    "legend": say(registering ? "Choose how to create your account" : "Choose how to sign in"),
                    "providers": providers.map {
                        ["id": $0, "label": say("Continue with {provider}").replacingOccurrences(of: "{provider}", with: providerNames[$0] ?? $0)]
                    },
                    "offersRegistration": !registering && (app?.policy.selfRegistration ?? false), "offersRecovery": false, "offersSignIn": registering,
                    "registerAction": issuer + "/oauth2/authorize/register", "signInAction": issuer + "/oauth2/authorize/sign-in",
                ], status: status, brand: brand, language: language
            )
        case .challenge(let flowID, let challenge, _):
            guard let description = challenges.description(of: challenge.type) else {
                return self.error(BrokerError.internalFailure("This step cannot be shown in a browser."), requestID: requestID, language: language)
            }
            // A sign-in elsewhere: the browser goes there at once (posting the declared form, if
            // any), and comes back at the callback.
            if let callback = description.callback {
                guard let url = challenge.fields[callback.urlField]?.stringValue, Self.isSafeLink(url) else {
                    return self.error(BrokerError.internalFailure("The sign-in page's address is not usable."), requestID: requestID, language: language)
                }
                if let formField = callback.formField, case .object(let form)? = challenge.fields[formField] {
                    guard let action = form["action"]?.stringValue, Self.isSafeLink(action), case .object(let values)? = form["fields"] else {
                        return self.error(BrokerError.internalFailure("The sign-in page's form is not usable."), requestID: requestID, language: language)
                    }
                    let fields = values.sorted { $0.key < $1.key }.compactMap { name, value in value.stringValue.map { (name: name, value: $0) } }
                    return autoPost(to: action, fields: fields, title: "Continue signing in", language: language)
                }
                return Self.redirect(to: url)
            }
            let registering = challenge.fields[Challenge.registrationPageField] == .bool(true)
            let rules = registering ? (challenge.fields["passwordRules"]?.arrayValue ?? []).compactMap(\.stringValue).map(say) : []
            var values: [String: Any] = [
                "appName": appName, "flow": flowID, "csrf": csrf, "action": issuer + "/oauth2/authorize/answer", "error": error ?? false,
                "prompt": prompt(of: description, for: challenge, language: language) ?? false,
                "submitLabel": say(registering && description.submitLabel == "Sign in" ? "Create account" : description.submitLabel),
                "actions": description.actions.map { ["name": $0.name, "value": $0.value, "label": say($0.label)] },
                "offersRegistration": challenge.fields[Challenge.offersRegistrationField] == .bool(true),
                "offersRecovery": challenge.fields[Challenge.offersRecoveryField] == .bool(true),
                "offersSignIn": challenge.fields[Challenge.offersSignInField] == .bool(true),
                "registerAction": issuer + "/oauth2/authorize/register", "recoverAction": issuer + "/oauth2/authorize/recover",
                "signInAction": issuer + "/oauth2/authorize/sign-in", "rules": rules, "hasRules": !rules.isEmpty,
                // A declared way out ("Deny") is the only one: a second, "Cancel", would mean the same.
                "cancellable": !description.actions.contains { $0.name == "deny" },
            ]
            values["inputs"] = Self.inputs(of: description, for: challenge, hasError: error != nil, typed: typed, registering: registering, hasRules: !rules.isEmpty)
            if let link = description.link, let url = challenge.fields[link.urlField]?.stringValue, Self.isSafeLink(url) {
                values["link"] = ["url": url, "text": say(link.label)]
            }
            if let image = description.image, let url = challenge.fields[image.field]?.stringValue, ChallengeImage.isUsable(url) {
                values["image"] = ["src": url, "alt": say(image.alt)]
            }
            values["facts"] = Self.facts(of: description, for: challenge).map { fact in
                var fact = fact
                fact["label"] = (fact["label"] as? String).map(say) ?? ""
                return fact
            }
            // A plugin's own title stays ("Create a passkey"); the generic sign-in one says what happens.
            let title = say(registering && description.title == "Sign in" ? "Create your account" : description.title)
            values["inputs"] = (values["inputs"] as? [[String: Any]] ?? []).map { input in
                var input = input
                input["label"] = (input["label"] as? String).map(say) ?? ""
                return input
            }
            guard let script = description.script else { return page("challenge", title: title, values: values, status: status, brand: brand, language: language) }
            // The script reads these fields as JSON from an attribute (escaped like every value).
            let data = JSONValue.object(challenge.fields.filter { script.data.contains($0.key) })
            values["script"] = ["src": scriptURL(of: challenge.type), "data": String(decoding: data.serialized(), as: UTF8.self)]
            return page("challenge", title: title, values: values, status: status, script: scriptURL(of: challenge.type), brand: brand, language: language)
        case .completed, .stopped:
            return self.error(BrokerError.internalFailure("This flow cannot finish in a browser."), requestID: requestID, language: language)
        }
    }

    /// The prompt in `language`: the declared one translated, then its `{field}` placeholders filled
    /// (a challenge's own prompt is the plugin's, as it is).
    func prompt(of description: ChallengeDescription, for challenge: Challenge, language: String) -> String? {
        Self.prompt(of: description, for: challenge, language: language, catalog: catalog)
    }

    /// The prompt in `language`: a challenge's own (the plugin's, translated when the catalog has it),
    /// else the declared one translated, then its `{field}` placeholders filled in one pass with the
    /// challenge's values as they are (data, which the plugin or the core wrote in the flow's language).
    static func prompt(of description: ChallengeDescription, for challenge: Challenge, language: String, catalog: MessageCatalog) -> String? {
        if let own = challenge.prompt { return catalog.text(own, in: language) }
        guard let text = description.prompt.map({ catalog.text($0, in: language) }) else { return nil }
        return TextTranslations.fill(text, challenge.fields.compactMapValues(\.stringValue))
    }

    /// The template values of a challenge's inputs. The first input that is not filled in already gets
    /// the focus; with an error, the first visible input points at it. What the person typed before
    /// an error comes back into name and address inputs (not codes or secrets); a new password (`registering`) says so to
    /// password managers, and points at the rules shown above it.
    static func inputs(
        of description: ChallengeDescription, for challenge: Challenge, hasError: Bool, typed: [String: String] = [:], registering: Bool = false,
        hasRules: Bool = false
    ) -> [[String: Any]] {
        var focused = false
        var described = false
        return description.inputs.map { input in
            let prefilled = input.prefill.flatMap { challenge.fields[$0]?.stringValue } ?? ""
            // A name or an address is worth keeping; a wrong code or secret is not.
            let retyped = input.kind == .text || input.kind == .email ? typed[input.name].map { String($0.prefix(input.maxLength)) } : nil
            let value = retyped ?? prefilled
            let visible = input.kind != .hidden
            // Mustache treats an empty string as true, so every choice below is a real Boolean.
            let autofocus = visible && value.isEmpty && !focused
            if autofocus { focused = true }
            let describedBy = visible && hasError && !described
            if describedBy { described = true }
            let newSecret = registering && input.kind == .secret
            return [
                "name": input.name, "id": input.elementID, "label": input.label, "type": input.kind.htmlType,
                "autocomplete": newSecret ? "new-password" : input.autocomplete, "inputmode": input.inputmode ?? false, "maxLength": input.maxLength,
                "value": value, "hasValue": !value.isEmpty, "hidden": input.kind == .hidden, "textarea": input.kind == .json,
                "field": visible && input.kind != .json, "plain": input.kind == .text || input.kind == .email || input.kind == .code, "autofocus": autofocus,
                "describedBy": describedBy, "describedByRules": newSecret && hasRules, "required": input.required,
            ]
        }
    }

    /// The template values of the values a challenge shows as they are: a string, or a list of strings.
    static func facts(of description: ChallengeDescription, for challenge: Challenge) -> [[String: Any]] {
        description.facts.compactMap { fact in
            switch challenge.fields[fact.field] {
            case .string(let value): ["label": fact.label, "value": value, "list": false]
            case .array(let items): ["label": fact.label, "value": false, "list": ["items": items.compactMap(\.stringValue)]]
            default: nil
            }
        }
    }

    /// A link-out goes to `https`, or to `http` on this machine (development); never `javascript:`.
    static func isSafeLink(_ text: String) -> Bool { LoopbackHost.allowsWebURL(text) }

    static func redirect(to location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }
}

extension HTTPField.Name {
    static var contentSecurityPolicy: Self { .init("Content-Security-Policy")! }
}
