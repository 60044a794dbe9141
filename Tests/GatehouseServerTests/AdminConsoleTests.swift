import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import LocalPassword
import NIOCore
import Testing

/// The admin console over HTTP with a test clock: sign-in through the broker (code + PKCE), the
/// first-admin bootstrap (once), refusal of non-admins, CSRF on every form, the policy form with
/// field errors, re-authentication before dangerous actions, and sign-out.
extension GatehouseServerTests {
    static let consoleToken = "console-admin-token-console-admin-0001"

    static func consoleBroker() async throws -> TestBroker {
        let yaml =
            oidcYAML + """

                admin:
                  tokens:
                    - {name: bootstrap, token: \(consoleToken)}
                  console:
                    identityProviders: [local]
                """
        let test = try await oidcBroker(yaml: yaml)
        let provider = try #require(test.broker.plugins.passwordKeepers["local"])
        _ = try await provider.addUser(username: "bob", password: "tulip marble engine", policy: PasswordPolicy())
        return test
    }

    /// A browser signed in to the console: its cookie header and the page the callback answered.
    struct ConsoleBrowser {
        var cookie: String
        var landing: TestResponse
        var html: String { String(buffer: landing.body) }
        var csrf: String? { hidden("csrf", in: html) }
        var headers: HTTPFields { [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"] }
    }

    static func path(_ url: String, issuer: String) -> String {
        url.hasPrefix(issuer) ? String(url.dropFirst(issuer.count)) : url
    }

    /// Signs in to the console as a browser would: the console's redirect, the broker's sign-in page,
    /// the callback. `start` is `/admin/login` or a re-authentication; `console` a cookie held already.
    static func consoleSignIn(
        _ client: any TestClientProtocol, _ test: TestBroker, username: String = "alice", password: String = "correct horse battery",
        start: String = "/admin/login"
    ) async throws -> ConsoleBrowser {
        let issuer = test.broker.config.server.issuer
        let begin = try await client.execute(uri: start, method: .get)
        #expect(begin.status == .seeOther)
        let signInCookie = try #require(begin.headers[.setCookie]?.split(separator: ";").first.map(String.init))
        let authorize = path(try #require(begin.headers[.location]), issuer: issuer)
        let page = try await openSignInPage(client, authorizeURI: authorize)
        let answer = try await client.execute(
            uri: "/oauth2/authorize/answer", method: .post, headers: page.headers,
            body: ByteBuffer(string: encode(["flow": page.flow, "csrf": page.csrf, "username": username, "password": password]))
        )
        #expect(answer.status == .seeOther)
        let location = path(try #require(answer.headers[.location]), issuer: issuer)
        #expect(location.hasPrefix("/admin/callback?"))
        let landing = try await client.execute(uri: location, method: .get, headers: [.cookie: signInCookie])
        let cookie = landing.headers[values: .setCookie].first { $0.hasPrefix("gatehouse_console=") }
        return ConsoleBrowser(cookie: try #require(cookie?.split(separator: ";").first.map(String.init)), landing: landing)
    }

    /// Alice signs in once (her account is made), is granted the admin role, and signs in again as an
    /// administrator.
    static func administratorSignIn(_ client: any TestClientProtocol, _ test: TestBroker) async throws -> ConsoleBrowser {
        _ = try await consoleSignIn(client, test)
        try await test.broker.admin.grantAdmin(accountID: try await test.broker.admin.accountID(named: "alice"), by: AdminIdentity(name: "test"))
        return try await consoleSignIn(client, test)
    }

    /// The values a browser would post from the first form whose action is `action`: text inputs,
    /// checked checkboxes, textareas and selected options.
    static func formValues(_ html: String, action: String) throws -> [String: String] {
        let start = try #require(html.range(of: #"action="\#(action)""#))
        let form = html[start.upperBound...].components(separatedBy: "</form>")[0]
        var values: [String: String] = [:]
        let input = try Regex(#"<input ([^>]*)>"#)
        for match in form.matches(of: input) {
            let attributes = String(form[match.range])
            guard let name = attribute("name", in: attributes) else { continue }
            let type = attribute("type", in: attributes) ?? "text"
            if type == "checkbox" {
                if attributes.contains(" checked") { values[name] = "on" }
            } else {
                values[name] = attribute("value", in: attributes) ?? ""
            }
        }
        for match in form.matches(of: try Regex(#"<textarea [^>]*name="([^"]+)"[^>]*>([^<]*)</textarea>"#)) {
            values[String(match.output[1].substring!)] = String(match.output[2].substring!).replacingOccurrences(of: "&#x2F;", with: "/")
        }
        for match in form.matches(of: try Regex(#"<select [^>]*name="([^"]+)"[^>]*>(.*?)</select>"#)) {
            let options = String(match.output[2].substring!)
            let selected = options.firstMatch(of: try Regex(#"<option value="([^"]*)" selected>"#))
            values[String(match.output[1].substring!)] = selected.map { String($0.output[1].substring!) } ?? ""
        }
        return values
    }

    static func attribute(_ name: String, in tag: String) -> String? {
        guard let range = tag.range(of: #" \#(name)=""#) else { return nil }
        return String(tag[range.upperBound...].prefix { $0 != "\"" })
    }

    @Test func theConsoleAdmitsAdminsOnlyAndTheStaticTokenMakesTheFirstAdminOnce() async throws {
        let test = try await Self.consoleBroker()
        try await Self.application(test).test(.router) { client in
            let anonymous = try await client.execute(uri: "/admin/apps", method: .get)
            #expect(anonymous.status == .ok)
            #expect(String(buffer: anonymous.body).contains("/admin/login?return=/admin/apps"))

            // alice signs in: no admin role yet, so the bootstrap form, not the console.
            var alice = try await Self.consoleSignIn(client, test)
            #expect(alice.landing.status == .forbidden)
            #expect(alice.html.contains("Make this account the first admin"))
            let refused = try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: alice.cookie])
            #expect(refused.status == .forbidden && !String(buffer: refused.body).contains("New app"))

            // A wrong token, and a right token without the CSRF token, are refused and grant nothing.
            let csrf = try #require(alice.csrf)
            let wrong = try await client.execute(
                uri: "/admin/bootstrap", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(["csrf": csrf, "adminToken": "not-the-token"]))
            )
            #expect(wrong.status == .unauthorized)
            let noCSRF = try await client.execute(
                uri: "/admin/bootstrap", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(["adminToken": Self.consoleToken])))
            #expect(noCSRF.status == .forbidden && String(buffer: noCSRF.body).contains("invalid_csrf_token"))
            #expect(try await test.broker.admin.admins().isEmpty)

            let bootstrapped = try await client.execute(
                uri: "/admin/bootstrap", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(["csrf": csrf, "adminToken": Self.consoleToken]))
            )
            #expect(bootstrapped.status == .seeOther)
            let apps = try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: alice.cookie])
            #expect(apps.status == .ok && String(buffer: apps.body).contains(#"href="/admin/apps/web""#))
            #expect(apps.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            #expect(try await test.broker.admin.admins().map(\.username) == ["alice"])

            // bob is not an admin, and the bootstrap is closed now, even with the token.
            let bob = try await Self.consoleSignIn(client, test, username: "bob", password: "tulip marble engine")
            #expect(bob.landing.status == .forbidden && !bob.html.contains("Make this account the first admin"))
            let late = try await client.execute(
                uri: "/admin/bootstrap", method: .post, headers: bob.headers,
                body: ByteBuffer(string: Self.encode(["csrf": try #require(bob.csrf), "adminToken": Self.consoleToken]))
            )
            #expect(late.status == .forbidden)
            #expect(try await test.broker.admin.admins().count == 1)

            // Taking alice's role away ends her console access at her next request.
            try await test.broker.admin.revokeAdmin(accountID: try await test.broker.admin.accountID(named: "alice"), by: AdminIdentity(name: "test"))
            let after = try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: alice.cookie])
            #expect(after.status == .ok && String(buffer: after.body).contains("Sign in to the admin console"))
            alice = try await Self.consoleSignIn(client, test)
            #expect(alice.landing.status == .forbidden)
        }
    }

    @Test func theNewAppFormRefusesScriptRedirectsAndOverlongNamesNextToTheField() async throws {
        let test = try await Self.consoleBroker()
        try await Self.application(test).test(.router) { client in
            let alice = try await Self.administratorSignIn(client, test)
            let page = try await client.execute(uri: "/admin/apps/new", method: .get, headers: [.cookie: alice.cookie])
            let form = try Self.formValues(String(buffer: page.body), action: "/admin/apps/new")
            for (field, value, id) in [
                ("redirectURIs", "javascript:alert(1)", "f-redirectURIs"), ("redirectURIs", "data:text/html,hi", "f-redirectURIs"),
                ("name", String(repeating: "W", count: 1_600), "f-name"),
            ] {
                var values = form
                values["id"] = "evil"
                values[field] = value
                let refused = try await client.execute(uri: "/admin/apps/new", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(values)))
                #expect(refused.status == .badRequest, "\(field)")
                let html = String(buffer: refused.body)
                #expect(html.contains(#"id="\#(id)-error""#), "\(field): the error is shown next to the field")
                #expect(html.contains("refused") || html.contains("at most 100 characters"), "\(field): the reason is shown")
            }
            #expect(try await test.store.app(id: "evil") == nil)
            // Long words wrap rather than break the layout (the sign-in pages carry the same rule).
            #expect(String(buffer: page.body).contains("overflow-wrap:anywhere"))
        }
    }

    @Test func thePolicyFormSavesASwitchAndShowsErrorsNextToTheField() async throws {
        let test = try await Self.consoleBroker()
        try await Self.application(test).test(.router) { client in
            let alice = try await Self.administratorSignIn(client, test)
            #expect(alice.landing.status == .seeOther)
            let page = try await client.execute(uri: "/admin/apps/web", method: .get, headers: [.cookie: alice.cookie])
            let html = String(buffer: page.body)
            var form = try Self.formValues(html, action: "/admin/apps/web/policy")
            // Every key of the policy is on the form.
            let stored = try await test.broker.admin.app(id: "web").policy
            let encoded = try JSONDecoder().decode([String: JSONValue].self, from: JSONEncoder().encode(stored))
            for (key, value) in encoded {
                if case .object(let inner) = value {
                    for innerKey in inner.keys { #expect(html.contains(#"name="policy.\#(key).\#(innerKey)""#), "policy.\(key).\(innerKey) is on the form") }
                } else if key != "identityProviders" && key != "authenticators" {
                    #expect(html.contains(#"name="policy.\#(key)""#), "policy.\(key) is on the form")
                }
            }
            #expect(html.contains(#"name="policy.secondFactor""#) && html.contains(#"name="policy.logout.backchannelLogoutURI""#))
            #expect(form["policy.identityProviders.local"] == "on" && form["policy.statelessAuthentication"] == nil)

            // The stateless switch is refused next to itself: no provider of this app (local only) can
            // sign in statelessly, so every such flow would be refused. Nothing is saved.
            var stateless = form
            stateless["policy.statelessAuthentication"] = "on"
            let impossible = try await client.execute(
                uri: "/admin/apps/web/policy", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(stateless)))
            #expect(impossible.status == .badRequest)
            let impossiblePage = String(buffer: impossible.body)
            #expect(impossiblePage.contains(#"id="f-policy-statelessAuthentication-error""#))
            #expect(
                impossiblePage.contains("none of this app&#39;s identity providers can sign in statelessly")
                    || impossiblePage.contains("none of this app's identity providers can sign in statelessly"))
            #expect(try await test.broker.admin.app(id: "web").policy == stored)

            // Without the CSRF token, or with another, nothing changes.
            form["policy.linkAccountsByVerifiedEmail"] = "on"
            var forged = form
            forged["csrf"] = "forged"
            for body in [form.filter { $0.key != "csrf" }, forged] {
                let refused = try await client.execute(uri: "/admin/apps/web/policy", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(body)))
                #expect(refused.status == .forbidden)
                #expect(try await test.broker.admin.app(id: "web").policy.linkAccountsByVerifiedEmail == false)
            }

            let saved = try await client.execute(uri: "/admin/apps/web/policy", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(form)))
            #expect(saved.status == .seeOther)
            let app = try await test.broker.admin.app(id: "web")
            #expect(app.policy.linkAccountsByVerifiedEmail == true && app.managedBy == .admin)
            // Nothing else moved: the form posted back what it showed.
            var expected = stored
            expected.linkAccountsByVerifiedEmail = true
            #expect(app.policy == expected)
            let event = try #require(try await test.broker.admin.audit(AuditQuery(type: "policy.updated")).first)
            let aliceID = try await test.broker.admin.accountID(named: "alice")
            #expect(event.details["admin"] == "alice" && event.details["adminAccount"] == aliceID)
            #expect(try await test.broker.admin.audit(AuditQuery(admin: "alice")).contains { $0.type == "policy.updated" })

            // A bad value: the same message as the admin API, next to its field; nothing saved.
            var bad = form
            bad["policy.lockout.maxFailedAttemptsPerFlow"] = "lots"
            bad["policy.accessTokenLifetime"] = "15m"
            let refused = try await client.execute(uri: "/admin/apps/web/policy", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(bad)))
            #expect(refused.status == .badRequest)
            let errorPage = String(buffer: refused.body)
            #expect(errorPage.contains(#"id="f-policy-lockout-maxFailedAttemptsPerFlow-error""#))
            #expect(errorPage.contains(#"aria-describedby="f-policy-lockout-maxFailedAttemptsPerFlow-error""#))
            #expect(errorPage.contains("invalid_request") && errorPage.contains(##"href="#f-policy-lockout-maxFailedAttemptsPerFlow""##))
            #expect(errorPage.contains(#"value="lots""#))
            // Keys the decoder did not reach after the bad value are not reported as unknown.
            #expect(!errorPage.contains("unknown key"))
            #expect(try await test.broker.admin.app(id: "web").policy == expected)

            // The console's own app follows admin.console alone: no admin can disable or loosen it.
            let console = try await client.execute(
                uri: "/admin/apps/gatehouse-console/policy", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(form)))
            #expect(console.status == .badRequest && String(buffer: console.body).contains("admin.console"))
            await #expect(throws: BrokerError.self) {
                try await test.broker.admin.updateApp(id: "gatehouse-console", changes: .object(["disabled": .bool(true)]), by: AdminIdentity(name: "test"))
            }
        }
    }

    @Test func dangerousActionsAskForAFreshSignInAndSignOutEndsTheBrokerSession() async throws {
        let test = try await Self.consoleBroker()
        try await Self.application(test).test(.router) { client in
            var alice = try await Self.administratorSignIn(client, test)
            test.clock.advance(by: 6 * 60)
            let confirm = try await client.execute(uri: "/admin/apps/other/delete", method: .get, headers: [.cookie: alice.cookie])
            #expect(String(buffer: confirm.body).contains(#"id="reauthenticate""#) && !String(buffer: confirm.body).contains(#"id="confirm""#))
            let csrf = try #require(alice.csrf ?? Self.hidden("csrf", in: String(buffer: confirm.body)))
            let stale = try await client.execute(
                uri: "/admin/apps/other/delete", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(["csrf": csrf])))
            #expect(stale.status == .unauthorized && String(buffer: stale.body).contains("reauthentication_required"))
            #expect(try await test.broker.store.app(id: "other") != nil)

            // Signing in again (prompt=login: the password once more) makes it recent.
            alice = try await Self.consoleSignIn(client, test, start: "/admin/reauthenticate?return=/admin/apps/other/delete")
            #expect(alice.landing.headers[.location] == "/admin/apps/other/delete")
            let fresh = try await client.execute(uri: "/admin/apps/other/delete", method: .get, headers: [.cookie: alice.cookie])
            let freshCSRF = try #require(Self.hidden("csrf", in: String(buffer: fresh.body)))
            let deleted = try await client.execute(
                uri: "/admin/apps/other/delete", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(["csrf": freshCSRF])))
            #expect(deleted.status == .seeOther)
            #expect(try await test.broker.store.app(id: "other") == nil)
            #expect(try await test.broker.admin.audit(AuditQuery(type: "app.deleted")).first?.details["admin"] == "alice")

            // A return address outside the console is not followed.
            let outside = try await Self.consoleSignIn(client, test, start: "/admin/login?return=https://evil.example/")
            #expect(outside.landing.headers[.location] == "/admin/")

            // A callback without this browser's sign-in cookie is refused.
            let begin = try await client.execute(uri: "/admin/login", method: .get)
            let started = try #require(begin.headers[.location])
            let state = try #require(Self.query(of: started)["state"])
            let forged = try await client.execute(uri: "/admin/callback?code=x&state=\(state)", method: .get)
            #expect(forged.status == .badRequest && forged.headers[values: .setCookie].allSatisfy { !$0.hasPrefix("gatehouse_console=") })

            // Sign-out: the console session ends and the browser goes on to end the broker session.
            let signOut = try await client.execute(
                uri: "/admin/logout", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(["csrf": freshCSRF])))
            #expect(signOut.status == .seeOther)
            let logout = Self.path(try #require(signOut.headers[.location]), issuer: test.broker.config.server.issuer)
            #expect(logout.hasPrefix("/oauth2/logout?") && logout.contains("id_token_hint="))
            let again = try await client.execute(uri: "/admin/apps", method: .get, headers: [.cookie: alice.cookie])
            #expect(String(buffer: again.body).contains("Sign in to the admin console"))
        }
    }

    @Test func theAppPageShowsTheWebhookRotatesItsSecretOnceAndReplaysDeadLetters() async throws {
        let test = try await Self.consoleBroker()
        try await Self.application(test).test(.router) { client in
            let alice = try await Self.administratorSignIn(client, test)
            _ = try await test.broker.admin.patchPolicy(id: "web", patch: ["webhook": ["url": "https://hooks.example/web"]], by: AdminIdentity(name: "test"))
            // A delivery that was given up.
            let now = test.clock.now
            try await test.store.enqueueOutbox(appID: "web", subject: "session:s1", kind: .backchannelLogout, payload: #"{"sid":"s1","sub":"a1"}"#, now: now)
            let item = try #require(try await test.store.dueOutboxItems(now: now, limit: 5).first { $0.kind == .backchannelLogout })
            #expect(try await test.store.leaseOutboxItem(id: item.id, until: now.addingTimeInterval(30), now: now, token: "t"))
            try await test.store.finishOutboxAttempt(id: item.id, token: "t", delivered: false, nextAttemptAt: nil, dead: true, error: "HTTP 503", now: now)

            let page = try await client.execute(uri: "/admin/apps/web", method: .get, headers: [.cookie: alice.cookie])
            let html = String(buffer: page.body)
            #expect(html.contains("https://hooks.example/web") && html.contains("HTTP 503") && html.contains("/admin/apps/web/dead-letters/\(item.id)/replay"))
            let csrf = try #require(Self.hidden("csrf", in: html))
            let replayed = try await client.execute(
                uri: "/admin/apps/web/dead-letters/\(item.id)/replay", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(["csrf": csrf]))
            )
            #expect(replayed.status == .seeOther && replayed.headers[.location]?.contains("notice=replayed") == true)
            #expect(try await test.store.dueOutboxItems(now: now, limit: 5).map(\.id).contains(item.id))
            // A replay without the form's token does nothing.
            let forged = try await client.execute(
                uri: "/admin/apps/web/dead-letters/replay", method: .post, headers: alice.headers, body: ByteBuffer(string: "csrf=wrong"))
            #expect(forged.status != .seeOther || forged.headers[.location]?.contains("notice=replayed") != true)

            // The webhook secret: made and shown once, audited.
            let rotated = try await client.execute(
                uri: "/admin/apps/web/webhook-secret", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(["csrf": csrf]))
            )
            #expect(rotated.status == .ok && String(buffer: rotated.body).contains("whsec_"))
            #expect(try await test.store.auditEvents(type: "webhook.secret_rotated", appID: "web", accountID: nil, since: nil, limit: 1).count == 1)
        }
    }

    @Test func aPendingSignInIsASealedCookieThatStoresNothingAndOpensOnlyUnaltered() async throws {
        let test = try await Self.consoleBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let before = try await test.store.pluginRecords(namespace: "gatehouse:console-sign-ins", keyPrefix: "", now: test.clock.now).count
            var cookies: [String] = []
            for _ in 0..<50 {
                let begin = try await client.execute(uri: "/admin/login", method: .get)
                #expect(begin.status == .seeOther)
                cookies.append(try #require(begin.headers[.setCookie]?.split(separator: ";").first.map(String.init)))
            }
            #expect(try await test.store.pluginRecords(namespace: "gatehouse:console-sign-ins", keyPrefix: "", now: test.clock.now).count == before)
            #expect(Set(cookies).count == 50)
            // The sealed value holds no readable state, nonce or verifier.
            let begin = try await client.execute(uri: "/admin/login", method: .get)
            let location = try #require(begin.headers[.location])
            let state = try #require(Self.query(of: location)["state"])
            let cookie = try #require(begin.headers[.setCookie]?.split(separator: ";").first.map(String.init))
            #expect(!cookie.contains(state))
            // Altered by one character, it does not open; after ten minutes, it has expired.
            let value = cookie.split(separator: "=", maxSplits: 1)[1]
            let altered = cookie.split(separator: "=", maxSplits: 1)[0] + "=" + value.dropLast() + (value.last == "A" ? "B" : "A")
            let tampered = try await client.execute(uri: "/admin/callback?code=x&state=\(state)", method: .get, headers: [.cookie: String(altered)])
            #expect(tampered.status == .badRequest)
            test.clock.advance(by: 601)
            let late = try await client.execute(uri: "/admin/callback?code=x&state=\(state)", method: .get, headers: [.cookie: cookie])
            #expect(late.status == .badRequest && String(buffer: late.body).contains("took too long"))
        }
    }

    @Test func returnAddressesStayInsideTheConsole() {
        #expect(AdminConsoleService.safeReturn("/admin/apps/web") == "/admin/apps/web")
        for unsafe in ["https://evil.example/", "//evil.example/admin/", "/admin//evil", "/admin/v1/apps", "/oauth2/token", "/admin/\\evil", nil] {
            #expect(AdminConsoleService.safeReturn(unsafe) == "/admin/")
        }
    }
}
