import Foundation
import GatehouseCore
import Hummingbird

/// `/admin/`: the admin console. Server-rendered pages over the same core services as the admin API
/// (`AdminService`, `AdminConsoleService`): the handlers read the request, call one service and
/// render; every rule lives in the core. GET pages need an admitted console session (else the
/// sign-in page); every POST needs the session, its CSRF token, and for dangerous actions a recent
/// sign-in.
struct ConsolePages {
    let broker: Broker
    let console: AdminConsoleService
    let renderer = ConsoleRenderer()
    let sessionCookie: SessionCookie
    let signInCookie: SessionCookie
    /// What was typed into a form whose session had ended (`ConsoleDraft`).
    let draftCookie: SessionCookie
    var admin: AdminService { broker.admin }

    init(broker: Broker, console: AdminConsoleService) {
        self.broker = broker
        self.console = console
        sessionCookie = SessionCookie(issuer: broker.config.server.issuer, baseName: "gatehouse_console")
        signInCookie = SessionCookie(issuer: broker.config.server.issuer, baseName: "gatehouse_console_sign_in")
        draftCookie = SessionCookie(issuer: broker.config.server.issuer, baseName: "gatehouse_console_draft")
    }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("admin") { request, context in try await page(request, context) { session in try await home(session, notice: Self.notice(request)) } }
        router.get("admin/login") { request, _ in try await beginSignIn(returnTo: request.uri.queryParameters.get("return"), reauthenticate: false) }
        router.get("admin/reauthenticate") { request, _ in try await beginSignIn(returnTo: request.uri.queryParameters.get("return"), reauthenticate: true) }
        router.get("admin/callback") { request, context in try await callback(request, context) }
        router.post("admin/bootstrap") { request, context in try await bootstrap(request, context) }
        router.post("admin/logout") { request, context in try await signOut(request, context) }
        router.get("admin/signed-out") { _, _ in
            renderer.page(
                "message", title: "Signed out",
                values: [
                    "message": "You are signed out of the admin console and of Gatehouse in this browser.",
                    "links": [["href": "/admin/", "label": "Sign in again", "secondary": false, "id": false]],
                ],
                session: nil
            )
        }
        addAppRoutes(to: router)
        addDirectoryRoutes(to: router)
        addPeopleRoutes(to: router)
        addOperationsRoutes(to: router)
    }

    // MARK: - Sessions, CSRF and re-authentication

    /// A GET page for an admitted admin; anyone else gets the sign-in page (or the "no admin role"
    /// page, with the first-admin bootstrap while it is open).
    func page(_ request: Request, _ context: GatehouseRequestContext, _ render: (ConsoleSession) async throws -> Response) async throws -> Response {
        guard let session = try await console.session(cookie: sessionCookie.value(in: request)) else {
            return signInPage(returnTo: request.uri.path + (request.uri.query.map { "?" + $0 } ?? ""))
        }
        guard session.isAdmitted else { return try await notAdminPage(session) }
        do {
            return try await render(session)
        } catch let error as BrokerError {
            return renderer.failure(error, session: session)
        }
    }

    /// A POST: the session, then its CSRF token, then (for dangerous actions) a recent sign-in, and
    /// only then the action. `back` is where a re-authentication returns to.
    /// `draft`: what of the form to keep when the session has ended, for the page that restores it
    /// (nil: nothing is kept).
    func action(
        _ request: Request, _ context: GatehouseRequestContext, dangerous: Bool = false, back: String = "/admin/",
        draft keep: (([String: String]) async throws -> [String: String])? = nil, _ perform: (ConsoleSession, [String: String]) async throws -> Response
    ) async throws -> Response {
        guard let form = try await pageForm(request, context) else { return renderer.failure(Self.notAForm, session: nil) }
        guard let session = try await console.session(cookie: sessionCookie.value(in: request)) else {
            let login = "/admin/login?return=" + Self.queryValue(back)
            var response = renderer.failure(
                AdminConsoleService.signInAgain, session: nil, links: [["href": login, "label": "Sign in", "secondary": false, "id": "console-sign-in"]])
            // The console's own page posted this (its cookie came along, which a cross-site form cannot
            // send): keep what was typed for after the sign-in.
            if let keep, sessionCookie.value(in: request) != nil, Self.sameOrigin(request, issuer: broker.config.server.issuer),
                let fields = try? await keep(form), let draft = try console.sealDraft(path: request.uri.path, fields: fields)
            {
                draftCookie.set(draft, on: &response)
            } else {
                context.logger.debug("console draft not kept", metadata: ["path": .string(request.uri.path)])
            }
            return response
        }
        do {
            try console.checkCSRF(session, form["csrf"])
            guard session.isAdmitted else { throw BrokerError(.adminRoleRequired, .forbidden, "Your account has no admin role.") }
            if dangerous { try console.requireRecentSignIn(session) }
            return try await perform(session, form)
        } catch let error as BrokerError {
            var links: [[String: Any]] = []
            if error.code == .reauthenticationRequired {
                links.append(["href": "/admin/reauthenticate?return=" + Self.queryValue(back), "label": "Sign in again", "secondary": false, "id": "reauthenticate"])
            }
            links.append(["href": back, "label": "Back", "secondary": true, "id": false])
            return renderer.failure(error, session: session, links: links)
        }
    }

    /// A request whose `Origin` is this broker's (the console's pages send their origin on their own
    /// forms: `Referrer-Policy: same-origin`). Missing or `null` is not proof.
    static func sameOrigin(_ request: Request, issuer: String) -> Bool {
        guard let origin = request.headers[.origin], origin != "null" else { return false }
        return issuer.hasPrefix(origin) && (issuer.count == origin.count || issuer.dropFirst(origin.count).hasPrefix("/"))
    }

    /// The draft kept for `path`, if the browser holds one; the response that shows it clears it.
    func draft(for path: String, in request: Request) -> ConsoleDraft? {
        guard let draft = console.openDraft(draftCookie.sealedValue(in: request, maxBytes: AdminConsoleService.draftCookieLimit)), draft.path == path else {
            return nil
        }
        return draft
    }

    /// The posted form, or nil when the body is not one (a page says so, never JSON).
    func pageForm(_ request: Request, _ context: GatehouseRequestContext) async throws -> [String: String]? {
        do {
            return try await FormBody.parse(request, context: context)
        } catch let error as BrokerError where error.code == .invalidRequest {
            return nil
        }
    }

    static let notAForm = BrokerError(.invalidRequest, .badRequest, "The console's forms are sent as application/x-www-form-urlencoded, once per field.")

    /// The confirmation page of a dangerous action: the form when the sign-in is recent, else a
    /// "sign in again" link that comes back here.
    func confirmation(
        _ session: ConsoleSession, title: String, description: String, action: String, confirmLabel: String, cancel: String, returnTo: String,
        fields: [[String: Any]] = [], needsRecentSignIn: Bool = true, error: BrokerError? = nil, fieldNames: Set<String> = []
    ) -> Response {
        renderer.page(
            "confirm", title: title,
            values: [
                "description": description, "action": action, "confirmLabel": confirmLabel, "cancel": cancel, "fields": fields,
                "recent": !needsRecentSignIn || console.isRecent(session), "minutes": console.config.reauthenticateAfter.value / 60,
                "returnTo": Self.queryValue(returnTo),
            ],
            session: session, error: error, fieldNames: fieldNames, status: error.map { HTTPResponse.Status(code: $0.httpStatus) } ?? .ok
        )
    }

    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/"))) ?? ""
    }

    /// Post/redirect/get with a fixed notice (never text from the request).
    static func done(_ path: String, _ notice: Notice) -> Response {
        ConsoleRenderer.redirect(path + (path.contains("?") ? "&" : "?") + "notice=" + notice.rawValue)
    }

    enum Notice: String {
        case saved, created, deleted, rotated, unlocked, ended, removed, granted, revoked, returned, added, replayed, passwordReset, disabled, enabled

        var text: String {
            switch self {
            case .saved: "Saved. Every node applies it from its next request."
            case .created: "Created."
            case .deleted: "Deleted."
            case .rotated: "Rotated."
            case .unlocked: "Unlocked."
            case .ended: "Session ended."
            case .removed: "Removed."
            case .granted: "The admin role was given."
            case .revoked: "The admin role was taken away."
            case .returned: "Returned to the config file: the next start applies its entry."
            case .added: "Added."
            case .replayed: "Replayed: the delivery is sent again within a second."
            case .passwordReset: "The password was reset; the account's sessions ended and its tokens were revoked."
            case .disabled: "The account is disabled: its sessions ended and its tokens were revoked."
            case .enabled: "The account is enabled again."
            }
        }
    }

    static func notice(_ request: Request) -> String? {
        request.uri.queryParameters.get("notice").flatMap { Notice(rawValue: $0) }?.text
    }

    // MARK: - Signing in

    func signInPage(returnTo: String) -> Response {
        // Deep links come back after the sign-in.
        let login = returnTo.hasPrefix("/admin/") && returnTo != "/admin/" ? "/admin/login?return=" + Self.queryValue(returnTo) : "/admin/login"
        return renderer.page(
            "signIn", title: "Sign in to the admin console", values: ["loginURL": login],
            session: nil
        )
    }

    func notAdminPage(_ session: ConsoleSession, error: BrokerError? = nil) async throws -> Response {
        let open = try await console.bootstrapOpen()
        return renderer.page(
            "notAdmin", title: "No admin role",
            values: [
                "username": session.username, "bootstrapOpen": open, "csrf": session.csrfToken,
                "fields": [ConsoleField.text("adminToken", label: "Static admin token", value: "", error: error?.message, type: "password")],
            ],
            session: session, error: error, fieldNames: ["adminToken"], status: error.map { HTTPResponse.Status(code: $0.httpStatus) } ?? .forbidden
        )
    }

    func beginSignIn(returnTo: String?, reauthenticate: Bool) async throws -> Response {
        let (cookie, location) = try await console.beginSignIn(returnTo: returnTo, reauthenticate: reauthenticate)
        var response = ConsoleRenderer.redirect(location)
        signInCookie.set(cookie, on: &response)
        return response
    }

    func callback(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        let result: AdminConsoleService.SignInResult
        do {
            result = try await console.finishSignIn(
                cookie: signInCookie.sealedValue(in: request), state: query.get("state"), code: query.get("code"), error: query.get("error"), clientIP: context.clientIP,
                previous: sessionCookie.value(in: request)
            )
        } catch let error as BrokerError {
            var response = renderer.failure(
                error, session: nil, links: [["href": "/admin/login", "label": "Sign in again", "secondary": false, "id": "console-sign-in"]])
            signInCookie.clear(on: &response)
            return response
        }
        var response: Response
        switch result {
        case .admitted(let cookie, _, let returnTo):
            response = ConsoleRenderer.redirect(returnTo)
            sessionCookie.set(cookie, on: &response)
        case .refused(let cookie, let session, _):
            response = try await notAdminPage(session)
            sessionCookie.set(cookie, on: &response)
        }
        signInCookie.clear(on: &response)
        return response
    }

    func bootstrap(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        guard let form = try await pageForm(request, context) else { return renderer.failure(Self.notAForm, session: nil) }
        let cookie = sessionCookie.value(in: request)
        do {
            _ = try await console.bootstrap(cookie: cookie, csrf: form["csrf"], adminToken: form["adminToken"] ?? "", clientIP: context.clientIP)
            return Self.done("/admin/", .granted)
        } catch let error as BrokerError {
            guard let session = try await console.session(cookie: cookie) else { return renderer.failure(error, session: nil) }
            if error.code == .invalidCSRFToken { return renderer.failure(error, session: session) }
            return try await notAdminPage(session, error: error)
        }
    }

    func signOut(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        guard let form = try await pageForm(request, context) else { return renderer.failure(Self.notAForm, session: nil) }
        let cookie = sessionCookie.value(in: request)
        guard let session = try await console.session(cookie: cookie) else { return ConsoleRenderer.redirect("/admin/") }
        do {
            try console.checkCSRF(session, form["csrf"])
        } catch let error as BrokerError {
            return renderer.failure(error, session: session)
        }
        let logout = try await console.signOut(cookie: cookie)
        var response = ConsoleRenderer.redirect(logout ?? "/admin/signed-out")
        sessionCookie.clear(on: &response)
        return response
    }

    // MARK: - Home

    func home(_ session: ConsoleSession, notice: String?) async throws -> Response {
        let apps = try await admin.apps()
        let providers = await admin.providers()
        let admins = try await admin.admins()
        let lockouts = try await admin.lockouts()
        let unhealthy = providers.filter { $0.health?.healthy == false }.count
        let stateless = apps.filter(\.policy.statelessAuthentication).count
        return renderer.page(
            "home", title: "Overview",
            values: [
                "apps": apps.count, "stateless": stateless == 0 ? false : stateless, "providers": providers.count, "unhealthy": unhealthy == 0 ? false : unhealthy,
                "admins": admins.enumerated().map { ["name": $1.username ?? $1.accountID, "last": $0 == admins.count - 1] as [String: Any] },
                "lockouts": lockouts.count,
            ],
            session: session, notice: notice
        )
    }
}
