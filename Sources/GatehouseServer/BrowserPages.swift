import Foundation
import GatehouseCore
import Hummingbird

/// `/oauth2/authorize` and the pages of browser flows: the provider chooser and one page per
/// challenge. Every form carries the flow id and a CSRF token in hidden fields (never in a URL), and
/// the flow only answers to the browser holding its binding cookie.
struct BrowserPages {
    let broker: Broker
    let renderer: PageRenderer
    let sessionCookie: SessionCookie

    static let cookieName = "gatehouse_browser"
    /// The language a browser's sign-in chose at `/oauth2/authorize` (`ui_locales`, else
    /// `Accept-Language`), kept for the flow's next pages. Not a secret.
    static let languageCookie = "gatehouse_lang"

    /// The language of a page outside a flow's challenge (a provider choice, an error): what this
    /// browser's sign-in chose, else its `Accept-Language`, else English.
    func language(_ request: Request) -> String { request.pageLanguage() }

    init(broker: Broker, theme: PageTheme = PageTheme()) {
        self.broker = broker
        self.renderer = PageRenderer(
            issuer: broker.config.server.issuer, challenges: broker.engine.challenges, providerNames: broker.plugins.displayNames, theme: theme)
        self.sessionCookie = SessionCookie(issuer: broker.config.server.issuer)
    }

