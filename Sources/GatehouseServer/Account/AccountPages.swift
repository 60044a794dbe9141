import Foundation
import GatehouseCore
import Hummingbird

/// `/account`: the page where people manage their own account, signed in through the broker like
/// the admin console (the `gatehouse-account` app, `AdminConsoleService` for the `.account` site):
/// profile, password, devices, browser sessions, the apps they allowed, and the credentials plugins
/// keep for them. The same rules as the console: no script, a strict CSP, a CSRF token in every
/// form, a recent sign-in for a password change or a credential's removal. Handlers read the
/// request, call `AccountPageService` and render.
struct AccountPages {
    let broker: Broker
    let site: AdminConsoleService
    let service: AccountPageService
    let renderer = ConsoleRenderer(site: .account)
    let sessionCookie: SessionCookie
    let signInCookie: SessionCookie
    /// The page's texts and refusals in the person's language (the one their last sign-in chose,
    /// else their browser's).
    let catalog: MessageCatalog

    /// The sign-in pages, which show an enrolment's steps like any flow's.
    let flowPages: BrowserPages

    init(broker: Broker, site: AdminConsoleService, flowPages: BrowserPages) {
        self.broker = broker
        self.site = site
        self.flowPages = flowPages
        catalog = MessageCatalog(plugins: broker.engine.challenges.translations, accountPage: true)
        service = AccountPageService(broker: broker)
        sessionCookie = SessionCookie(issuer: broker.config.server.issuer, baseName: "gatehouse_account")
        signInCookie = SessionCookie(issuer: broker.config.server.issuer, baseName: "gatehouse_account_sign_in")
    }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("account") { request, context in
            guard let session = try await site.session(cookie: sessionCookie.value(in: request)), session.isAdmitted else {
                return try await beginSignIn(reauthenticate: false)
            }
            let language = request.pageLanguage()
            return try await page(session, notice: Self.notice(request).map { catalog.text($0, in: language) }, language: language)
        }
        router.get("account/login") { _, _ in try await beginSignIn(reauthenticate: false) }
        router.get("account/reauthenticate") { _, _ in try await beginSignIn(reauthenticate: true) }
        router.get("account/callback") { request, context in try await callback(request, context) }
        router.get("account/signed-out") { request, _ in
            let language = request.pageLanguage()
            let say = { (text: String) in catalog.text(text, in: language) }
            return renderer.page(
                "message", title: say("Signed out"),
                values: ["message": say("You are signed out."), "links": [["href": "/account", "label": say("Sign in again"), "secondary": false, "id": false]]],
                session: nil, language: language)
        }
        router.post("account/logout") { request, context in
            try await action(request, context) { _, _ in
                let logout = try await site.signOut(cookie: sessionCookie.value(in: request))
                var response = ConsoleRenderer.redirect(logout ?? "/account/signed-out")
                sessionCookie.clear(on: &response)
                return response
            }
        }
        router.post("account/devices/:id/rename") { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context) { session, form in
                try await broker.devices.rename(id, alias: form["alias"] ?? "", ownAccountID: session.accountID)
                return Self.done(.renamed)
            }
        }
        router.post("account/devices/:id/remove") { request, context in
            let id = try context.parameters.require("id")
            // A device holds sign-in keys: removing one is a sign-in's worth of trust, recent.
            return try await action(request, context, recent: true) { session, _ in
                try await broker.devices.remove(id, ownAccountID: session.accountID)
                return Self.done(.removed)
            }
        }
        router.post("account/sessions/end-others") { request, context in
            try await action(request, context) { session, _ in
                _ = try await service.endOtherSessions(accountID: session.accountID, current: session.sessionID)
                return Self.done(.ended)
            }
        }
        router.post("account/sessions/:id/end") { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context) { session, _ in
                try await service.endSession(id, accountID: session.accountID)
                return Self.done(.ended)
            }
        }
        router.post("account/consents/:app/revoke") { request, context in
            let app = try context.parameters.require("app")
            return try await action(request, context) { session, _ in
                try await broker.oauth.revokeConsent(appID: app, accountID: session.accountID)
                return Self.done(.revoked)
            }
        }
        router.post("account/password") { request, context in
            try await action(request, context, recent: true) { session, form in
                do {
                    try await service.changePassword(
                        accountID: session.accountID, providerID: nil, to: form["password"] ?? "", currentSession: session.sessionID, methods: session.methods ?? [])
                } catch let error as BrokerError where error.httpStatus == 400 {
                    let language = request.pageLanguage()
                    var told = ConsolePages.onPassword(error)
                    told.message = catalog.text(of: told, in: language)
                    return try await page(session, passwordError: told, language: language)
                }
                return Self.done(.passwordChanged)
            }
        }
        router.post("account/credentials/:provider/add") { request, context in
            let provider = try context.parameters.require("provider")
            // Setting a credential up runs the plugin's own flow on the sign-in pages, in this
            // browser: its first page answers this post, and its last step comes back here.
            return try await action(request, context, recent: true) { session, _ in
                let cookie = RandomToken.make()
                let binding = BrowserBinding(cookie: cookie)
                let language = request.pageLanguage()
                let outcome = try await service.beginEnrolment(
                    provider: provider, accountID: session.accountID, methods: session.methods ?? [], sessionID: session.sessionID, binding: binding,
                    clientIP: context.clientIP, language: language)
                let app = try await broker.store.app(id: ConsoleConfig.accountAppID)
                var response = flowPages.respond(outcome, app: app, csrf: binding.csrfToken, requestID: context.id, language: language)
                response.setCookie(flowPages.bindingCookie(cookie, lifetime: Int(app?.policy.flowLifetime.value ?? 600)))
                return response
            }
        }
        router.post("account/credentials/:provider/:resource/remove") { request, context in
            let provider = try context.parameters.require("provider")
            let resource = try context.parameters.require("resource")
            return try await action(request, context, recent: true) { session, form in
                let key = form.filter { $0.key.hasPrefix("key.") }.sorted { $0.key < $1.key }
                // The declaration alone names the key's fields: no need to list anyone's items here.
                let declaration = broker.admin.offeredResources().first { $0.provider == provider && $0.resource.name == resource }?.resource
                let ordered = (declaration?.itemKey ?? key.map { String($0.key.dropFirst(4)) }).map { form["key.\($0)"] ?? "" }
                try await service.removeCredential(provider: provider, resource: resource, key: ordered, accountID: session.accountID, methods: session.methods ?? [])
                return Self.done(.removed)
            }
        }
    }

    // MARK: - Signing in

    func beginSignIn(reauthenticate: Bool) async throws -> Response {
        let (cookie, location) = try await site.beginSignIn(returnTo: "/account", reauthenticate: reauthenticate)
        var response = ConsoleRenderer.redirect(location)
        signInCookie.set(cookie, on: &response)
        return response
    }

    func callback(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        var response: Response
        do {
            let result = try await site.finishSignIn(
                cookie: signInCookie.sealedValue(in: request), state: query.get("state"), code: query.get("code"), error: query.get("error"),
                clientIP: context.clientIP, previous: sessionCookie.value(in: request))
            switch result {
            case .admitted(let cookie, _, _):
                response = ConsoleRenderer.redirect("/account")
                sessionCookie.set(cookie, on: &response)
            case .refused:
                response = failure(BrokerError(.accessDenied, .forbidden, "This account cannot be managed here."), session: nil, request: request)
            }
        } catch let error as BrokerError {
            response = failure(
                error, session: nil, request: request, links: [["href": "/account/login", "label": "Sign in again", "secondary": false, "id": "account-sign-in"]])
        }
        signInCookie.clear(on: &response)
        return response
    }

    // MARK: - Pages and actions

    /// A POST: the session, its CSRF token, a recent sign-in where asked, then the action.
    func action(
        _ request: Request, _ context: GatehouseRequestContext, recent: Bool = false, _ perform: (ConsoleSession, [String: String]) async throws -> Response
    ) async throws -> Response {
        let form: [String: String]
        do {
            form = try await FormBody.parse(request, context: context)
        } catch let error as BrokerError where error.code == .invalidRequest {
            return failure(ConsolePages.notAForm, session: nil, request: request)
        }
        guard let session = try await site.session(cookie: sessionCookie.value(in: request)), session.isAdmitted else {
            return failure(
                BrokerError(.loginRequired, .unauthenticated, "Your session on this page has ended. Sign in again."), session: nil, request: request,
                links: [["href": "/account/login", "label": "Sign in", "secondary": false, "id": "account-sign-in"]])
        }
        do {
            try site.checkCSRF(session, form["csrf"])
            if recent { try site.requireRecentSignIn(session) }
            return try await perform(session, form)
        } catch let error as BrokerError {
            var links: [[String: Any]] = []
            if error.code == .reauthenticationRequired {
                links.append(["href": "/account/reauthenticate", "label": "Sign in again", "secondary": false, "id": "reauthenticate"])
            }
            links.append(["href": "/account", "label": "Back to your account", "secondary": true, "id": false])
            return failure(error, session: session, request: request, links: links)
        }
    }

    /// A refusal's page in the person's language: its message, its links' labels and its title.
    func failure(_ error: BrokerError, session: ConsoleSession?, request: Request, links: [[String: Any]] = []) -> Response {
        let language = request.pageLanguage()
        var told = error
        told.message = catalog.text(of: error, in: language)
        let links = links.map { link in
            var link = link
            link["label"] = (link["label"] as? String).map { catalog.text($0, in: language) } ?? ""
            return link
        }
        return renderer.failure(told, session: session, links: links, language: language)
    }

    func page(_ session: ConsoleSession, notice: String? = nil, passwordError: BrokerError? = nil, language: String) async throws -> Response {
        let say = { (text: String, values: [String: String]) in TextTranslations.fill(catalog.text(text, in: language), values) }
        let overview = try await service.overview(accountID: session.accountID)
        let claims = overview.user.identities.first?.claims ?? [:]
        let apps = try await broker.admin.apps()
        let appNames = Dictionary(apps.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let recent = site.isRecent(session)
        let enrolments = try await broker.engine.accountEnrolments().map { enrolment -> [String: Any] in
            [
                "provider": enrolment.providerID, "label": say(enrolment.label, [:]), "csrf": session.csrfToken, "recent": recent,
                "needsRecent": say(
                    "To set it up, sign in again first: your sign-in is more than {minutes} minutes old.",
                    [
                        "minutes": String(site.config.reauthenticateAfter.value / 60)
                    ]),
            ]
        }
        let sectioned = Set(overview.credentials.map(\.offered.provider))
        let errors = passwordError.map { ConsoleRenderer.fieldErrors($0, names: ["password"]) } ?? [:]
        var rules: [String] = []
        if let provider = overview.passwordProviders.first { rules = try await broker.admin.passwordPolicy(forProvider: provider, app: nil).rules(in: language) }
        let values: [String: Any] = [
            "username": overview.user.username, "name": claims["name"]?.stringValue ?? false, "email": claims["email"]?.stringValue ?? false,
            "providers": overview.user.identities.map(\.provider).joined(separator: ", "), "created": ConsoleRenderer.time(overview.user.createdAt),
            "hasPassword": !overview.passwordProviders.isEmpty, "recent": recent,
            "passwordNeedsRecent": say(
                "To change your password, sign in again first: your sign-in is more than {minutes} minutes old.",
                ["minutes": String(site.config.reauthenticateAfter.value / 60)]),
            "passwordFields": [
                ConsoleField.text(
                    "password", label: say("New password", [:]), value: "", hint: rules.joined(separator: " "), error: errors["password"],
                    type: "password")
            ],
            "devices": overview.devices.map { record -> [String: Any] in
                [
                    "id": record.device.id, "alias": record.device.alias, "created": ConsoleRenderer.time(record.device.createdAt), "csrf": session.csrfToken,
                    "summary": "\(record.device.platform.rawValue)\(record.device.model.map { " · \($0)" } ?? "")",
                    "aliasLabel": say("Name of {alias}", ["alias": record.device.alias]), "removeLabel": say("Remove device {alias}", ["alias": record.device.alias]),
                ]
            },
            "sessions": overview.sessions.map { browser -> [String: Any] in
                [
                    "id": browser.id, "authTime": ConsoleRenderer.time(browser.authTime), "lastSeen": ConsoleRenderer.time(browser.lastSeenAt),
                    "apps": browser.appIDs.map { appNames[$0] ?? $0 }.joined(separator: ", "), "from": browser.clientIP ?? "", "current": browser.id == session.sessionID,
                    "csrf": session.csrfToken, "endLabel": say("End the session from {time}", ["time": ConsoleRenderer.time(browser.authTime)]),
                ]
            },
            "hasOthers": overview.sessions.contains { $0.id != session.sessionID },
            "enrolments": enrolments.filter { !sectioned.contains($0["provider"] as? String ?? "") },
            "hasEnrolments": enrolments.contains { !sectioned.contains($0["provider"] as? String ?? "") },
            "consents": overview.consents.map { grant -> [String: Any] in
                [
                    "appID": grant.appID, "app": appNames[grant.appID] ?? grant.appID, "scopes": grant.scopes.joined(separator: ", "),
                    "since": ConsoleRenderer.time(grant.grantedAt), "csrf": session.csrfToken,
                    "takeBackLabel": say("Take back what {app} may see", ["app": appNames[grant.appID] ?? grant.appID]),
                ]
            },
            "credentials": overview.credentials.map { offered, items -> [String: Any] in
                let declaration = offered.resource
                let columns = declaration.columns.filter { $0 != declaration.accountField }
                return [
                    "summary": say(declaration.summary, [:]), "columns": columns.map { say(Self.heading($0), [:]) }, "span": columns.count + 1,
                    // The plugin's button under its first list (a plugin may keep several).
                    "add": overview.credentials.first { $0.offered.provider == offered.provider }?.offered.resource.name == declaration.name
                        ? enrolments.first { $0["provider"] as? String == offered.provider }.map { $0 as Any } ?? false : false,
                    "items": items.map { item -> [String: Any] in
                        let object = item.objectValue ?? [:]
                        let key = declaration.itemKey.map { ["name": $0, "value": ConsolePages.text(object[$0])] }
                        return [
                            // Yes and no are words the person reads; names, dates and models are shown as they are.
                            "cells": columns.map { object[$0]?.boolValue == nil ? ConsolePages.text(object[$0]) : say(ConsolePages.text(object[$0]), [:]) },
                            "key": key, "csrf": session.csrfToken,
                            "recent": recent && AccountPageService.mayRemove(provider: offered.provider, methods: session.methods ?? []), "provider": offered.provider,
                            "action": "/account/credentials/\(offered.provider)/\(declaration.name)/remove", "removable": !declaration.itemKey.isEmpty,
                            "removeLabel": say("Remove {label}", ["label": key.map { $0["value"] ?? "" }.joined(separator: " ")]),
                            "onlyRecent": say(
                                "Only a recent sign-in with {provider} removes it: sign in to this page with it again, or ask an administrator.",
                                ["provider": offered.provider]),
                        ]
                    },
                ]
            },
        ]
        return renderer.page(
            "account", title: say("Your account", [:]), values: values, session: session, notice: notice, error: passwordError, fieldNames: ["password"],
            status: passwordError.map { HTTPResponse.Status(code: $0.httpStatus) } ?? .ok, language: language)
    }

    /// A resource column's heading as a person reads it (`createdAt` is "Created at"), in English,
    /// for the catalog to translate.
    static func heading(_ key: String) -> String {
        var words = ""
        for character in key {
            if character.isUppercase, !words.isEmpty { words += " " + character.lowercased() } else { words.append(character) }
        }
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    enum Notice: String, CaseIterable {
        case renamed, removed, ended, revoked, passwordChanged, enrolled, stopped

        var text: String {
            switch self {
            case .renamed: "Renamed."
            case .removed: "Removed."
            case .ended: "Signed out there."
            case .revoked: "The app's access is taken back; it asks again next time."
            case .passwordChanged: "Your password is changed; every other session and app was signed out."
            case .enrolled: "It is set up: use it the next time you sign in."
            case .stopped: "The setup stopped: the lists below show what is set up."
            }
        }
    }

    static func done(_ notice: Notice) -> Response { ConsoleRenderer.redirect("/account?notice=" + notice.rawValue) }

    static func notice(_ request: Request) -> String? { request.uri.queryParameters.get("notice").flatMap { Notice(rawValue: $0) }?.text }
}
