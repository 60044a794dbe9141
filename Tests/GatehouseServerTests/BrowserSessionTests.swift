import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import LocalPassword
import Logging
import NIOCore
import Synchronization
import Testing

/// Browser single sign-on over HTTP with a test clock: a session made at one app signs the person
/// in at another without pages, `prompt`/`max_age` rules, RP-initiated logout and what it revokes,
/// and back-channel delivery.
extension GatehouseServerTests {
    static let sessionYAML = """
        providers:
          - id: local
            type: local
            config: {bcryptCost: 4}
        apps:
          - id: web
            name: Web
            secret: ${WEB_SECRET}
            redirectURIs: [https://web.example/callback]
            policy:
              identityProviders: [local]
              session: {idleLifetime: 600, absoluteLifetime: 3600}
              logout: {postLogoutRedirectURIs: [https://web.example/bye]}
          - id: other
            name: Other
            secret: ${OTHER_SECRET}
            redirectURIs: [https://web.example/callback]
            policy:
              identityProviders: [local]
              consentRequired: true
              allowedScopes: [openid, profile, offline_access]
        """

    static func sessionBroker() async throws -> TestBroker {
        try await oidcBroker(yaml: sessionYAML)
    }

    /// Signs in through the pages; answers the redirect's query and the session cookie it set.
    static func signInWithSession(_ client: any TestClientProtocol, authorizeURI: String = authorizeQuery()) async throws -> (query: [String: String], cookie: String) {
        let page = try await openSignInPage(client, authorizeURI: authorizeURI)
        let answer = try await client.execute(
            uri: "/oauth2/authorize/answer", method: .post, headers: page.headers,
            body: ByteBuffer(string: encode(["flow": page.flow, "csrf": page.csrf, "username": "alice", "password": "correct horse battery"]))
        )
        #expect(answer.status == .seeOther)
        let setCookie = answer.headers[values: .setCookie].first { $0.hasPrefix("gatehouse_session=") } ?? ""
        // Development on loopback/http: no __Host- prefix and no Secure; always HttpOnly, Lax, Path=/.
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Lax") && setCookie.contains("Path=/") && !setCookie.contains("Max-Age"))
        return (query(of: try #require(answer.headers[.location])), try #require(setCookie.split(separator: ";").first.map(String.init)))
    }

    static func claims(of jwt: String) throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: try #require(Base64URL.decode(String(jwt.split(separator: ".")[1]))))
    }

    @Test func aSessionSignsInAtAnotherAppWithoutPagesAndLogoutEndsIt() async throws {
        let test = try await Self.sessionBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let (first, cookie) = try await Self.signInWithSession(client)
            let tokens = try await Self.exchange(client, code: try #require(first["code"])).body
            let idToken = try #require(tokens["id_token"]?.stringValue)
            let claims = try Self.claims(of: idToken)
            let sid = try #require(claims["sid"]?.stringValue)
            #expect(claims["acr"] == "urn:gatehouse:acr:1fa")
            let signedInAt = claims["auth_time"]

            // Another app, a minute later: straight back with a code; its ID token names the same session and sign-in time.
            test.clock.advance(by: 60)
            let sso = try await client.execute(uri: Self.authorizeQuery(client: "web", extra: ["state": "s-2"]), method: .get, headers: [.cookie: cookie])
            #expect(sso.status == .seeOther)
            let ssoQuery = Self.query(of: try #require(sso.headers[.location]))
            #expect(ssoQuery["state"] == "s-2")
            let ssoCode = try #require(ssoQuery["code"])
            let ssoTokens = try await Self.exchange(client, code: ssoCode).body
            let again = try Self.claims(of: try #require(ssoTokens["id_token"]?.stringValue))
            #expect(again["sid"] == .string(sid) && again["auth_time"] == signedInAt)

            // prompt=none: a code with the cookie, login_required without.
            let silent = try await client.execute(uri: Self.authorizeQuery(extra: ["prompt": "none"]), method: .get, headers: [.cookie: cookie])
            #expect(Self.query(of: try #require(silent.headers[.location]))["code"] != nil)
            let anonymous = try await client.execute(uri: Self.authorizeQuery(extra: ["prompt": "none"]), method: .get)
            #expect(Self.query(of: try #require(anonymous.headers[.location]))["error"] == "login_required")
            // max_age shorter than the sign-in's age, and prompt=login, show the page again.
            let stale = try await client.execute(uri: Self.authorizeQuery(extra: ["max_age": "30"]), method: .get, headers: [.cookie: cookie])
            #expect(stale.status == .ok)
            let staleSilent = try await client.execute(uri: Self.authorizeQuery(extra: ["max_age": "30", "prompt": "none"]), method: .get, headers: [.cookie: cookie])
            #expect(Self.query(of: try #require(staleSilent.headers[.location]))["error"] == "login_required")
            #expect(try await client.execute(uri: Self.authorizeQuery(extra: ["prompt": "login"]), method: .get, headers: [.cookie: cookie]).status == .ok)
            // A consent-requiring app: prompt=none answers consent_required; the page asks.
            let consent = try await client.execute(
                uri: Self.authorizeQuery(client: "other", extra: ["prompt": "none", "scope": "openid"]), method: .get, headers: [.cookie: cookie]
            )
            #expect(Self.query(of: try #require(consent.headers[.location]))["error"] == "consent_required")

            // Logout at the app with its hint: no confirmation, back to the registered URI with state.
            let logout = try await client.execute(
                uri: "/oauth2/logout?" + Self.encode(["id_token_hint": idToken, "post_logout_redirect_uri": "https://web.example/bye", "state": "bye-1"]),
                method: .get, headers: [.cookie: cookie]
            )
            #expect(logout.status == .seeOther)
            #expect(logout.headers[.location] == "https://web.example/bye?state=bye-1")
            #expect(logout.headers[values: .setCookie].contains { $0.hasPrefix("gatehouse_session=;") && $0.contains("Max-Age=0") })
            // The cookie replayed: no session. The session's refresh token is revoked.
            let replayed = try await client.execute(uri: Self.authorizeQuery(extra: ["prompt": "none"]), method: .get, headers: [.cookie: cookie])
            #expect(Self.query(of: try #require(replayed.headers[.location]))["error"] == "login_required")
            let refresh = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": try #require(tokens["refresh_token"]?.stringValue)])
            #expect(refresh.status == .badRequest && refresh.body["error"] == "invalid_grant")
            let ended = try await test.store.auditEvents(type: "session.ended", appID: nil, accountID: nil, since: nil, limit: 5)
            #expect(ended.first?.details["reason"] == "logout" && ended.first?.details["sid"] == sid)
        }
    }

    @Test func promptNoneRefusedByTheStartLimitAnswersTheErrorRedirectNotAPage() async throws {
        let yaml = Self.sessionYAML.replacingOccurrences(
            of: "      session: {idleLifetime: 600, absoluteLifetime: 3600}",
            with: "      session: {idleLifetime: 600, absoluteLifetime: 3600}\n      lockout: {maxFlowStartsPerIPPerMinute: 1}"
        )
        let test = try await Self.oidcBroker(yaml: yaml)
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let first = try await client.execute(uri: Self.authorizeQuery(extra: ["prompt": "none"]), method: .get)
            #expect(Self.query(of: try #require(first.headers[.location]))["error"] == "login_required")
            // Over the limit: still a redirect to the app, never a page.
            let limited = try await client.execute(uri: Self.authorizeQuery(extra: ["prompt": "none", "state": "s-9"]), method: .get)
            #expect(limited.status == .seeOther)
            let answer = Self.query(of: try #require(limited.headers[.location]))
            #expect(answer["error"] == "temporarily_unavailable" && answer["state"] == "s-9", "\(answer)")
            // Without prompt=none the limit is a page (429), as before.
            #expect(try await client.execute(uri: Self.authorizeQuery(), method: .get).status == .tooManyRequests)
        }
    }

    @Test func aSessionEndStoppedHalfWayNeverLeavesItsTokensRenewable() async throws {
        let test = try await Self.sessionBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let (query, _) = try await Self.signInWithSession(client)
            let tokens = try await Self.exchange(client, code: try #require(query["code"])).body
            let idToken = try #require(tokens["id_token"]?.stringValue)
            let sid = try #require(try Self.claims(of: idToken)["sid"]?.stringValue)
            // The session is marked ended, and the end stops there (its revocations never ran).
            #expect(try await test.store.endBrowserSession(id: sid, now: test.clock.now))
            let refresh = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": try #require(tokens["refresh_token"]?.stringValue)])
            #expect(refresh.status == .badRequest && refresh.body["error"] == "invalid_grant", "\(refresh.body)")
        }
    }

    @Test func singleSignOnNeverSkipsAPendingProfileConfirmation() async throws {
        let yaml = Self.sessionYAML.replacingOccurrences(of: "      consentRequired: true\n", with: "      confirmProfile: true\n")
        let test = try await Self.oidcBroker(yaml: yaml)
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let (_, cookie) = try await Self.signInWithSession(client)
            let account = try #require(try await test.store.accounts(matching: "alice", limit: 1, offset: 0).first)
            #expect(try await test.store.updateAccountProfile(id: account.id, profile: nil, pending: true))
            // At the app that asks for a confirmed profile, the session leads to the confirmation page, not a code.
            let sso = try await client.execute(uri: Self.authorizeQuery(client: "other", extra: ["scope": "openid"]), method: .get, headers: [.cookie: cookie])
            #expect(sso.status == .ok, "\(sso.status) \(sso.headers[.location] ?? "")")
            #expect(String(buffer: sso.body).contains("profile"))
            let silent = try await client.execute(
                uri: Self.authorizeQuery(client: "other", extra: ["scope": "openid", "prompt": "none"]), method: .get, headers: [.cookie: cookie])
            #expect(Self.query(of: try #require(silent.headers[.location]))["error"] == "interaction_required")
        }
    }

    @Test func revokingAConsentTakesBackTheTokensTheAppHoldsForThePersonOnly() async throws {
        let test = try await Self.sessionBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let (query, cookie) = try await Self.signInWithSession(client)
            let web = try await Self.exchange(client, code: try #require(query["code"])).body
            let webToken = try #require(web["access_token"]?.stringValue)

            // The third-party app asks; the person allows on the consent page.
            let consentPage = try await client.execute(
                uri: Self.authorizeQuery(client: "other", extra: ["scope": "openid offline_access"]), method: .get, headers: [.cookie: cookie]
            )
            #expect(consentPage.status == .ok)
            let html = String(buffer: consentPage.body)
            var headers = Self.form
            let flowCookie = consentPage.headers[values: .setCookie].first { $0.hasPrefix("gatehouse_browser=") }?.split(separator: ";").first.map(String.init)
            headers[.cookie] = ([cookie] + (flowCookie.map { [$0] } ?? [])).joined(separator: "; ")
            let allowed = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: headers,
                body: ByteBuffer(string: Self.encode(["flow": try #require(Self.hidden("flow", in: html)), "csrf": try #require(Self.hidden("csrf", in: html))]))
            )
            #expect(allowed.status == .seeOther)
            let location = try #require(allowed.headers[.location])
            let code = try #require(Self.query(of: location)["code"])
            let other = try await Self.exchange(client, code: code, id: "other", secret: Self.otherSecret).body
            let otherAccess = try #require(other["access_token"]?.stringValue)
            let otherRefresh = try #require(other["refresh_token"]?.stringValue)
            let rotated = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": otherRefresh], id: "other", secret: Self.otherSecret)
            #expect(rotated.status == .ok)
            let rotatedRefresh = try #require(rotated.body["refresh_token"]?.stringValue)

            // The app introspects its own tokens.
            func introspectAsOther(_ token: String) async throws -> JSONValue? {
                try await Self.introspect(client, token, id: "other", secret: Self.otherSecret)["active"]
            }
            #expect(try await introspectAsOther(otherAccess) == true)
            // The person revokes it with their first-party app's token.
            let bearer: HTTPFields = [.authorization: "Bearer \(webToken)"]
            let listed = try await client.execute(uri: "/v1/account/consents", method: .get, headers: bearer)
            #expect(String(buffer: listed.body).contains("\"other\""))
            #expect(try await client.execute(uri: "/v1/account/consents/other", method: .delete, headers: bearer).status == .noContent)

            // The app's refresh token and the access tokens issued with it stop working; the person's own app keeps going.
            let refused = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": rotatedRefresh], id: "other", secret: Self.otherSecret)
            #expect(refused.status == .badRequest && refused.body["error"] == "invalid_grant")
            #expect(try await introspectAsOther(otherAccess) == false)
            #expect(try await introspectAsOther(try #require(rotated.body["access_token"]?.stringValue)) == false)
            #expect(try await Self.introspect(client, webToken)["active"] == true)
            // An app the person never consented to (a first-party one) is 404, and nothing of it is revoked.
            #expect(try await client.execute(uri: "/v1/account/consents/web", method: .delete, headers: bearer).status == .notFound)
            let webRefresh = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": try #require(web["refresh_token"]?.stringValue)])
            #expect(webRefresh.status == .ok)
            let revoked = try await test.store.auditEvents(type: "consent.revoked", appID: "other", accountID: nil, since: nil, limit: 1)
            #expect(revoked.first?.details["revokedFamilies"] == "1")
            // Asking again shows the consent page again.
            let again = try await client.execute(
                uri: Self.authorizeQuery(client: "other", extra: ["scope": "openid", "prompt": "none"]), method: .get, headers: [.cookie: cookie]
            )
            #expect(Self.query(of: try #require(again.headers[.location]))["error"] == "consent_required")
        }
    }

    @Test func logoutRefusesUnregisteredRedirectsAndAsksWithoutAHint() async throws {
        let test = try await Self.sessionBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let (_, cookie) = try await Self.signInWithSession(client)
            // Not registered, a near miss, and a URI without a client: error pages, never a redirect.
            for parameters in [
                ["client_id": "web", "post_logout_redirect_uri": "https://evil.example/bye"],
                ["client_id": "web", "post_logout_redirect_uri": "https://web.example/bye/"],
                ["post_logout_redirect_uri": "https://web.example/bye"],
                ["id_token_hint": "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."],
            ] {
                let refused = try await client.execute(uri: "/oauth2/logout?" + Self.encode(parameters), method: .get, headers: [.cookie: cookie])
                #expect(refused.status == .badRequest && refused.headers[.location] == nil, "\(parameters)")
            }
            // An app's cross-site form POST arrives without the Lax cookie: it goes on as a GET, which carries it.
            let posted = try await client.execute(
                uri: "/oauth2/logout", method: .post, headers: Self.form, body: ByteBuffer(string: Self.encode(["client_id": "web", "state": "p s"]))
            )
            #expect(posted.status == .seeOther && posted.headers[.location] == test.broker.config.server.issuer + "/oauth2/logout?client_id=web&state=p%20s")
            // A consent-requiring app gets no tokens through the JSON flow API.
            let started = try await client.execute(
                uri: "/v1/flows", method: .post,
                headers: [.contentType: "application/json", .authorization: "Basic " + Data("other:\(Self.otherSecret)".utf8).base64EncodedString()],
                body: Self.json(#"{"app": "other", "provider": "local"}"#)
            )
            let startedBody = try Self.object(started)
            #expect(started.status == .forbidden && startedBody["error"] == "unauthorized_client")
            // No hint: a confirmation page, whose form needs the cookie-derived CSRF token.
            let asked = try await client.execute(
                uri: "/oauth2/logout?" + Self.encode(["client_id": "web", "post_logout_redirect_uri": "https://web.example/bye", "state": "x"]),
                method: .get, headers: [.cookie: cookie]
            )
            #expect(asked.status == .ok)
            let html = String(buffer: asked.body)
            let csrf = try #require(Self.hidden("csrf", in: html))
            var headers = Self.form
            headers[.cookie] = cookie
            let forged = try await client.execute(
                uri: "/oauth2/logout/confirm", method: .post, headers: headers,
                body: ByteBuffer(string: Self.encode(["client_id": "web", "csrf": "forged", "confirm": "1"]))
            )
            #expect(forged.status == .forbidden)
            let confirmed = try await client.execute(
                uri: "/oauth2/logout/confirm", method: .post, headers: headers,
                body: ByteBuffer(
                    string: Self.encode(["client_id": "web", "post_logout_redirect_uri": "https://web.example/bye", "state": "x", "csrf": csrf, "confirm": "1"]))
            )
            #expect(confirmed.status == .seeOther && confirmed.headers[.location] == "https://web.example/bye?state=x")
            let discovery = try Self.object(try await client.execute(uri: "/.well-known/openid-configuration", method: .get))
            #expect(discovery["end_session_endpoint"] == .string(test.broker.config.server.issuer + "/oauth2/logout"))
            #expect(discovery["backchannel_logout_supported"] == true && discovery["backchannel_logout_session_supported"] == true)
        }
    }

    /// Records back-channel deliveries; answers 503 for the first `failures` requests.
    final class RecordingHTTP: OutboundHTTP, @unchecked Sendable {
        let requests = Mutex<[OutboundRequest]>([])
        let failures: Int
        init(failures: Int) { self.failures = failures }
        func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse {
            let count = requests.withLock {
                $0.append(request); return $0.count
            }
            return OutboundResponse(status: count <= failures ? 503 : 200, body: Data())
        }
    }

    /// A broker whose `web` app has a back-channel logout URI, sending through `http`, with short
    /// retry delays; and a session of alice's at `web`, stored.
    static func backchannelBroker(http: any OutboundHTTP) async throws -> (TestBroker, BrowserSession) {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        let yaml =
            sessionYAML.replacingOccurrences(
                of: "      logout: {postLogoutRedirectURIs: [https://web.example/bye]}",
                with: "      logout: {postLogoutRedirectURIs: [https://web.example/bye], backchannelLogoutURI: https://web.example/backchannel}"
            ) + "\nevents:\n  logoutRetryDelays: [1, 2, 3]\n"
        let test = try await TestBroker.make(yaml: yaml, registry: registry, environment: ["WEB_SECRET": webSecret, "OTHER_SECRET": otherSecret], http: http)
        let now = test.clock.now
        let account = try await test.store.linkIdentity(ExternalIdentity(providerID: "local", subject: "alice", username: "alice"), now: now).account
        let session = BrowserSession(
            id: "sid-1", cookieDigest: "d", accountID: account.id, providers: ["local"], factors: [], methods: ["pwd"], subject: "s", username: "alice",
            authTime: now, createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(600)
        )
        try await test.store.insertBrowserSession(session)
        try await test.store.recordBrowserSessionUse(id: session.id, appID: "web", now: now)
        return (test, try #require(try await test.store.browserSession(id: session.id)))
    }

    @Test func backChannelLogoutTokensAreRetriedFromTheOutboxAndCarrySidWithoutNonce() async throws {
        let http = RecordingHTTP(failures: 2)
        let (test, session) = try await Self.backchannelBroker(http: http)
        defer { test.temporary.remove() }
        #expect(try await test.broker.oauth.sessions.end(session, reason: "logout", wait: true))
        // The first attempt failed (503): the token waits in the store, and goes after 1 s, then 2 s.
        #expect(http.requests.withLock { $0.count } == 1)
        #expect(try await test.store.dueOutboxItems(now: test.clock.now, limit: 10).isEmpty)
        test.clock.advance(by: 1)
        #expect(await test.broker.oauth.events.runOnce() == 1)
        test.clock.advance(by: 1)
        #expect(await test.broker.oauth.events.runOnce() == 0)
        test.clock.advance(by: 1)
        #expect(await test.broker.oauth.events.runOnce() == 1)
        let sent = http.requests.withLock { $0 }
        #expect(sent.count == 3)
        let body = String(decoding: try #require(sent.last?.body), as: UTF8.self)
        #expect(sent.last?.url == "https://web.example/backchannel" && body.hasPrefix("logout_token="))
        let token = try #require(URLComponents(string: "?" + body)?.queryItems?.first?.value)
        let header = try JSONDecoder().decode([String: JSONValue].self, from: try #require(Base64URL.decode(String(token.split(separator: ".")[0]))))
        #expect(header["typ"] == "logout+jwt" && header["alg"] == "RS256")
        let claims = try Self.claims(of: token)
        #expect(
            claims["sid"] == "sid-1" && claims["sub"] == .string(session.accountID) && claims["aud"] == "web"
                && claims["iss"] == .string(test.broker.config.server.issuer))
        #expect(claims["nonce"] == nil && claims["jti"] != nil)
        #expect(claims["events"] == .object(["http://schemas.openid.net/event/backchannel-logout": .object([:])]))
        let delivered = try await test.store.auditEvents(type: "logout.backchannel_delivered", appID: "web", accountID: nil, since: nil, limit: 1)
        #expect(delivered.first?.details["attempts"] == "3" && delivered.first?.details["sid"] == "sid-1")
        // Delivered: never sent again.
        test.clock.advance(by: 60)
        #expect(await test.broker.oauth.events.runOnce() == 0)
    }

    @Test func aBackChannelLogoutTokenTheAppRefusesIsNotSentAgainAndIsADeadLetter() async throws {
        let refusing = RefusingHTTP()
        let (test, session) = try await Self.backchannelBroker(http: refusing)
        defer { test.temporary.remove() }
        #expect(try await test.broker.oauth.sessions.end(session, reason: "logout", wait: true))
        test.clock.advance(by: 10)
        #expect(await test.broker.oauth.events.runOnce() == 0)
        #expect(refusing.count.withLock { $0 } == 1)
        let failed = try await test.store.auditEvents(type: "logout.backchannel_failed", appID: "web", accountID: nil, since: nil, limit: 1)
        #expect(failed.first?.details["error"] == "HTTP 400")
        let dead = try await test.broker.admin.deadLetters(id: "web")
        #expect(dead.count == 1 && dead.first?.kind == "backchannel_logout")
    }

    final class RefusingHTTP: OutboundHTTP, @unchecked Sendable {
        let count = Mutex(0)
        func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse {
            count.withLock { $0 += 1 }
            return OutboundResponse(status: 400, body: Data())
        }
    }
}
