import Foundation
import GatehouseCore
import Hummingbird

/// The device authorization grant's two doors (RFC 8628): the JSON endpoint a device asks for its
/// codes at, and the verification page (`/device`) where the person types the user code and goes on
/// through the app's normal sign-in pages.
struct DevicePages {
    let broker: Broker
    let pages: BrowserPages
    var renderer: PageRenderer { pages.renderer }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.post("oauth2/device_authorization", use: deviceAuthorization)
        router.get("device", use: verification)
        router.get("oauth2/device", use: start)
    }

    /// Where the sign-in that approves a device starts: under `/oauth2/`, where the browser's
    /// binding cookie is sent, so that the flows the browser has open elsewhere keep theirs.
    static let startPath = "/oauth2/device"

    @Sendable func deviceAuthorization(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let form = try await FormBody.parse(request, context: context)
        let client = try ClientCredentials.presented(
            basic: try ClientAuthentication.basicCredentials(request.headers[.authorization]), bodyClientID: form["client_id"], bodySecret: form["client_secret"]
        )
        let answer = try await broker.oauth.deviceAuthorization(
            client: client, scopes: form["scope"].map { $0.split(separator: " ").map(String.init) }, clientIP: context.clientIP
        )
        var response = JSONBody(answer.json).response(status: .ok)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// Without a code: the form. With one (`verification_uri_complete`): on to the sign-in that
    /// approves the device. After it: the result.
    @Sendable func verification(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let query = try? FormBody.query(request) else {
            return renderer.error(.invalidRequest("The query is not readable."), requestID: context.id, language: request.pageLanguage())
        }
        if let result = query["result"], ["approved", "denied", "failed"].contains(result) {
            let language = request.pageLanguage()
            return renderer.page("deviceResult", title: renderer.catalog.text("Device sign-in", in: language), values: [result: true], language: language)
        }
        guard let userCode = query["user_code"], !userCode.isEmpty else { return form(value: "", error: nil, language: request.pageLanguage()) }
        return PageRenderer.redirect(to: OAuthRedirect.url(broker.config.server.issuer + Self.startPath, parameters: [("user_code", userCode)]))
    }

    /// The code typed (or from the link): the sign-in that approves the device, or the form again.
    @Sendable func start(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let query = try? FormBody.query(request) else {
            return renderer.error(.invalidRequest("The query is not readable."), requestID: context.id, language: request.pageLanguage())
        }
        guard let userCode = query["user_code"], !userCode.isEmpty else { return form(value: "", error: nil, language: request.pageLanguage()) }
        let cookie = request.cookies[BrowserPages.cookieName]?.value.nilIfInvalidToken ?? RandomToken.make()
        let binding = BrowserBinding(cookie: cookie)
        do {
            let (outcome, app) = try await broker.engine.startDeviceVerification(
                userCode: userCode, binding: binding, clientIP: context.clientIP, sessionCookie: pages.sessionCookie.value(in: request),
                userAgent: request.headers[.userAgent],
                language: LanguageChoice.preferred(uiLocales: request.cookies[BrowserPages.languageCookie]?.value, acceptLanguage: request.headers[.acceptLanguage])
            )
            var response = pages.respond(outcome, app: app, csrf: binding.csrfToken, requestID: context.id, language: request.pageLanguage())
            response.setCookie(pages.bindingCookie(cookie, lifetime: Int(app.policy.flowLifetime.value)))
            return response
        } catch let error as BrokerError where error.code == .invalidGrant {
            let language = request.pageLanguage()
            return form(value: String(userCode.prefix(32)), error: renderer.catalog.text(of: error, in: language), language: language)
        } catch let error as BrokerError {
            return renderer.error(error, requestID: context.id, language: request.pageLanguage())
        }
    }

    func form(value: String, error: String?, language: String) -> Response {
        renderer.page(
            "deviceCode", title: renderer.catalog.text("Sign in on a device", in: language),
            values: ["action": broker.config.server.issuer + Self.startPath, "value": value, "error": error ?? false],
            status: error == nil ? .ok : .badRequest, language: language
        )
    }
}
