import Foundation
import GatehouseCore
import Hummingbird

/// `/oauth2/logout`, the `end_session_endpoint` (OpenID Connect RP-Initiated Logout 1.0): ends the
/// browser's single sign-on session, at once when the app's `id_token_hint` names that session, else
/// after the person confirms; then sends the browser to the app's registered
/// `post_logout_redirect_uri` with `state`, or shows the signed-out page. The session ends on every
/// node, its refresh tokens are revoked (not `offline_access` ones), and the apps that got tokens in
/// it are told by back-channel logout.
struct LogoutPages {
    let broker: Broker
    let renderer: PageRenderer
    let cookie: SessionCookie

    init(broker: Broker, renderer: PageRenderer) {
        self.broker = broker
        self.renderer = renderer
        self.cookie = SessionCookie(issuer: broker.config.server.issuer)
    }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("oauth2/logout") { request, context in
            do {
                return try await logout(try FormBody.query(request), request: request, context: context)
            } catch let error as BrokerError {
                return page(error, context: context, request: request)
            }
        }
        router.post("oauth2/logout") { request, context in
            do {
                let form = try await FormBody.parse(request, context: context)
                // An app's cross-site form POST comes without the SameSite=Lax cookie: the browser
                // goes on as a top-level GET, which carries it.
                if cookie.value(in: request) == nil, !form.isEmpty {
                    _ = try await validate(form)
                    let parameters = form.filter { Self.parameters.contains($0.key) }.sorted { $0.key < $1.key }.map { ($0.key, Optional($0.value)) }
                    return PageRenderer.redirect(to: OAuthRedirect.url(broker.config.server.issuer + "/oauth2/logout", parameters: parameters))
                }
                return try await logout(form, request: request, context: context)
            } catch let error as BrokerError {
                return page(error, context: context, request: request)
            }
        }
        router.post("oauth2/logout/confirm") { request, context in
            do {
                return try await confirm(try await FormBody.parse(request, context: context), request: request, context: context)
            } catch let error as BrokerError {
                return page(error, context: context, request: request)
            }
        }
    }

    /// The parameters of RP-Initiated Logout 1.0 section 2 that the broker reads.
    static let parameters: Set = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "ui_locales"]

    func page(_ error: BrokerError, context: GatehouseRequestContext, request: Request) -> Response {
        let language = request.pageLanguage()
        return renderer.page(
            "error", title: renderer.catalog.text("Signing out is not possible", in: language),
            values: ["description": renderer.catalog.text(of: error, in: language), "code": error.code.rawValue, "requestID": context.id],
            status: HTTPResponse.Status(code: error.httpStatus), language: language
        )
    }

    func validate(_ parameters: [String: String]) async throws -> EndSessionRequest {
        try await EndSessionRequest.validate(parameters, apps: broker.store, keyring: broker.keyring, issuer: broker.config.server.issuer)
    }

    func logout(_ parameters: [String: String], request: Request, context: GatehouseRequestContext) async throws -> Response {
        let endSession = try await validate(parameters)
        let value = cookie.value(in: request)
        let session = try await broker.oauth.sessions.current(cookie: value)
        // RP-Initiated Logout 1.0 section 2: `ui_locales`, as at sign-in.
        let language = request.pageLanguage(uiLocales: parameters["ui_locales"])
        if let session, let value, endSession.needsConfirmation(for: session) {
            var fields = endSession.parameters.map { ["name": $0.key, "value": $0.value] }
            fields.append(["name": "csrf", "value": SessionCookie.logoutToken(for: value)])
            if let uiLocales = parameters["ui_locales"] { fields.append(["name": "ui_locales", "value": String(uiLocales.prefix(100))]) }
            return renderer.page(
                "logoutConfirm", title: renderer.catalog.text("Sign out", in: language),
                values: [
                    "username": session.username, "appName": endSession.app?.name ?? false, "fields": fields,
                    "action": broker.config.server.issuer + "/oauth2/logout/confirm",
                ], language: language
            )
        }
        return try await finish(endSession, session: session, language: language)
    }

    func confirm(_ form: [String: String], request: Request, context: GatehouseRequestContext) async throws -> Response {
        // The hint was checked on the way in; the form carries only what the redirect needs.
        var parameters = form
        parameters["id_token_hint"] = nil
        let endSession = try await validate(parameters)
        let value = cookie.value(in: request)
        let language = request.pageLanguage(uiLocales: parameters["ui_locales"])
        guard let session = try await broker.oauth.sessions.current(cookie: value), let value else {
            return try await finish(endSession, session: nil, language: language)
        }
        guard let csrf = form["csrf"], SecretDigest.constantTimeEquals(csrf, SessionCookie.logoutToken(for: value)) else {
            throw BrokerError(.invalidRequest, .forbidden, "The sign-out form is not from this browser's session; open the sign-out link again.")
        }
        if form["stay"] != nil {
            return renderer.page("signedOut", title: renderer.catalog.text("Still signed in", in: language), values: ["stayed": true], language: language)
        }
        return try await finish(endSession, session: session, language: language)
    }

    /// Ends the session (if any), clears the cookie, and sends the browser on.
    func finish(_ endSession: EndSessionRequest, session: BrowserSession?, language: String) async throws -> Response {
        if let session { try await broker.oauth.sessions.end(session, reason: "logout") }
        var response =
            endSession.redirect.map(PageRenderer.redirect(to:))
            ?? renderer.page("signedOut", title: renderer.catalog.text("Signed out", in: language), values: ["stayed": false], language: language)
        cookie.clear(on: &response)
        return response
    }
}
