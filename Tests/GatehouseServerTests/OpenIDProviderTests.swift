import Crypto
import _CryptoExtras
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import LocalPassword
import NIOCore
import Testing

/// The OpenID Provider endpoints, driven over HTTP with a test clock: authorize pages, code exchange,
/// refresh rotation, revocation, introspection, userinfo, deregistration and key rotation.
extension GatehouseServerTests {
    static let webSecret = "web-secret-web-secret-web-secret-0001"
    static let otherSecret = "other-secret-other-secret-other-0002"
    static let callback = "https://web.example/callback"
    static let verifier = "verifier-0123456789-0123456789-0123456789-abcdef"

    static let oidcYAML = """
        providers:
          - id: local
            type: local
            config: {bcryptCost: 4}
          - id: backup
            type: local
            config: {bcryptCost: 4}
        apps:
          - id: web
            name: Web
            secret: ${WEB_SECRET}
            redirectURIs: [https://web.example/callback]
            policy:
              identityProviders: [local]
              selfRegistration: true
          - id: other
            secret: ${OTHER_SECRET}
            redirectURIs: [https://other.example/callback]
            policy:
              identityProviders: [local]
              clientCredentialsGrant: true
              allowedScopes: [openid, reports.read]
          - id: multi
            redirectURIs: [https://multi.example/callback]
            policy:
              identityProviders: [local, backup]
          - id: modern
            redirectURIs: [https://modern.example/callback]
            policy:
              identityProviders: [local]
              idTokenSigningAlg: ES256
        """

