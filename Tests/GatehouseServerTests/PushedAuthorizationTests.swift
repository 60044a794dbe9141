import Crypto
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Pushed authorization requests (RFC 9126) and request objects (RFC 9101): a confidential app pushes
/// its request and the browser carries only the reference; an app that requires it takes nothing
/// else; request objects must be signed by the app's registered key, for this broker, fresh.
extension GatehouseServerTests {
    static let bankSecret = "bank-secret-bank-secret-bank-secret-0005"
    static let bankCallback = "https://bank.example/callback"

    struct RequestObjectSigner {
        let key = P256.Signing.PrivateKey()
        let kid = "bank-1"

        var jwk: String {
            let point = key.publicKey.x963Representation.dropFirst()
            return
                #"{"kty": "EC", "crv": "P-256", "kid": "\#(kid)", "x": "\#(Base64URL.encode(Data(point.prefix(32))))", "y": "\#(Base64URL.encode(Data(point.suffix(32))))"}"#
        }

        func sign(_ claims: [String: JSONValue], alg: String = "ES256", header extra: [String: JSONValue] = [:]) throws -> String {
            var members: [String: JSONValue] = ["alg": .string(alg), "kid": .string(kid), "typ": "oauth-authz-req+jwt"]
            members.merge(extra) { _, new in new }
            let header = JSONValue.object(members)
            let input = Base64URL.encode(bytes: header.serialized()) + "." + Base64URL.encode(bytes: JSONValue.object(claims).serialized())
            guard alg == "ES256" else { return input + "." }
            return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
        }
    }

    static func parYAML(_ signer: RequestObjectSigner) -> String {
        oidcYAML + """

              - id: bank
                name: Bank
                secret: \(bankSecret)
                redirectURIs: [\(bankCallback)]
                policy:
                  identityProviders: [local]
                  requirePushedAuthorizationRequests: true
                  requestObjectKeys:
                    - \(signer.jwk)
              - id: shop
                name: Shop
                redirectURIs: [https://shop.example/callback]
                policy:
                  identityProviders: [local]
                  requestObjectKeys:
                    - \(signer.jwk)
            """
    }

    static func authorizationParameters(client: String = "bank", redirect: String = bankCallback) -> [String: String] {
        [
            "client_id": client, "redirect_uri": redirect, "response_type": "code", "scope": "openid", "state": "pushed-state", "nonce": "n-1",
            "code_challenge": PKCE.challenge(for: verifier), "code_challenge_method": "S256",
        ]
    }

    static func push(_ client: any TestClientProtocol, _ form: [String: String], id: String = "bank", secret: String = bankSecret) async throws -> (
        status: HTTPResponse.Status, body: [String: JSONValue]
    ) {
        let response = try await client.execute(uri: "/oauth2/par", method: .post, headers: basic(id, secret), body: ByteBuffer(string: encode(form)))
        return (response.status, try object(response))
    }

    @Test func aPushedRequestSignsInOnceAndAnAppThatRequiresItTakesNothingElse() async throws {
        let signer = RequestObjectSigner()
        let test = try await Self.oidcBroker(yaml: Self.parYAML(signer))
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let discovery = try Self.object(try await client.execute(uri: "/.well-known/openid-configuration", method: .get))
            #expect(discovery["pushed_authorization_request_endpoint"]?.stringValue == test.broker.config.server.issuer + "/oauth2/par")
            #expect(discovery["request_parameter_supported"] == .bool(true) && discovery["require_pushed_authorization_requests"] == .bool(false))

            var parameters = Self.authorizationParameters()
            parameters.removeValue(forKey: "client_id")
            let pushed = try await Self.push(client, parameters)
            #expect(pushed.status == .created, "\(pushed.body)")
            let reference = try #require(pushed.body["request_uri"]?.stringValue)
            #expect(reference.hasPrefix("urn:ietf:params:oauth:request_uri:") && pushed.body["expires_in"] == .number(90))

            // The browser carries client_id and the reference only.
            let uri = "/oauth2/authorize?" + Self.encode(["client_id": "bank", "request_uri": reference])
            let query = try await Self.browserSignIn(client, authorizeURI: uri)
            #expect(query["state"] == "pushed-state")
            let tokens = try await Self.token(
                client, ["grant_type": "authorization_code", "code": try #require(query["code"]), "redirect_uri": Self.bankCallback, "code_verifier": Self.verifier],
                id: "bank", secret: Self.bankSecret
            )
            #expect(tokens.status == .ok && tokens.body["id_token"] != nil)
            // Once only.
            let again = try await client.execute(uri: uri, method: .get)
            #expect(again.status == .badRequest && String(buffer: again.body).contains("invalid_request_uri"))
            // The app requires pushed requests: its plain request goes back with invalid_request.
            let plain = try await client.execute(uri: "/oauth2/authorize?" + Self.encode(Self.authorizationParameters()), method: .get)
            #expect(try plain.status == .seeOther && Self.query(of: #require(plain.headers[.location]))["error"] == "invalid_request")
        }
    }

