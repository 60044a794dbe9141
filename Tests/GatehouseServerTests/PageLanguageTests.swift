import Foundation
import GatehouseCore
import GatehouseSupport
import GatehousePlugins
@testable import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import Testing

/// Every text a person sees comes from the catalogs, complete in every language; the language
/// follows `ui_locales`, then `Accept-Language`, then the app's default, and a flow keeps the one it
/// started in: its pages, the flow API's texts and its refusals.
extension GatehouseServerTests {
    /// A text shown through an attribute (a label, a title) comes from the catalog too (the visible
    /// text is checked below, with the account page's).
    @Test func pageTemplatesHoldNoAttributeTextOfTheirOwn() throws {
        for (name, text) in PageRenderer.builtInTemplates {
            for match in text.matches(of: #/(?:aria-label|title|alt|placeholder)="([^"{]+)"/#) {
                Issue.record("template \(name) has an attribute text of its own: \(match.1)")
            }
        }
    }

    /// The account page and the console layout it shares hold no text of their own either, and each
    /// `{{t.id}}` a template names exists.
    @Test func theAccountPageHoldsNoTextOfItsOwnAndNamesOnlyKnownTexts() {
        for (name, text, ids) in [
            ("account", AccountTemplates.account, Set(AccountTexts.english.keys)), ("enrol", AccountTemplates.enrol, Set(AccountTexts.english.keys)),
            ("console layout", ConsoleTemplates.layout, Set(AccountTexts.english.keys)),
        ] + PageRenderer.builtInTemplates.map { ($0.name, $0.text, Set(PageTexts.english.keys)) } {
            var visible = text.replacingOccurrences(of: #"<style>[\s\S]*?</style>"#, with: "", options: .regularExpression)
            visible = visible.replacingOccurrences(of: #"\{\{[^}]*\}\}\}?"#, with: "", options: .regularExpression)
            visible = visible.replacingOccurrences(of: #"<[^>]*>"#, with: "", options: .regularExpression)
            visible = visible.replacingOccurrences(of: #"&[a-z]+;"#, with: "", options: .regularExpression)
            #expect(!visible.contains { $0.isLetter }, "template \(name) shows its own text: \(visible.filter { !$0.isWhitespace }.prefix(80))")
            for match in text.matches(of: #/\{\{t\.([A-Za-z]+)\}\}/#) where !["language", "direction"].contains(String(match.1)) {
                #expect(ids.contains(String(match.1)), "template \(name) names an unknown text t.\(match.1)")
            }
        }
        for (id, english) in AccountTexts.english {
            for language in TextTranslations.languages where language != "en" {
                #expect(AccountTexts.has(english, in: language), "account text \(id) ('\(english)') has no \(language) text")
            }
        }
        for notice in AccountPages.Notice.allCases {
            for language in TextTranslations.languages where language != "en" {
                #expect(AccountTexts.has(notice.text, in: language), "the notice '\(notice.text)' has no \(language) text")
            }
        }
    }

    /// The account page speaks the person's language; the admin console stays English.
    @Test func theAccountPageSpeaksThePersonsLanguageAndTheConsoleEnglish() async throws {
        let router = Router(context: GatehouseRequestContext.self)
        router.get("account/:language") { _, context in
            ConsoleRenderer(site: .account).page(
                "account", title: "Ihr Konto", values: ["username": "erin", "devices": [Any](), "sessions": [Any](), "consents": [Any]()], session: nil,
                language: try context.parameters.require("language"))
        }
        router.get("admin") { _, _ in ConsoleRenderer(site: .admin).page("message", title: "Apps", values: ["message": "x"], session: nil, language: "de") }
        try await Application(router: router).test(.router) { client in
            let german = String(buffer: try await client.execute(uri: "/account/de", method: .get).body)
            #expect(german.contains(#"<html lang="de" dir="ltr">"#))
            for english in ["Devices", "Where you are signed in", "Apps you allowed", "Skip to content", "Username"] {
                let translated = AccountTexts.text(of: english, in: "de")
                #expect(translated != english)
                #expect(german.contains(translated) && !german.contains(">\(english)<"), "\(english) is not German on the account page")
            }
            let admin = String(buffer: try await client.execute(uri: "/admin", method: .get).body)
            #expect(admin.contains(#"<html lang="en""#) && admin.contains("Skip to content"))
        }
    }

    @Test func everyPageTextIsTranslatedIntoEveryLanguage() {
        for (id, english) in PageTexts.english {
            for language in TextTranslations.languages where language != "en" {
                #expect(PageCatalog.texts[english]?[language] != nil, "\(id) ('\(english)') has no \(language) text")
            }
        }
    }

    /// Every text a built-in plugin's or the core's challenges show, every password rule and every
    /// kind of refusal has a text in every language: a new label without its translations fails here.
    @Test func everyTextAPersonSeesHasEveryLanguage() {
        let registry = BuiltInPlugins.registry
        let catalog = MessageCatalog(plugins: registry.challenges.translations)
        var texts: [(String, String)] = []
        for description in registry.challenges.all {
            let type = description.type
            texts += [(type, description.title), (type, description.submitLabel)]
            if let prompt = description.prompt { texts.append((type, prompt)) }
            texts += description.inputs.filter { $0.kind != .hidden }.map { (type, $0.label) }
            texts += description.actions.map { (type, $0.label) }
            if let link = description.link { texts.append((type, link.label)) }
            if let image = description.image { texts.append((type, image.alt)) }
            texts += description.facts.map { (type, $0.label) }
        }
        for policy in [PasswordPolicy(), PasswordPolicy(minLength: 6, maxLength: 12, numericOnly: true, maxSequence: 4, maxRepeated: 3)] {
            texts += policy.rules.map { ("password rules", $0) }
        }
        // Each PIN rule's refusal (made with the policy's numbers).
        var pinCodes: Set<ErrorCode> = []
        for pin in ["12a456", "12", String(repeating: "5", count: 40), "123487", "112227", "121212"] {
            do { try PINRules().check(pin) } catch {
                pinCodes.insert(error.code)
                texts.append(("pin rules", error.message))
                for language in TextTranslations.languages where language != "en" {
                    #expect(PINRules().refusal(error, in: language) != error.message, "\(error.code) in \(language)")
                }
            }
        }
        #expect(pinCodes.count == 6)
        let kinds: [BrokerError.Kind] = [
            .badRequest, .unauthenticated, .forbidden, .notFound, .contentTooLarge, .requestTimeout, .conflict, .failedAttempt, .tooManyRequests, .unavailable,
            .internalFailure,
        ]
        texts += kinds.map { ("refusal", CoreMessages.generic($0)) }
        for (owner, english) in texts {
            for language in TextTranslations.languages where language != "en" {
                #expect(catalog.has(english, in: language), "\(owner): '\(english)' has no \(language) text")
            }
        }
        #expect(texts.count > 150)
    }

    /// What the account page shows of each built-in plugin that keeps people's credentials (its
    /// list's heading and column headings, yes and no, its setup button) has a text in every language.
    @Test func theAccountPagesCredentialListsAndButtonsHaveEveryLanguage() async throws {
        let yaml = """
            providers:
              - id: local
                type: local
                config: {bcryptCost: 4}
              - id: app-code
                type: totp
              - id: passkeys
                type: webauthn
                config: {rpID: login.example.test, rpName: Example, origins: ["https://login.example.test"]}
            accountPage:
              authenticators: [app-code]
            """
        let test = try await TestBroker.make(yaml: yaml, registry: BuiltInPlugins.registry)
        defer { test.temporary.remove() }
        let catalog = MessageCatalog(plugins: test.broker.engine.challenges.translations, accountPage: true)
        var texts: [String] = []
        for offered in test.broker.admin.offeredResources() where offered.resource.accountField != nil {
            texts.append(offered.resource.summary)
            texts += offered.resource.columns.filter { $0 != offered.resource.accountField }.map(AccountPages.heading)
        }
        let enrolments = try await test.broker.engine.accountEnrolments()
        #expect(Set(enrolments.map(\.providerID)) == ["app-code", "passkeys"])
        texts += enrolments.map(\.label) + ["yes", "no"]
        #expect(texts.contains("Created at") && texts.contains("Add a passkey") && texts.count >= 12, "\(texts)")
        for text in texts {
            for language in TextTranslations.languages where language != "en" {
                #expect(catalog.has(text, in: language), "'\(text)' has no \(language) text on the account page")
            }
        }
    }

    /// Each translation keeps the placeholders of its English text, and names every language.
    @Test func everyTranslationKeepsItsPlaceholders() {
        let catalog = MessageCatalog(plugins: BuiltInPlugins.registry.challenges.translations)
        func placeholders(_ text: String) -> [String] { text.matches(of: #/\{+[A-Za-z]+\}+/#).map { String($0.0) }.sorted() }
        for (english, translations) in catalog.translations.texts {
            #expect(Set(translations.keys) == Set(TextTranslations.languages.dropFirst()), "'\(english)' names \(translations.keys.sorted())")
            for (language, text) in translations {
                #expect(placeholders(text) == placeholders(english), "'\(english)' in \(language): \(text)")
            }
        }
    }

    @Test func aMessageMadeAtRunTimeIsTranslatedWithItsValues() {
        let catalog = MessageCatalog(plugins: BuiltInPlugins.registry.challenges.translations)
        let short = catalog.text("Use at least 12 characters.", in: "de")
        #expect(short != "Use at least 12 characters." && short.contains("12") && !short.contains("{"))
        let lockout = BrokerError.lockedOut("This account", until: Date(timeIntervalSince1970: 600), now: Date(timeIntervalSince1970: 0))
        let told = catalog.text(of: lockout, in: "fr")
        #expect(told != lockout.message && told.contains("Ce compte"), "\(told)")
        // A message without a translation says what its kind of refusal means, not English.
        let odd = BrokerError(.invalidRequest, .badRequest, "Something only a developer reads.")
        #expect(catalog.text(of: odd, in: "nl") == catalog.text(CoreMessages.generic(.badRequest), in: "nl"))
        #expect(catalog.text(of: odd, in: "en") == odd.message)
    }

    @Test func aPagesLanguageFollowsUILocalesThenAcceptLanguageThenTheApp() {
        #expect(LanguageChoice.choose(uiLocales: "ja nl-BE", acceptLanguage: "de", appDefault: "fr") == "nl")
        #expect(LanguageChoice.choose(uiLocales: nil, acceptLanguage: "ja, es;q=0.8, de;q=0.9", appDefault: "fr") == "de")
        #expect(LanguageChoice.choose(uiLocales: "ja", acceptLanguage: "ja", appDefault: "fr-CA") == "fr")
        #expect(LanguageChoice.choose(uiLocales: nil, acceptLanguage: "de;q=0", appDefault: nil) == "en")
        #expect(LanguageChoice.preferred(uiLocales: "ja", acceptLanguage: "*") == nil)
    }

    /// A right-to-left language lays the page out right to left.
    @Test func aRightToLeftLanguageRendersRightToLeft() async throws {
        let renderer = PageRenderer(issuer: "https://id.example", challenges: ChallengeCatalog())
        let router = Router(context: GatehouseRequestContext.self)
        router.get("error/:language") { _, context in
            renderer.error(.invalidRequest("No."), requestID: nil, language: try context.parameters.require("language"))
        }
        try await Application(router: router).test(.router) { client in
            let page = String(buffer: try await client.execute(uri: "/error/ar", method: .get).body)
            #expect(page.contains(#"<html lang="ar" dir="rtl">"#))
            let german = String(buffer: try await client.execute(uri: "/error/de", method: .get).body)
            #expect(german.contains(#"<html lang="de" dir="ltr">"#) && german.contains("Anmeldung nicht möglich"))
        }
        // The layout uses logical sides only, so it mirrors with the direction.
        for side in ["margin-left", "margin-right", "padding-left", "padding-right", "text-align:left", "text-align:right", "float:"] {
            #expect(!PageTemplates.layout.contains(side), "the layout sets \(side)")
        }
    }

    /// The flow API: a flow speaks the language it started in (its `uiLocales`, else the device's
    /// `Accept-Language`), in its challenge texts and its refusals, whatever later requests send.
    @Test func aFlowSpeaksTheLanguageItStartedIn() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let provider = try #require(test.broker.plugins.passwordKeepers["local"])
        _ = try await provider.addUser(username: "alice", password: "correct horse battery", policy: PasswordPolicy())
        try await Self.application(test).test(.router) { client in
            let started = try Self.object(
                try await client.execute(
                    uri: "/v1/flows", method: .post, headers: [.acceptLanguage: "en"], body: Self.json(#"{"app":"demo","provider":"local","uiLocales":"de-AT en"}"#)))
            let challenge = try #require(started["challenge"]?.objectValue)
            #expect(challenge["language"] == "de")
            let texts = try #require(challenge["texts"]?.objectValue)
            #expect(texts["title"] == "Anmelden")
            #expect(texts["labels"]?.objectValue?["password"] == "Passwort")
            let refused = try await client.execute(
                uri: "/v1/flows/\(try #require(started["flow"]?.stringValue))", method: .post, headers: [.acceptLanguage: "fr"],
                body: Self.json(#"{"answer":{"username":"alice","password":"wrong"}}"#))
            #expect(refused.status == .badRequest)
            let error = try Self.object(refused)
            #expect(error["error"] == "invalid_credentials")
            #expect(error["error_description"] == "Falscher Benutzername oder falsches Passwort.")

            // Without uiLocales, the device's Accept-Language.
            let spanish = try Self.object(
                try await client.execute(
                    uri: "/v1/flows", method: .post, headers: [.acceptLanguage: "ja, es-MX;q=0.9"], body: Self.json(#"{"app":"demo","provider":"local"}"#)))
            #expect(spanish["challenge"]?.objectValue?["texts"]?.objectValue?["title"] == "Iniciar sesión")
            // A refusal before any flow exists speaks the request's language too.
            let unknown = try Self.object(
                try await client.execute(uri: "/v1/flows/nope", method: .post, headers: [.acceptLanguage: "nl"], body: Self.json(#"{"answer":{}}"#)))
            #expect(unknown["error"] == "flow_not_found")
            #expect(
                unknown["error_description"]?.stringValue?.contains("flow") == true
                    && unknown["error_description"] != "No such flow, or it has expired or finished; start a new one.")
        }
    }

    /// The sign-in pages: `ui_locales` chooses, and the flow's later pages keep it even when the
    /// browser's `Accept-Language` says otherwise; the app's default applies when neither names one.
    @Test func theSignInPagesKeepTheLanguageTheAuthorizationAskedFor() async throws {
        let yaml = Self.oidcYAML.replacingOccurrences(of: "      idTokenSigningAlg: ES256", with: "      idTokenSigningAlg: ES256\n      branding: {defaultLanguage: nl}")
        let test = try await Self.oidcBroker(yaml: yaml)
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let page = try await client.execute(uri: Self.authorizeQuery(extra: ["ui_locales": "fr-CA de"]), method: .get, headers: [.acceptLanguage: "de"])
            let html = String(buffer: page.body)
            #expect(html.contains(#"<html lang="fr" dir="ltr">"#) && html.contains("Se connecter") && html.contains("Mot de passe"))
            var headers = Self.form
            headers[.cookie] = try #require(page.headers[values: .setCookie].first { $0.hasPrefix("gatehouse_browser=") }?.split(separator: ";").first.map(String.init))
            headers[.acceptLanguage] = "de"
            let wrong = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: headers,
                body: ByteBuffer(
                    string: Self.encode([
                        "flow": try #require(Self.hidden("flow", in: html)), "csrf": try #require(Self.hidden("csrf", in: html)), "username": "alice",
                        "password": "wrong",
                    ])))
            let again = String(buffer: wrong.body)
            #expect(wrong.status == .badRequest)
            #expect(again.contains(#"lang="fr""#) && again.contains("utilisateur ou mot de passe incorrect."))

            // No ui_locales and a browser language the broker does not speak: the app's default.
            let dutch = try await client.execute(
                uri: Self.authorizeQuery(client: "modern", redirect: "https://modern.example/callback"), method: .get, headers: [.acceptLanguage: "ja"])
            #expect(String(buffer: dutch.body).contains(#"<html lang="nl""#) && String(buffer: dutch.body).contains("Inloggen"))

            // Discovery names the languages `ui_locales` can choose.
            let discovery = try Self.object(try await client.execute(uri: "/.well-known/openid-configuration", method: .get))
            #expect(discovery["ui_locales_supported"] == .array(["en", "de", "fr", "es", "nl"]))
        }
    }
}