    /// Renders what a step led to; a sign-in that started a single sign-on session gives the
    /// browser its cookie.
    func respond(_ outcome: FlowOutcome, app: App?, csrf: String, requestID: String?, language: String = "en") -> Response {
        var response = renderer.render(outcome, app: app, csrf: csrf, requestID: requestID, language: language)
        if case .authorized(_, _, let cookie?) = outcome { sessionCookie.set(cookie, on: &response) }
        return response
    }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        // A challenge's declared script, the one file its page may run.
        router.get("assets/challenges/:file") { _, context in
            let file = try context.parameters.require("file")
            guard file.hasSuffix(".js"), let script = broker.engine.challenges.description(of: String(file.dropLast(3)))?.script else {
                throw BrokerError(.notFound, .notFound, "No such script.")
            }
            var headers = HTTPFields()
            headers[.contentType] = "text/javascript; charset=utf-8"
            headers[.cacheControl] = "no-cache"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: script.source)))
        }
        // The one script of the page that posts a form on (`PageRenderer.autoPost`).
        router.get(RouterPath(String(PageRenderer.autoPostScriptPath.dropFirst()))) { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/javascript; charset=utf-8"
            headers[.cacheControl] = "max-age=3600"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: PageTemplates.autoPostScript)))
        }
        router.get("oauth2/authorize") { request, context in
            let parameters: [String: String]
            do {
                parameters = try FormBody.query(request)
            } catch {
                return renderer.error(error as? BrokerError ?? .invalidRequest("The query is not readable."), requestID: context.id, language: language(request))
            }
            return try await authorize(parameters, request: request, context: context)
        }
        router.post("oauth2/authorize") { request, context in
            let parameters: [String: String]
            do {
                parameters = try await FormBody.parse(request, context: context)
            } catch let error as BrokerError {
                return renderer.error(error, requestID: context.id, language: language(request))
            }
            return try await authorize(parameters, request: request, context: context)
        }
        router.post("oauth2/authorize/provider", use: choose)
        router.post("oauth2/authorize/answer", use: answer)
        router.post("oauth2/authorize/register") { request, context in
            try await handleForm(request, context: context) { _, flowID, proof in try await broker.engine.switchToRegistration(flowID: flowID, browser: proof) }
        }
        router.post("oauth2/authorize/sign-in") { request, context in
            try await handleForm(request, context: context) { _, flowID, proof in try await broker.engine.switchToSignIn(flowID: flowID, browser: proof) }
        }
        router.post("oauth2/authorize/recover") { request, context in
            try await handleForm(request, context: context) { _, flowID, proof in try await broker.engine.startRecovery(flowID: flowID, browser: proof) }
        }
        // `/oauth2/callback/<provider>` is each provider's own (RFC 9700 section 4.4.2: one redirect
        // URI per upstream); `/oauth2/callback` serves providers configured with it.
        for path in ["oauth2/callback", "oauth2/callback/:provider"] {
            router.get(RouterPath(path)) { request, context in
                do {
                    return try await callback(try FormBody.query(request), crossSitePost: false, request: request, context: context)
                } catch let error as BrokerError {
                    return renderer.error(error, requestID: context.id, language: language(request))
                }
            }
            // A SAML response with an encrypted, signed assertion and its groups outgrows the forms' limit.
            router.group().add(middleware: BodyLimitMiddleware(bytes: BodyLimit.json)).post(RouterPath(path)) { request, context in
                do {
                    return try await callback(try await FormBody.parse(request, context: context), crossSitePost: true, request: request, context: context)
                } catch let error as BrokerError {
                    return renderer.error(error, requestID: context.id, language: language(request))
                }
            }
        }
    }

    /// An upstream sign-in page sent the browser back (`response_mode` `query` or `form_post`, SAML's
    /// HTTP-POST binding) with the flow's id as `state` (or the parameter the flow's challenge
    /// declares, SAML's `RelayState`): the flow's plugin checks the answer, and the browser goes on
    /// with the flow, back to the native app that started it, or to the app with an error. A form post
    /// the broker's own page sent again (`repostMarker`) is same-site, and is not posted again.
    func callback(_ parameters: [String: String], crossSitePost: Bool, request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let stateParameter = broker.engine.callbackStateParameters.first(where: { !(parameters[$0] ?? "").isEmpty }),
            let state = parameters[stateParameter]
        else {
            throw BrokerError(.invalidRequest, .badRequest, "The callback has no state; start again from the app.")
        }
        let reposted = parameters[PageRenderer.repostMarker] != nil
        let answer = parameters.filter { $0.key != stateParameter && $0.key != PageRenderer.repostMarker }.mapValues(JSONValue.string)
        let cookie = request.cookies[Self.cookieName]?.value.nilIfInvalidToken
        let provider = context.parameters.get("provider")
        switch try await broker.engine.callback(
            state: state, stateParameter: stateParameter, answer: ChallengeResponse(answer), cookie: cookie, crossSitePost: crossSitePost && !reposted,
            providerID: provider
        ) {
        case .browser(let outcome, let app, let csrf):
            return respond(outcome, app: app, csrf: csrf, requestID: context.id, language: language(request))
        case .redirect(let location):
            return PageRenderer.redirect(to: location)
        case .repost(let url, let fields):
            return renderer.autoPost(to: url, fields: fields + [(PageRenderer.repostMarker, "1")], title: "Continue signing in", language: language(request))
        }
    }

    func authorize(_ parameters: [String: String], request: Request, context: GatehouseRequestContext) async throws -> Response {
        let app: App
        let authorization: AuthorizationRequest
        do {
            (app, authorization) = try await broker.authorizations.validate(parameters)
        } catch AuthorizationRefusal.page(let error) {
            return renderer.error(error, requestID: context.id, language: language(request))
        } catch AuthorizationRefusal.redirect(_, let location) {
            return PageRenderer.redirect(to: location)
        }
        // One binding cookie per browser, reused by every flow it starts (so two tabs both work).
        let cookie = request.cookies[Self.cookieName]?.value.nilIfInvalidToken ?? RandomToken.make()
        let binding = BrowserBinding(cookie: cookie)
        var response: Response
        // OIDC Core 3.1.2.1: `ui_locales`, then the browser's languages, then the app's default.
        // The request's own `ui_locales`: a pushed or signed request's, never one beside it (RFC 9126, RFC 9101).
        let preferred = LanguageChoice.preferred(uiLocales: authorization.uiLocales, acceptLanguage: request.headers[.acceptLanguage])
        let chosen = preferred ?? app.view.language
        do {
            let outcome = try await broker.engine.startAuthorization(
                app: app, request: authorization, binding: binding, clientIP: context.clientIP, sessionCookie: sessionCookie.value(in: request),
                userAgent: request.headers[.userAgent], language: chosen
            )
            response = respond(outcome, app: app, csrf: binding.csrfToken, requestID: context.id, language: chosen)
        } catch AuthorizationRefusal.redirect(_, let location) {
            // prompt=none that cannot be honoured (OIDC Core section 3.1.2.6).
            response = PageRenderer.redirect(to: location)
        } catch let error as BrokerError {
            response = renderer.error(error, requestID: context.id, language: chosen)
        }
        response.setCookie(bindingCookie(cookie, lifetime: Int(app.policy.flowLifetime.value)))
        // The pages outside the flow's challenges (a provider choice, an error) speak it too.
        response.setCookie(
            Cookie(
                name: Self.languageCookie, value: chosen, maxAge: Int(app.policy.flowLifetime.value), path: "/",
                secure: broker.config.server.issuer.hasPrefix("https:"), httpOnly: true, sameSite: .lax))
        return response
    }

    /// The cookie that binds a browser's flows to it, for `lifetime` seconds.
    func bindingCookie(_ value: String, lifetime: Int) -> Cookie {
        Cookie(
            // The callback (/oauth2/callback) needs it too, to know the browser coming back from upstream.
            name: Self.cookieName, value: value, maxAge: lifetime, path: "/oauth2/",
            secure: broker.config.server.issuer.hasPrefix("https:"), httpOnly: true, sameSite: .lax
        )
    }

    @Sendable func choose(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        try await handleForm(request, context: context) { form, flowID, proof in
            guard let provider = form["provider"] else { throw BrokerError(.invalidRequest, .badRequest, "Choose a provider.") }
            return try await broker.engine.chooseProvider(flowID: flowID, providerID: provider, browser: proof)
        }
    }

    @Sendable func answer(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        try await handleForm(request, context: context) { form, flowID, proof in
            let answer = form.filter { !["flow", "csrf", "cancel"].contains($0.key) }.mapValues(JSONValue.string)
            return try await broker.engine.resume(flowID: flowID, answer: ChallengeResponse(answer), browser: proof)
        }
    }

    /// Reads a flow form, runs `step`, and renders what comes next. A refused answer shows the same
    /// page again with the error; a flow that is gone shows the error page.
    private func handleForm(
        _ request: Request, context: GatehouseRequestContext,
        step: ([String: String], String, BrowserProof) async throws -> (outcome: FlowOutcome, app: App)
    ) async throws -> Response {
        let form: [String: String]
        do {
            form = try await FormBody.parse(request, context: context)
        } catch let error as BrokerError {
            return renderer.error(error, requestID: context.id, language: language(request))
        }
        guard let flowID = form["flow"], let csrf = form["csrf"] else {
            return renderer.error(BrokerError(.invalidRequest, .badRequest, "The form is incomplete."), requestID: context.id, language: language(request))
        }
        let proof = BrowserProof(cookie: request.cookies[Self.cookieName]?.value, csrfToken: csrf)
        do {
            if form["cancel"] != nil {
                return PageRenderer.redirect(to: try await broker.engine.cancel(flowID: flowID, browser: proof))
            }
            let (outcome, app) = try await step(form, flowID, proof)
            return respond(outcome, app: app, csrf: csrf, requestID: context.id, language: language(request))
        } catch let error as BrokerError
            where [.failedAttempt, .badRequest, .conflict, .tooManyRequests, .unavailable].contains(error.kind) && error.code != .flowNotFound
        {
            // A flow that is still there (a wrong code, a mail server that did not answer) shows its
            // page again with the error, so the person can retry; a flow that ended shows the error page.
            guard let pending = try? await broker.engine.pending(flowID: flowID, browser: proof) else {
                return renderer.error(error, requestID: context.id, language: language(request))
            }
            let typed = form.filter { !["flow", "csrf", "cancel"].contains($0.key) }
            let language = PageRenderer.language(of: pending.outcome) ?? language(request)
            return renderer.render(
                pending.outcome, app: pending.app, csrf: csrf, error: renderer.catalog.text(of: error, in: language), typed: typed, status: .badRequest,
                requestID: context.id, language: language)
        } catch let error as BrokerError {
            return renderer.error(error, requestID: context.id, language: language(request))
        }
    }
}

extension String {
    /// The value if it looks like one of our random tokens (43 base64url characters), else nil.
    var nilIfInvalidToken: String? {
        count == 43 && allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") } ? self : nil
    }
}