    /// The pages speak the pushed request's `ui_locales`; one beside the reference counts for nothing
    /// (RFC 9126 section 4).
    @Test func aPushedRequestsUILocalesChooseThePagesLanguage() async throws {
        let signer = RequestObjectSigner()
        let test = try await Self.oidcBroker(yaml: Self.parYAML(signer))
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            var parameters = Self.authorizationParameters()
            parameters.removeValue(forKey: "client_id")
            parameters["ui_locales"] = "fr"
            let pushed = try await Self.push(client, parameters)
            let reference = try #require(pushed.body["request_uri"]?.stringValue)
            let page = try await client.execute(
                uri: "/oauth2/authorize?" + Self.encode(["client_id": "bank", "request_uri": reference, "ui_locales": "de"]), method: .get,
                headers: [.acceptLanguage: "es"])
            let html = String(buffer: page.body)
            #expect(page.status == .ok && html.contains(#"<html lang="fr""#), "\(html.prefix(300))")
        }
    }

    @Test func pushedRequestsAreRefusedAsRFC9126Says() async throws {
        let signer = RequestObjectSigner()
        let test = try await Self.oidcBroker(yaml: Self.parYAML(signer))
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            // No client authentication, or a wrong secret.
            let anonymous = try await client.execute(
                uri: "/oauth2/par", method: .post, headers: Self.form, body: ByteBuffer(string: Self.encode(Self.authorizationParameters())))
            #expect(try anonymous.status == .unauthorized && Self.object(anonymous)["error"]?.stringValue == "invalid_client")
            #expect(try await Self.push(client, Self.authorizationParameters(), secret: "wrong-secret-wrong-secret-wrong-secret").status == .unauthorized)
            // A request the authorization endpoint would refuse is refused here, as JSON.
            #expect(try await Self.push(client, Self.authorizationParameters(redirect: "https://evil.example/cb")).body["error"]?.stringValue == "invalid_request")
            var noPKCE = Self.authorizationParameters()
            noPKCE.removeValue(forKey: "code_challenge")
            #expect(try await Self.push(client, noPKCE).body["error"]?.stringValue == "invalid_request")
            var withReference = Self.authorizationParameters()
            withReference["request_uri"] = "urn:ietf:params:oauth:request_uri:x"
            #expect(try await Self.push(client, withReference).body["error"]?.stringValue == "invalid_request")
            // Another client's reference, and an expired one.
            let pushed = try await Self.push(client, Self.authorizationParameters())
            let reference = try #require(pushed.body["request_uri"]?.stringValue)
            let stolen = try await client.execute(uri: "/oauth2/authorize?" + Self.encode(["client_id": "web", "request_uri": reference]), method: .get)
            #expect(stolen.status == .badRequest && String(buffer: stolen.body).contains("invalid_request_uri"))
            // Another client's attempt does not spend it: the client that pushed it still can.
            let own = try await client.execute(uri: "/oauth2/authorize?" + Self.encode(["client_id": "bank", "request_uri": reference]), method: .get)
            #expect(own.status == .ok || own.status == .found, "\(own.status)")
            let spent = try await client.execute(uri: "/oauth2/authorize?" + Self.encode(["client_id": "bank", "request_uri": reference]), method: .get)
            #expect(spent.status == .badRequest && String(buffer: spent.body).contains("invalid_request_uri"), "once")
            let other = try #require(try await Self.push(client, Self.authorizationParameters()).body["request_uri"]?.stringValue)
            test.clock.advance(by: 91)
            let late = try await client.execute(uri: "/oauth2/authorize?" + Self.encode(["client_id": "bank", "request_uri": other]), method: .get)
            #expect(late.status == .badRequest && String(buffer: late.body).contains("invalid_request_uri"))
        }
    }

    @Test func requestObjectsMustBeSignedByTheAppsKeyForThisBrokerAndFresh() async throws {
        let signer = RequestObjectSigner()
        let test = try await Self.oidcBroker(yaml: Self.parYAML(signer))
        defer { test.temporary.remove() }
        let issuer = test.broker.config.server.issuer
        try await Self.application(test).test(.router) { client in
            let now = test.clock.now.timeIntervalSince1970
            func claims(_ change: (inout [String: JSONValue]) -> Void = { _ in }) -> [String: JSONValue] {
                var claims = Self.authorizationParameters().mapValues(JSONValue.string)
                claims["iss"] = "bank"
                claims["aud"] = .string(issuer)
                claims["exp"] = .number(now + 60)
                claims["iat"] = .number(now)
                change(&claims)
                return claims
            }
            // A signed request object pushed: accepted, and it alone counts.
            let pushed = try await Self.push(client, ["request": try signer.sign(claims())])
            #expect(pushed.status == .created, "\(pushed.body)")
            let query = try await Self.browserSignIn(
                client, authorizeURI: "/oauth2/authorize?" + Self.encode(["client_id": "bank", "request_uri": try #require(pushed.body["request_uri"]?.stringValue)])
            )
            #expect(query["code"] != nil && query["state"] == "pushed-state")

            // Every way a request object can be wrong.
            let other = RequestObjectSigner()
            for (object, why) in [
                (try other.sign(claims()), "another key"), (try signer.sign(claims(), alg: "none"), "alg none"),
                (try signer.sign(claims { $0["aud"] = "https://elsewhere.example" }), "another audience"),
                (try signer.sign(claims { $0["iss"] = "shop" }), "another issuer"),
                (try signer.sign(claims { $0["exp"] = nil }), "no exp"),
                (try signer.sign(claims { $0["exp"] = .number(now - 1) }), "expired"),
                (try signer.sign(claims { $0["exp"] = .number(now + 7200) }), "valid too long"),
                (try signer.sign(claims { $0["request_uri"] = "urn:x" }), "nested request"),
                (
                    try signer.sign(
                        claims {
                            $0["iat"] = .number(now + 7200)
                            $0["exp"] = .number(now + 7200 + 3000)
                        }), "issued in the future"
                ),
                (try signer.sign(claims(), header: ["crit": ["exp"]]), "a critical extension"),
                (try signer.sign(claims(), header: ["typ": "logout+jwt"]), "another kind of JWT"),
                ("not-a-jwt", "malformed"),
            ] {
                let refused = try await Self.push(client, ["request": object])
                #expect(refused.status == .badRequest && refused.body["error"]?.stringValue == "invalid_request_object", "\(why): \(refused.body)")
            }
            // request and request_uri together.
            let both = try await client.execute(
                uri: "/oauth2/authorize?"
                    + Self.encode(["client_id": "shop", "request": try signer.sign(claims()), "request_uri": "urn:ietf:params:oauth:request_uri:x"]),
                method: .get
            )
            #expect(both.status == .badRequest)
            // By value at the authorization endpoint (an app that does not require pushing): the
            // object's parameters count; a bad one goes back to the registered redirect URI.
            let shopClaims = claims {
                $0["iss"] = "shop"
                $0["client_id"] = "shop"
                $0["redirect_uri"] = "https://shop.example/callback"
            }
            let byValue = try await client.execute(uri: "/oauth2/authorize?" + Self.encode(["client_id": "shop", "request": try signer.sign(shopClaims)]), method: .get)
            #expect(byValue.status == .ok && String(buffer: byValue.body).contains(#"name="password""#))
            let forged = try await client.execute(
                uri: "/oauth2/authorize?"
                    + Self.encode(["client_id": "shop", "redirect_uri": "https://shop.example/callback", "state": "s", "request": try other.sign(shopClaims)]),
                method: .get
            )
            #expect(try forged.status == .seeOther && Self.query(of: #require(forged.headers[.location]))["error"] == "invalid_request_object")
        }
    }
}
