import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The device authorization grant (RFC 8628) over HTTP with a test clock: the device's requests as
/// section 3 writes them, and the verification page as a browser walks it.
extension GatehouseServerTests {
    static let deviceYAML =
        oidcYAML + """

              - id: tv
                name: Living-room TV
                policy:
                  identityProviders: [local]
                  deviceAuthorizationGrant: true
                  allowedScopes: [openid, profile, offline_access]
                  devicePollingInterval: 5
                  deviceCodeLifetime: 600
            lockout:
              maxFailedAuthenticationsPerIP: 4
            """

    static func deviceBroker() async throws -> TestBroker { try await oidcBroker(yaml: deviceYAML) }

    /// RFC 8628 section 3.1: the device asks for codes (a public client names itself).
    static func deviceCodes(_ client: any TestClientProtocol, clientID: String = "tv", scope: String = "openid profile offline_access") async throws -> TestResponse {
        try await client.execute(
            uri: "/oauth2/device_authorization", method: .post, headers: form, body: ByteBuffer(string: encode(["client_id": clientID, "scope": scope]))
        )
    }

    /// RFC 8628 section 3.4: one poll.
    static func poll(_ client: any TestClientProtocol, deviceCode: String, clientID: String = "tv") async throws -> (
        status: HTTPResponse.Status, body: [String: JSONValue]
    ) {
        let response = try await client.execute(
            uri: "/oauth2/token", method: .post, headers: form,
            body: ByteBuffer(string: encode(["grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": deviceCode, "client_id": clientID]))
        )
        return (response.status, try object(response))
    }