    /// A broker with the OIDC apps (or those of `base`) and a user `alice` in the `local` provider.
    static func oidcBroker(adminToken: String? = nil, yaml base: String = oidcYAML) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        let yaml = adminToken.map { base + "\nadmin:\n  tokens:\n    - {name: default, token: \($0)}\n" } ?? base
        let test = try await TestBroker.make(yaml: yaml, registry: registry, environment: ["WEB_SECRET": webSecret, "OTHER_SECRET": otherSecret])
        let provider = try #require(test.broker.plugins.passwordKeepers["local"])
        _ = try await provider.addUser(username: "alice", password: "correct horse battery", policy: PasswordPolicy())
        return test
    }

    /// Another broker node on `test`'s store (the oidc config).
    static func secondNode(of test: TestBroker, clock: TestClock) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        return try await TestBroker.make(
            yaml: oidcYAML, registry: registry, environment: ["WEB_SECRET": webSecret, "OTHER_SECRET": otherSecret], temporary: test.temporary, clock: clock
        )
    }

    static func basic(_ id: String, _ secret: String) -> HTTPFields {
        [.authorization: "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString(), .contentType: "application/x-www-form-urlencoded"]
    }

    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    static func encode(_ parameters: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return parameters.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
    }

    static func authorizeQuery(client: String = "web", redirect: String = callback, extra: [String: String] = [:]) -> String {
        var parameters = [
            "client_id": client, "redirect_uri": redirect, "response_type": "code", "scope": "openid profile", "state": "s-123", "nonce": "n-456",
            "code_challenge": PKCE.challenge(for: verifier), "code_challenge_method": "S256",
        ]
        parameters.merge(extra) { _, new in new }
        return "/oauth2/authorize?" + encode(parameters.filter { !$0.value.isEmpty })
    }

    static func hidden(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: #"name="\#(name)" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    static func query(of location: String) -> [String: String] {
        let items = URLComponents(string: location)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    /// A sign-in page as a browser holds it: the response, form headers carrying its cookie, and the
    /// hidden flow and CSRF fields.
    struct SignInPage {
        var response: TestResponse
        var html: String
        var headers: HTTPFields
        var flow: String
        var csrf: String
    }

    static func openSignInPage(_ client: any TestClientProtocol, authorizeURI: String = authorizeQuery()) async throws -> SignInPage {
        let response = try await client.execute(uri: authorizeURI, method: .get)
        let html = String(buffer: response.body)
        var headers = form
        headers[.cookie] = try #require(response.headers[.setCookie]?.split(separator: ";").first.map(String.init))
        return SignInPage(response: response, html: html, headers: headers, flow: try #require(hidden("flow", in: html)), csrf: try #require(hidden("csrf", in: html)))
    }

    /// Signs in through the pages like a browser and returns the redirect's query.
    static func browserSignIn(_ client: any TestClientProtocol, authorizeURI: String = authorizeQuery(), password: String = "correct horse battery") async throws
        -> [String: String]
    {
        let page = try await openSignInPage(client, authorizeURI: authorizeURI)
        #expect(page.response.status == .ok)
        let answer = try await client.execute(
            uri: "/oauth2/authorize/answer", method: .post, headers: page.headers,
            body: ByteBuffer(string: encode(["flow": page.flow, "csrf": page.csrf, "username": "alice", "password": password]))
        )
        #expect(answer.status == .seeOther)
        return query(of: try #require(answer.headers[.location]))
    }

    static func token(_ client: any TestClientProtocol, _ parameters: [String: String], id: String = "web", secret: String = webSecret) async throws -> (
        status: HTTPResponse.Status, body: [String: JSONValue]
    ) {
        let response = try await client.execute(uri: "/oauth2/token", method: .post, headers: basic(id, secret), body: ByteBuffer(string: encode(parameters)))
        return (response.status, try object(response))
    }

    static func exchange(_ client: any TestClientProtocol, code: String, verifier: String = verifier, id: String = "web", secret: String = webSecret) async throws -> (
        status: HTTPResponse.Status, body: [String: JSONValue]
    ) {
        try await token(client, ["grant_type": "authorization_code", "code": code, "redirect_uri": callback, "code_verifier": verifier], id: id, secret: secret)
    }

    /// Signs in through the pages and exchanges the code: the token answer.
    static func signedInTokens(_ client: any TestClientProtocol) async throws -> [String: JSONValue] {
        let code = try #require(try await browserSignIn(client)["code"])
        return try await exchange(client, code: code).body
    }

    static func introspect(_ client: any TestClientProtocol, _ token: String, id: String = "web", secret: String = webSecret) async throws -> [String: JSONValue] {
        try object(try await client.execute(uri: "/oauth2/introspect", method: .post, headers: basic(id, secret), body: ByteBuffer(string: encode(["token": token]))))
    }

    @Test func signsInThroughThePagesAndExchangesTheCode() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let redirect = try await Self.browserSignIn(client)
            #expect(redirect["state"] == "s-123")
            #expect(redirect["iss"] == test.broker.config.server.issuer)
            let code = try #require(redirect["code"])
            let (status, tokens) = try await Self.exchange(client, code: code)
            #expect(status == .ok)
            let idToken = try #require(tokens["id_token"]?.stringValue)
            let accessToken = try #require(tokens["access_token"]?.stringValue)
            let claims = try JSONDecoder().decode([String: JSONValue].self, from: try #require(Base64URL.decode(String(idToken.split(separator: ".")[1]))))
            #expect(claims["nonce"] == "n-456")
            #expect(claims["aud"] == "web")
            #expect(claims["amr"] == ["pwd", "local"])
            #expect(claims["preferred_username"] == "alice")
            #expect(claims["at_hash"] == .string(IDTokenClaims.hash(accessToken)))
            #expect(claims["auth_time"] != nil)
            let userinfo = try Self.object(try await client.execute(uri: "/oauth2/userinfo", method: .get, headers: [.authorization: "Bearer \(accessToken)"]))
            #expect(userinfo["sub"] == claims["sub"])
            #expect(userinfo["preferred_username"] == "alice")
        }
    }

    @Test func refusesBadAuthorizationRequests() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            // Not redirected: unknown client, unregistered or near-miss redirect URIs.
            for query in [
                Self.authorizeQuery(client: "nope"), Self.authorizeQuery(redirect: "https://web.example/callback/"),
                Self.authorizeQuery(redirect: "https://evil.example/callback"), Self.authorizeQuery(redirect: "https://web.example/callback?x=1"),
            ] {
                let page = try await client.execute(uri: query, method: .get)
                #expect(page.status == .badRequest)
                #expect(page.headers[.location] == nil)
                #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            }
            // Redirected with an OAuth error and the state.
            for (extra, error) in [
                (["code_challenge": ""], "invalid_request"), (["code_challenge_method": "plain"], "invalid_request"),
                (["code_challenge_method": ""], "invalid_request"), (["response_type": "token"], "unsupported_response_type"),
                (["scope": "openid admin"], "invalid_scope"), (["prompt": "none"], "login_required"), (["request": "eyJ"], "invalid_request_object"),
            ] {
                let response = try await client.execute(uri: Self.authorizeQuery(extra: extra), method: .get)
                #expect(response.status == .seeOther)
                let redirect = Self.query(of: try #require(response.headers[.location]))
                #expect(redirect["error"] == error, "\(extra)")
                #expect(redirect["state"] == "s-123")
            }
            let duplicated = try await client.execute(uri: Self.authorizeQuery() + "&client_id=web", method: .get)
            #expect(duplicated.status == .badRequest)
        }
    }

    @Test func formsOnlyAnswerToTheirOwnBrowser() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let page = try await Self.openSignInPage(client)
            let (flow, csrf, headers) = (page.flow, page.csrf, page.headers)
            #expect(page.response.headers[.setCookie]?.contains("HttpOnly") == true)
            #expect(page.response.headers[.setCookie]?.contains("SameSite=Lax") == true)
            #expect(page.response.headers[.init("Content-Security-Policy")!]?.contains("default-src 'none'") == true)
            let body = ByteBuffer(string: Self.encode(["flow": flow, "csrf": csrf, "username": "alice", "password": "correct horse battery"]))
            // No cookie: refused, no redirect.
            let noCookie = try await client.execute(uri: "/oauth2/authorize/answer", method: .post, headers: Self.form, body: body)
            #expect(noCookie.status == .notFound)
            #expect(noCookie.headers[.location] == nil)
            // Right cookie, wrong CSRF token: refused.
            let badCSRF = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: headers,
                body: ByteBuffer(
                    string: Self.encode([
                        "flow": flow, "csrf": (csrf.first == "x" ? "y" : "x") + csrf.dropFirst(), "username": "alice", "password": "correct horse battery",
                    ]))
            )
            #expect(badCSRF.headers[.location] == nil)
            // The JSON flow API cannot drive a browser flow either.
            let json = try await client.execute(
                uri: "/v1/flows/\(flow)", method: .post, body: Self.json(#"{"answer":{"username":"alice","password":"correct horse battery"}}"#))
            #expect(json.status == .notFound)
            // Wrong password: the page again with the error, then the right one works.
            let wrong = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: headers,
                body: ByteBuffer(string: Self.encode(["flow": flow, "csrf": csrf, "username": "alice", "password": "nope nope nope"]))
            )
            #expect(wrong.status == .badRequest)
            #expect(String(buffer: wrong.body).contains("Wrong username or password."))
            let right = try await client.execute(uri: "/oauth2/authorize/answer", method: .post, headers: headers, body: body)
            #expect(right.status == .seeOther)
        }
    }

    @Test func chooserListsTheAllowedProvidersAndCancelTellsTheApp() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let page = try await Self.openSignInPage(client, authorizeURI: Self.authorizeQuery(client: "multi", redirect: "https://multi.example/callback"))
            let (flow, csrf, headers) = (page.flow, page.csrf, page.headers)
            #expect(page.html.contains(#"name="provider" value="local""#))
            #expect(page.html.contains(#"name="provider" value="backup""#))
            let chosen = try await client.execute(
                uri: "/oauth2/authorize/provider", method: .post, headers: headers,
                body: ByteBuffer(string: Self.encode(["flow": flow, "csrf": csrf, "provider": "backup"]))
            )
            #expect(String(buffer: chosen.body).contains(#"id="password""#))
            let cancelled = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: headers, body: ByteBuffer(string: Self.encode(["flow": flow, "csrf": csrf, "cancel": "1"]))
            )
            #expect(Self.query(of: try #require(cancelled.headers[.location]))["error"] == "access_denied")
        }
    }

    @Test func codeIsSingleUseBoundAndShortLived() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            // Wrong verifier, wrong redirect URI, another client: refused and the code stays usable.
            let code = try #require(try await Self.browserSignIn(client)["code"])
            #expect(try await Self.exchange(client, code: code, verifier: Self.verifier + "x").body["error"] == "invalid_grant")
            #expect(
                try await Self.token(
                    client, ["grant_type": "authorization_code", "code": code, "redirect_uri": "https://web.example/other", "code_verifier": Self.verifier]
                ).body["error"] == "invalid_grant"
            )
            #expect(try await Self.exchange(client, code: code, id: "other", secret: Self.otherSecret).body["error"] == "invalid_grant")
            let first = try await Self.exchange(client, code: code)
            #expect(first.status == .ok)
            // Reuse: refused, and what the first exchange issued is revoked.
            let reuse = try await Self.exchange(client, code: code)
            #expect(reuse.body["error"] == "invalid_grant")
            #expect(try await Self.introspect(client, first.body["access_token"]!.stringValue!)["active"] == false)
            let refresh = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": first.body["refresh_token"]!.stringValue!])
            #expect(refresh.body["error"] == "invalid_grant")

            // Expired: a code is good for 60 seconds.
            let late = try #require(try await Self.browserSignIn(client)["code"])
            test.clock.advance(by: 61)
            #expect(try await Self.exchange(client, code: late).body["error"] == "invalid_grant")
        }
    }

    @Test func refreshRotatesAndReuseRevokesTheFamily() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let first = try await Self.signedInTokens(client)
            let r1 = try #require(first["refresh_token"]?.stringValue)
            let second = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": r1])
            #expect(second.status == .ok)
            let r2 = try #require(second.body["refresh_token"]?.stringValue)
            #expect(r2 != r1)
            #expect(second.body["id_token"] != nil)
            // Another app cannot use it.
            #expect(
                try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": r2], id: "other", secret: Self.otherSecret).body["error"] == "invalid_grant"
            )
            // Within the app's reuse grace (5 s by default), r1 again is a client whose answer was lost:
            // it gets the same successor (and a new access token), and nothing is revoked.
            let retried = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": r1])
            #expect(retried.status == .ok && retried.body["refresh_token"]?.stringValue == r2)
            #expect(retried.body["access_token"] != second.body["access_token"])
            // After the grace, reusing r1 revokes the family: r2 dies too.
            test.clock.advance(by: 6)
            #expect(try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": r1]).body["error"] == "invalid_grant")
            #expect(try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": r2]).body["error"] == "invalid_grant")
            let events = try await test.store.auditEvents(type: "token.reuse_detected", appID: "web", accountID: nil, since: nil, limit: 5)
            #expect(events.count == 1)
        }
    }

    @Test func theReuseGraceAnswersTheSameSuccessorOnAnyNodeButNeverAcrossARevocationOrAUsedSuccessor() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        let other = try await Self.secondNode(of: test, clock: test.clock)
        let client = ClientCredentials(clientID: "web", secret: Self.webSecret)
        func signIn() async throws -> String {
            try #require(
                try await test.signIn(FlowRequest(appID: "web", providerID: "local"), answer: ["username": "alice", "password": "correct horse battery"], client: client)
                    .tokens.refreshToken)
        }
        func refresh(_ token: String, at node: TestBroker) async throws -> IssuedTokens {
            try await node.broker.oauth.token(try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": token], basic: client))
        }
        // Rotated on one node; the lost answer's retry reaches another: the same successor.
        let r1 = try await signIn()
        let r2 = try #require(try await refresh(r1, at: test).refreshToken)
        test.clock.advance(by: 4)
        #expect(try await refresh(r1, at: other).refreshToken == r2)
        // Once the successor itself was used, the old token is a reuse again, still within the grace:
        // the family is revoked, the newest token with it.
        let r3 = try #require(try await refresh(r2, at: other).refreshToken)
        #expect(await thrownError { _ = try await refresh(r1, at: test) }?.code == .invalidGrant)
        #expect(await thrownError { _ = try await refresh(r3, at: other) }?.code == .invalidGrant)

        // Never across a revocation: a family revoked (RFC 7009) refuses the retry.
        let s1 = try await signIn()
        let s2 = try #require(try await refresh(s1, at: test).refreshToken)
        try await test.broker.oauth.revoke(token: s2, client: client)
        #expect(await thrownError { _ = try await refresh(s1, at: other) }?.code == .invalidGrant)

        // A strict app (refreshReuseGrace: 0) revokes at the first reuse.
        _ = try await test.broker.admin.patchPolicy(id: "web", patch: ["refreshReuseGrace": 0], by: AdminIdentity(name: "ops"))
        test.clock.advance(by: AppCache.lifetime + 1)
        let t1 = try await signIn()
        let t2 = try #require(try await refresh(t1, at: test).refreshToken)
        #expect(await thrownError { _ = try await refresh(t1, at: test) }?.code == .invalidGrant)
        #expect(await thrownError { _ = try await refresh(t2, at: test) }?.code == .invalidGrant, "the family is revoked")
    }

    @Test func clientAuthenticationAndClientCredentials() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let wrong = try await client.execute(
                uri: "/oauth2/token", method: .post, headers: Self.basic("other", "not-the-secret"), body: ByteBuffer(string: "grant_type=client_credentials")
            )
            #expect(wrong.status == .unauthorized)
            #expect(try Self.object(wrong)["error"] == "invalid_client")
            let post = try await client.execute(
                uri: "/oauth2/token", method: .post, headers: Self.form,
                body: ByteBuffer(
                    string: Self.encode(["grant_type": "client_credentials", "client_id": "other", "client_secret": Self.otherSecret, "scope": "reports.read"]))
            )
            #expect(post.status == .ok)
            let tokens = try Self.object(post)
            #expect(tokens["refresh_token"] == nil)
            #expect(tokens["id_token"] == nil)
            #expect(tokens["scope"] == "reports.read")
            let claims = try await test.broker.keyring.verify(tokens["access_token"]!.stringValue!)
            #expect(claims.sub.value == "other")
            #expect(try await Self.token(client, ["grant_type": "client_credentials"]).body["error"] == "unauthorized_client")
            #expect(
                try await Self.token(client, ["grant_type": "client_credentials", "scope": "openid"], id: "other", secret: Self.otherSecret).body["error"]
                    == "invalid_scope")
            #expect(try await Self.token(client, ["grant_type": "password"]).body["error"] == "unsupported_grant_type")
            let json = try await client.execute(
                uri: "/oauth2/token", method: .post, headers: [.authorization: Self.basic("web", Self.webSecret)[.authorization]!], body: Self.json("{}"))
            #expect(try Self.object(json)["error"] == "invalid_request")
        }
    }

    @Test func introspectionRevocationAndTamperedTokens() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let tokens = try await Self.signedInTokens(client)
            let access = try #require(tokens["access_token"]?.stringValue)
            let active = try await Self.introspect(client, access)
            #expect(active["active"] == true)
            #expect(active["client_id"] == "web")
            #expect(active["stateless"] == false)
            var parts = access.split(separator: ".").map(String.init)
            parts[1] = String(parts[1].dropLast()) + (parts[1].last == "A" ? "B" : "A")
            let tampered = parts.joined(separator: ".")
            #expect(try await Self.introspect(client, tampered)["active"] == false)
            #expect(try await client.execute(uri: "/oauth2/userinfo", method: .get, headers: [.authorization: "Bearer \(tampered)"]).status == .unauthorized)
            // An ID token is not an access token.
            #expect(try await Self.introspect(client, tokens["id_token"]!.stringValue!)["active"] == false)
            // Public clients cannot introspect.
            let publicClient = try await client.execute(
                uri: "/oauth2/introspect", method: .post, headers: Self.form, body: ByteBuffer(string: Self.encode(["token": access, "client_id": "multi"]))
            )
            #expect(publicClient.status == .unauthorized)
            // Revocation by another app changes nothing; by the owner it does.
            let otherRevoke = try await client.execute(
                uri: "/oauth2/revoke", method: .post, headers: Self.basic("other", Self.otherSecret), body: ByteBuffer(string: Self.encode(["token": access]))
            )
            #expect(otherRevoke.status == .ok)
            #expect(try await Self.introspect(client, access)["active"] == true)
            let revoke = try await client.execute(
                uri: "/oauth2/revoke", method: .post, headers: Self.basic("web", Self.webSecret), body: ByteBuffer(string: Self.encode(["token": access])))
            #expect(revoke.status == .ok)
            #expect(try await Self.introspect(client, access)["active"] == false)
            // Expired tokens are inactive.
            let fresh = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]!.stringValue!]).body
            test.clock.advance(by: 901)
            #expect(try await Self.introspect(client, fresh["access_token"]!.stringValue!)["active"] == false)
        }
    }

    @Test func revokingARefreshTokenEndsEveryAccessTokenIssuedFromItsGrant() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let tokens = try await Self.signedInTokens(client)
            let first = try #require(tokens["access_token"]?.stringValue)
            let renewed = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]!.stringValue!]).body
            let second = try #require(renewed["access_token"]?.stringValue)
            let refresh = try #require(renewed["refresh_token"]?.stringValue)
            #expect(try await Self.introspect(client, first)["active"] == true)
            // RFC 7009 section 2.1: revoking a refresh token may (here: does) end the access tokens of its grant.
            let revoke = try await client.execute(
                uri: "/oauth2/revoke", method: .post, headers: Self.basic("web", Self.webSecret),
                body: ByteBuffer(string: Self.encode(["token": refresh, "token_type_hint": "refresh_token"]))
            )
            #expect(revoke.status == .ok)
            for access in [first, second] {
                #expect(try await Self.introspect(client, access)["active"] == false)
                #expect(try await client.execute(uri: "/oauth2/userinfo", method: .get, headers: [.authorization: "Bearer \(access)"]).status == .unauthorized)
            }
            let refused = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": refresh])
            #expect(refused.status == .badRequest && refused.body["error"] == "invalid_grant")
        }
    }

    @Test func deregistrationDeletesTheAccountAndDeactivatesItsTokens() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let tokens = try await Self.signedInTokens(client)
            let access = try #require(tokens["access_token"]?.stringValue)
            // A sign-in older than 15 minutes is not enough to delete the account.
            test.clock.advance(by: 16 * 60)
            let old = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]!.stringValue!]).body
            let stale = try await client.execute(uri: "/v1/account", method: .delete, headers: [.authorization: "Bearer \(old["access_token"]!.stringValue!)"])
            #expect(stale.status == .forbidden)
            #expect(try Self.object(stale)["error"] == "login_required")
            test.clock.advance(by: -16 * 60)
            let deleted = try await client.execute(uri: "/v1/account", method: .delete, headers: [.authorization: "Bearer \(access)"])
            #expect(deleted.status == .noContent)
            #expect(try await Self.introspect(client, access)["active"] == false)
            #expect(try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": old["refresh_token"]!.stringValue!]).body["error"] == "invalid_grant")
            #expect(try await test.store.count(table: .accounts) == 0)
            #expect(try await test.store.count(table: .identityLinks) == 0)
            #expect(try await test.store.count(table: .refreshTokens) == 0)
            // The password the broker kept is gone too: alice cannot sign in again.
            let page = try await Self.openSignInPage(client)
            let answer = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: page.headers,
                body: ByteBuffer(string: Self.encode(["flow": page.flow, "csrf": page.csrf, "username": "alice", "password": "correct horse battery"]))
            )
            #expect(answer.status == .badRequest)
            #expect(try await test.store.auditEvents(type: "account.deregistered", appID: nil, accountID: nil, since: nil, limit: 5).count == 1)
        }
    }

    @Test func keyRotationKeepsOldTokensValidUntilTheyExpire() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        let keyring = test.broker.keyring
        let before = try await test.signIn(
            FlowRequest(appID: "web", providerID: "local"), answer: ["username": "alice", "password": "correct horse battery"],
            client: ClientCredentials(clientID: "web", secret: Self.webSecret))
        let oldKids = Set(keyring.keySet().keys.map(\.kid))
        #expect(oldKids.count == 2)
        let newKeys = try await keyring.rotate()
        // One new key per algorithm, the access-token algorithm's first.
        #expect(newKeys.map(\.algorithm) == [.es256, .rs256])
        let newKey = newKeys[0]
        #expect(oldKids.isDisjoint(with: newKeys.map(\.kid)))
        #expect(Set(keyring.keySet().keys.map(\.kid)) == oldKids.union(newKeys.map(\.kid)))
        // The old token still verifies. The new key is published at once but signs only once every
        // node has had time to publish it: until then the old key signs.
        _ = try await keyring.verify(before.tokens.accessToken)
        func signingKid() async throws -> String? {
            let after = try await test.signIn(
                FlowRequest(appID: "web", providerID: "local"), answer: ["username": "alice", "password": "correct horse battery"],
                client: ClientCredentials(clientID: "web", secret: Self.webSecret))
            return try JSONDecoder().decode([String: String].self, from: try #require(Base64URL.decode(String(after.tokens.accessToken.split(separator: ".")[0]))))["kid"]
        }
        let oldSigner = try await signingKid()
        #expect(oldSigner.map(oldKids.contains) == true)
        test.clock.advance(by: SigningKeyring.activationDelay - 1)
        #expect(try await signingKid() == oldSigner)
        test.clock.advance(by: 1.5)
        #expect(try await signingKid() == newKey.kid)
        // A day later the old key is no longer published.
        test.clock.advance(by: SigningKeyring.retiredKeyGrace + 1)
        #expect(Set(keyring.keySet().keys.map(\.kid)) == Set(newKeys.map(\.kid)))
        #expect(try await test.broker.purgeExpired() > 0)
        #expect(try await test.store.signingKeys().count == 2)
    }

    @Test func aRevokedSigningKeyIsNotPublishedAndNothingItSignedIsAcceptedOnAnyNode() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        // With its own clock: it has loaded the keys before the revocation.
        let other = try await Self.secondNode(of: test, clock: TestClock())
        let signedIn = try await test.signIn(
            FlowRequest(appID: "web", providerID: "local"), answer: ["username": "alice", "password": "correct horse battery"],
            client: ClientCredentials(clientID: "web", secret: Self.webSecret)
        )
        let token = signedIn.tokens.accessToken
        let kid = try #require(SigningKeyring.kid(of: token))
        _ = try await other.broker.oauth.verifyAccessToken(token)
        #expect(other.broker.keyring.keySet().keys.contains { $0.kid == kid })

        let replacements = try await test.broker.admin.revokeSigningKey(kid: kid, by: AdminIdentity(name: "ops"), via: "test")
        #expect(replacements.map(\.algorithm) == [.es256, .rs256], "the key was signing: every algorithm gets a new key at once")
        // This node: not published, its tokens refused, and it signs with the replacement now.
        #expect(!test.broker.keyring.keySet().keys.contains { $0.kid == kid })
        #expect(await thrownError { _ = try await test.broker.oauth.verifyAccessToken(token) }?.code == .invalidToken)
        let after = try await test.signIn(
            FlowRequest(appID: "web", providerID: "local"), answer: ["username": "alice", "password": "correct horse battery"],
            client: ClientCredentials(clientID: "web", secret: Self.webSecret)
        )
        #expect(SigningKeyring.kid(of: after.tokens.accessToken) == replacements[0].kid)
        _ = try await test.broker.oauth.verifyAccessToken(after.tokens.accessToken)
        // The other node: within the revocation list's refresh its tokens are refused, before it
        // re-reads the keys; once it does, it no longer publishes the key either.
        other.clock.advance(by: RevocationList.refreshInterval + 0.5)
        #expect(await thrownError { _ = try await other.broker.oauth.verifyAccessToken(token) }?.code == .invalidToken)
        other.clock.advance(by: SigningKeyring.reloadInterval)
        try await other.broker.keyring.reloadIfStale()
        #expect(!other.broker.keyring.keySet().keys.contains { $0.kid == kid })
        #expect(try await !test.store.signingKeys().contains { $0.kid == kid })
        let audit = try await test.store.auditEvents(type: "key.revoked", appID: nil, accountID: nil, since: nil, limit: 5)
        #expect(audit.first?.details["kid"] == kid)
        // An unknown kid is a clear 404, and changes nothing.
        #expect(await thrownError { _ = try await test.broker.admin.revokeSigningKey(kid: "nope", by: AdminIdentity(name: "ops"), via: "test") }?.code == .notFound)
    }

    @Test func aRotationAtOnceAfterAPendingOneSignsWithItsKeyForGood() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        let keyring = test.broker.keyring
        func signingKid() async throws -> String? {
            let signedIn = try await test.signIn(
                FlowRequest(appID: "web", providerID: "local"), answer: ["username": "alice", "password": "correct horse battery"],
                client: ClientCredentials(clientID: "web", secret: Self.webSecret))
            return try JSONDecoder().decode([String: String].self, from: try #require(Base64URL.decode(String(signedIn.tokens.accessToken.split(separator: ".")[0]))))[
                "kid"]
        }
        let pending = try await keyring.rotate()
        test.clock.advance(by: 1)
        let emergency = try await keyring.rotate(immediately: true)
        #expect(try await signingKid() == emergency[0].kid)
        // The earlier rotation's key, still published, never takes over.
        test.clock.advance(by: SigningKeyring.activationDelay + 1)
        try await keyring.reload()
        #expect(try await signingKid() == emergency[0].kid)
        #expect(keyring.keySet().keys.map(\.kid).contains(pending[0].kid))
    }

    @Test func idTokensAreRS256ByDefaultWhileAccessTokensStayES256() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        let keys = test.broker.keyring.keySet().keys
        func header(_ token: String) throws -> [String: String] {
            try JSONDecoder().decode([String: String].self, from: try #require(Base64URL.decode(String(token.split(separator: ".")[0]))))
        }
        let signedIn = try await test.signIn(
            FlowRequest(appID: "web", providerID: "local"), answer: ["username": "alice", "password": "correct horse battery"],
            client: ClientCredentials(clientID: "web", secret: Self.webSecret)
        )
        let idToken = try #require(signedIn.tokens.idToken)
        #expect(try header(signedIn.tokens.accessToken)["alg"] == "ES256")
        #expect(try header(idToken)["alg"] == "RS256")
        // The ID token verifies with the published RSA key its kid names.
        let jwk = try #require(keys.first { $0.kid == (try? header(idToken))?["kid"] })
        #expect(jwk.kty == "RSA" && jwk.alg == "RS256")
        let publicKey = try _RSA.Signing.PublicKey(n: try #require(Base64URL.decode(jwk.n!)), e: try #require(Base64URL.decode(jwk.e!)))
        let parts = idToken.split(separator: ".").map(String.init)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5))
        // An app that asks for ES256 ID tokens gets them.
        let modern = try await test.signIn(FlowRequest(appID: "modern", providerID: "local"), answer: ["username": "alice", "password": "correct horse battery"])
        #expect(try header(try #require(modern.tokens.idToken))["alg"] == "ES256")
    }

    @Test func discoveryListsExactlyWhatIsSupported() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let document = try Self.object(try await client.execute(uri: "/.well-known/openid-configuration", method: .get))
            let issuer = test.broker.config.server.issuer
            #expect(document["issuer"] == .string(issuer))
            #expect(document["token_endpoint"] == .string(issuer + "/oauth2/token"))
            #expect(document["code_challenge_methods_supported"] == ["S256"])
            #expect(document["response_types_supported"] == ["code"])
            // OpenID Connect Discovery 1.0 section 3: RS256 must be listed.
            #expect(document["id_token_signing_alg_values_supported"] == ["RS256", "ES256"])
            // Every advertised endpoint answers (not 404).
            for key in ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "revocation_endpoint", "introspection_endpoint"] {
                let path = String(document[key]!.stringValue!.dropFirst(issuer.count))
                let response = try await client.execute(
                    uri: path, method: key == "jwks_uri" || key == "authorization_endpoint" || key == "userinfo_endpoint" ? .get : .post)
                #expect(response.status != .notFound, "\(key)")
            }
        }
    }
}