    /// Opens the verification URI as a browser would, then signs in as alice on the page it shows;
    /// answers the confirmation page and the form headers (with the browser's cookies).
    static func verifyDevice(_ client: any TestClientProtocol, uri: String, cookie: String? = nil) async throws -> (html: String, headers: HTTPFields) {
        var headers = form
        if let cookie { headers[.cookie] = cookie }
        var page = try await client.execute(uri: uri, method: .get, headers: headers)
        // `/device?user_code=` goes on under /oauth2/, where the browser's binding cookie lives.
        if page.status == .seeOther, let location = page.headers[.location] {
            #expect(location.contains("/oauth2/device?user_code="))
            page = try await client.execute(uri: "/oauth2/device?" + (URLComponents(string: location)?.percentEncodedQuery ?? ""), method: .get, headers: headers)
        }
        #expect(page.status == .ok)
        var html = String(buffer: page.body)
        let binding = try #require(page.headers[.setCookie]?.split(separator: ";").first.map(String.init))
        headers[.cookie] = ([binding] + (cookie.map { [$0] } ?? [])).joined(separator: "; ")
        if html.contains(#"name="password""#) {
            let answer = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: headers,
                body: ByteBuffer(
                    string: encode([
                        "flow": try #require(hidden("flow", in: html)), "csrf": try #require(hidden("csrf", in: html)), "username": "alice",
                        "password": "correct horse battery",
                    ]))
            )
            #expect(answer.status == .ok)
            html = String(buffer: answer.body)
        }
        return (html, headers)
    }

    static func confirmDevice(_ client: any TestClientProtocol, page: (html: String, headers: HTTPFields), deny: Bool = false) async throws -> String {
        var fields = ["flow": try #require(hidden("flow", in: page.html)), "csrf": try #require(hidden("csrf", in: page.html))]
        if deny { fields["deny"] = "true" }
        let answer = try await client.execute(uri: "/oauth2/authorize/answer", method: .post, headers: page.headers, body: ByteBuffer(string: encode(fields)))
        #expect(answer.status == .seeOther)
        return try #require(answer.headers[.location])
    }

    @Test func aDeviceGetsTokensOnceThePersonSignsInAndConfirmsItsCode() async throws {
        let test = try await Self.deviceBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let discovery = try Self.object(try await client.execute(uri: "/.well-known/openid-configuration", method: .get))
            #expect(discovery["device_authorization_endpoint"]?.stringValue == test.broker.config.server.issuer + "/oauth2/device_authorization")
            #expect(discovery["grant_types_supported"]?.arrayValue?.contains(.string("urn:ietf:params:oauth:grant-type:device_code")) == true)

            let started = try await Self.deviceCodes(client)
            #expect(started.status == .ok)
            #expect(started.headers[.cacheControl] == "no-store")
            let codes = try Self.object(started)
            let deviceCode = try #require(codes["device_code"]?.stringValue)
            let userCode = try #require(codes["user_code"]?.stringValue)
            #expect(userCode.wholeMatch(of: /[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}/) != nil)
            #expect(codes["verification_uri"]?.stringValue == test.broker.config.server.issuer + "/device")
            #expect(codes["expires_in"] == .number(600) && codes["interval"] == .number(5))
            let complete = try #require(codes["verification_uri_complete"]?.stringValue)
            #expect(Self.query(of: complete)["user_code"] == userCode)

            // Before the person acts: pending; a poll inside the interval: slow_down, and 5 s more.
            #expect(try await Self.poll(client, deviceCode: deviceCode).body["error"]?.stringValue == "authorization_pending")
            test.clock.advance(by: 2)
            let tooFast = try await Self.poll(client, deviceCode: deviceCode)
            #expect(tooFast.status == .badRequest && tooFast.body["error"]?.stringValue == "slow_down")
            // 6 s later is inside the new 10 s: slow_down again (15 s); 16 s later is fine.
            test.clock.advance(by: 6)
            #expect(try await Self.poll(client, deviceCode: deviceCode).body["error"]?.stringValue == "slow_down")
            test.clock.advance(by: 16)
            #expect(try await Self.poll(client, deviceCode: deviceCode).body["error"]?.stringValue == "authorization_pending")

            // The form, then the code typed loosely (lower case, a space for the dash).
            let formPage = try await client.execute(uri: "/device", method: .get)
            #expect(formPage.status == .ok && String(buffer: formPage.body).contains(#"name="user_code""#))
            let typed = userCode.lowercased().replacingOccurrences(of: "-", with: " ")
            let confirmation = try await Self.verifyDevice(client, uri: "/device?" + Self.encode(["user_code": typed]))
            #expect(confirmation.html.contains(userCode) && confirmation.html.contains("Living-room TV"))
            let location = try await Self.confirmDevice(client, page: confirmation)
            #expect(location.hasSuffix("/device?result=approved"))

            // Still inside the interval (15 s): slow_down (now 20 s) keeps the tokens for later.
            test.clock.advance(by: 3)
            #expect(try await Self.poll(client, deviceCode: deviceCode).body["error"]?.stringValue == "slow_down")
            test.clock.advance(by: 21)
            let tokens = try await Self.poll(client, deviceCode: deviceCode)
            #expect(tokens.status == .ok, "\(tokens.body)")
            let access = try #require(tokens.body["access_token"]?.stringValue)
            #expect(tokens.body["refresh_token"]?.stringValue != nil && tokens.body["id_token"]?.stringValue != nil)
            let claims = try Self.claims(of: access)
            #expect(claims["client_id"]?.stringValue == "tv" || claims["aud"] != nil)
            let userinfo = try await client.execute(uri: "/oauth2/userinfo", method: .get, headers: [.authorization: "Bearer \(access)"])
            #expect(try Self.object(userinfo)["preferred_username"]?.stringValue == "alice")

            // One use: the device code, and the user code.
            test.clock.advance(by: 30)
            #expect(try await Self.poll(client, deviceCode: deviceCode).body["error"]?.stringValue == "invalid_grant")
            let again = try await client.execute(uri: "/oauth2/device?" + Self.encode(["user_code": userCode]), method: .get)
            #expect(again.status == .badRequest && String(buffer: again.body).contains("not valid"))
            let approved = try await test.store.auditEvents(type: "device.approved", appID: "tv", accountID: nil, since: nil, limit: 5)
            #expect(approved.count == 1)
        }
    }

    @Test func aDeviceRefusedOnTheConfirmationPageHearsAccessDenied() async throws {
        let test = try await Self.deviceBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let codes = try Self.object(try await Self.deviceCodes(client, scope: "openid"))
            let deviceCode = try #require(codes["device_code"]?.stringValue)
            // Cancelling the sign-in before it (anyone who saw the code could) leaves the device waiting.
            let signIn = try await client.execute(uri: "/oauth2/device?" + Self.encode(["user_code": try #require(codes["user_code"]?.stringValue)]), method: .get)
            let signInHTML = String(buffer: signIn.body)
            var signInHeaders = Self.form
            signInHeaders[.cookie] = try #require(signIn.headers[.setCookie]?.split(separator: ";").first.map(String.init))
            let cancelled = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: signInHeaders,
                body: ByteBuffer(
                    string: Self.encode([
                        "flow": try #require(Self.hidden("flow", in: signInHTML)), "csrf": try #require(Self.hidden("csrf", in: signInHTML)), "cancel": "1",
                    ]))
            )
            #expect(cancelled.status == .seeOther)
            #expect(try await Self.poll(client, deviceCode: deviceCode).body["error"]?.stringValue == "authorization_pending")
            test.clock.advance(by: 10)
            let page = try await Self.verifyDevice(
                client, uri: try #require(codes["verification_uri_complete"]?.stringValue).replacingOccurrences(of: test.broker.config.server.issuer, with: ""))
            #expect(try await Self.confirmDevice(client, page: page, deny: true).hasSuffix("/device?result=denied"))
            let denied = try await Self.poll(client, deviceCode: deviceCode)
            #expect(denied.status == .badRequest && denied.body["error"]?.stringValue == "access_denied")
        }
    }

    @Test func aSignedInBrowserOnlyConfirmsAndAnExpiredCodeAnswersExpiredToken() async throws {
        let test = try await Self.deviceBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let (_, session) = try await Self.signInWithSession(client)
            let codes = try Self.object(try await Self.deviceCodes(client))
            let userCode = try #require(codes["user_code"]?.stringValue)
            // Single sign-on: no password page, straight to the confirmation.
            let page = try await Self.verifyDevice(client, uri: "/device?" + Self.encode(["user_code": userCode]), cookie: session)
            #expect(page.html.contains(userCode) && !page.html.contains(#"name="password""#))
            #expect(try await Self.confirmDevice(client, page: page).hasSuffix("/device?result=approved"))

            // A code nobody approved in time.
            let late = try Self.object(try await Self.deviceCodes(client))
            test.clock.advance(by: 601)
            let expired = try await Self.poll(client, deviceCode: try #require(late["device_code"]?.stringValue))
            #expect(expired.status == .badRequest && expired.body["error"]?.stringValue == "expired_token")
            let page2 = try await client.execute(uri: "/oauth2/device?" + Self.encode(["user_code": try #require(late["user_code"]?.stringValue)]), method: .get)
            #expect(page2.status == .badRequest)
        }
    }

    @Test func deviceCodesAreRefusedToOtherClientsAppsWithoutTheGrantAndGuessers() async throws {
        let test = try await Self.deviceBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            // An app without the grant, and one asking for a scope it may not have.
            let refused = try await client.execute(
                uri: "/oauth2/device_authorization", method: .post, headers: Self.basic("web", Self.webSecret), body: ByteBuffer(string: "scope=openid")
            )
            #expect(try refused.status == .badRequest && Self.object(refused)["error"]?.stringValue == "unauthorized_client")
            let wideScope = try await Self.deviceCodes(client, scope: "openid email")
            #expect(try wideScope.status == .badRequest && Self.object(wideScope)["error"]?.stringValue == "invalid_scope")
            let unknown = try await Self.deviceCodes(client, clientID: "nobody")
            #expect(try unknown.status == .unauthorized && Self.object(unknown)["error"]?.stringValue == "invalid_client")

            // Another client's device code is not valid for it; an unknown one neither.
            let codes = try Self.object(try await Self.deviceCodes(client))
            let deviceCode = try #require(codes["device_code"]?.stringValue)
            let stolen = try await Self.token(client, ["grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": deviceCode])
            #expect(stolen.body["error"]?.stringValue == "unauthorized_client")
            #expect(try await Self.poll(client, deviceCode: "not-a-device-code").body["error"]?.stringValue == "invalid_grant")
            #expect(try await Self.poll(client, deviceCode: "").body["error"]?.stringValue == "invalid_request")

            // Guessing user codes: wrong ones are counted per address, then the page answers 429.
            for _ in 0..<4 {
                let wrong = try await client.execute(uri: "/oauth2/device?user_code=BBBB-BBBB", method: .get)
                #expect(wrong.status == .badRequest)
            }
            let blocked = try await client.execute(uri: "/oauth2/device?" + Self.encode(["user_code": try #require(codes["user_code"]?.stringValue)]), method: .get)
            #expect(blocked.status == .tooManyRequests)
        }
    }
}
