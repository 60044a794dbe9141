import Crypto
import Foundation
import GatehouseCore
import GatehousePlugins
@testable import GatehouseServer
import GatehouseStore
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import LocalPassword
import NIOCore
import Testing
import _CryptoExtras

/// The HTTP surface: the JSON flow API, errors on the wire, health, and tokens checked against the
/// published keys with nothing but the JWKS document.
@Suite("GatehouseServer")
struct GatehouseServerTests {
    static let secret = "0123456789abcdef0123456789abcdef-confidential"

    static func yaml(algorithm: String = "ES256") -> String {
        """
        tokens:
          signingAlgorithm: \(algorithm)
        providers:
          - id: local
            type: local
            config:
              bcryptCost: 4
        apps:
          - id: demo
            policy:
              identityProviders: [local]
              selfRegistration: true
          - id: backend
            secret: ${BACKEND_SECRET}
            policy:
              identityProviders: [local]
              selfRegistration: true
        """
    }

    static func broker(algorithm: String = "ES256", temporary: TemporaryStore? = nil) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        return try await TestBroker.make(yaml: yaml(algorithm: algorithm), registry: registry, environment: ["BACKEND_SECRET": secret], temporary: temporary)
    }

    /// A broker whose apps may also use activation data (and the device keys they register): the
    /// activation plugin's root routes (`/v1/activations`, invitations) exist only then.
    static func brokerWithActivation() async throws -> TestBroker {
        let yaml = yaml().replacingOccurrences(
            of: """
                providers:
                """,
            with: """
                providers:
                  - id: device
                    type: device-key
                  - id: activation
                    type: activation
                    config:
                      deviceKeys: device
                      hashCost: 4
                  - id: corp-saml
                    type: saml
                    config:
                      idp:
                        entityID: https://idp.corp.test/metadata
                        ssoURL: https://idp.corp.test/sso
                        certificates:
                          - |
                            -----BEGIN CERTIFICATE-----
                            MIIBijCCATGgAwIBAgIUUvt5ecpAe5ac9Py2nTO6VIDYSdYwCgYIKoZIzj0EAwIw
                            GzEZMBcGA1UEAwwQb3BlbmFwaSB0ZXN0IElkUDAeFw0yNjEyMDcxMTUzNDRaFw0z
                            NjEyMDQxMTUzNDRaMBsxGTAXBgNVBAMMEG9wZW5hcGkgdGVzdCBJZFAwWTATBgcq
                            hkjOPQIBBggqhkjOPQMBBwNCAARCXVszg7LFgzhCP0MuCqmIUhkKqKt1P0gMGG5v
                            W4VKOmqspbAtsOkxLWOmwrFQ8eg9g0t5MnNXQWDvSOFZ1WU2o1MwUTAdBgNVHQ4E
                            FgQUAq356c+Y46U99XGGY3hK8tJvos4wHwYDVR0jBBgwFoAUAq356c+Y46U99XGG
                            Y3hK8tJvos4wDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiBbzUNL
                            U5V3PHuWPh3LLgmvuaz4RAaqUtpPkWmjS2JUFAIgVhF+oExY11gQdplFK+uzKSdI
                            SPJ6vW9gAIBGh1xywUk=
                            -----END CERTIFICATE-----
                """
        ).replacingOccurrences(of: "identityProviders: [local]", with: "identityProviders: [local, activation, device]")
        return try await TestBroker.make(yaml: yaml, registry: BuiltInPlugins.registry, environment: ["BACKEND_SECRET": secret])
    }

    static func application(_ test: TestBroker) -> some ApplicationProtocol {
        Application(router: GatehouseServer.makeRouter(broker: test.broker))
    }

    static func json(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    static func object(_ response: TestResponse) throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: Data(buffer: response.body))
    }

    /// Registers `username` through the flow API and returns the completed answer.
    static func register(_ client: any TestClientProtocol, app: String = "demo", username: String, password: String, headers: HTTPFields = [:]) async throws -> [String:
        JSONValue]
    {
        let started = try await client.execute(
            uri: "/v1/flows", method: .post, headers: headers, body: json(#"{"app":"\#(app)","provider":"local","purpose":"register"}"#)
        )
        #expect(started.status == .created)
        let flow = try #require(try object(started)["flow"]?.stringValue)
        let finished = try await client.execute(
            uri: "/v1/flows/\(flow)", method: .post, headers: headers,
            body: json(#"{"answer":{"username":"\#(username)","password":"\#(password)"}}"#)
        )
        #expect(finished.status == .ok)
        return try object(finished)
    }

    @Test func flowAPIRegistersAndAnswersWithTokens() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let started = try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"demo","provider":"local","purpose":"register"}"#))
            #expect(started.status == .created)
            let body = try Self.object(started)
            #expect(body["status"] == "challenge")
            guard case .object(let challenge) = body["challenge"] else {
                Issue.record("no challenge object")
                return
            }
            #expect(challenge["type"] == "credentials")
            #expect(challenge["fields"] == ["username", "password"])
            #expect(body["expiresAt"]?.stringValue?.hasSuffix("Z") == true)

            let done = try await client.execute(
                uri: "/v1/flows/\(body["flow"]!.stringValue!)", method: .post,
                body: Self.json(#"{"answer":{"username":"alice","password":"correct horse battery"}}"#)
            )
            #expect(done.status == .ok)
            #expect(done.headers[.cacheControl] == "no-store")
            let completed = try Self.object(done)
            #expect(completed["status"] == "completed")
            guard case .object(let tokens) = completed["tokens"], case .object(let account) = completed["account"] else {
                Issue.record("no tokens or account")
                return
            }
            #expect(tokens["token_type"] == "Bearer")
            #expect(tokens["refresh_token"]?.stringValue?.count == 43)
            #expect(account["username"] == "alice")
        }
    }

    @Test func anAppThatRegistersNoDevicesCannotManageTheAccountsDevices() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let completed = try await Self.register(client, username: "alice", password: "correct horse battery")
            let token = try #require(completed["tokens"]?.objectValue?["access_token"]?.stringValue)
            // The token is good (userinfo answers), but `demo` signs in with passwords only.
            #expect(try await client.execute(uri: "/oauth2/userinfo", method: .get, headers: [.authorization: "Bearer \(token)"]).status == .ok)
            for (method, uri) in [(HTTPRequest.Method.get, "/v1/account/devices"), (.patch, "/v1/account/devices/d1"), (.delete, "/v1/account/devices/d1")] {
                let response = try await client.execute(uri: uri, method: method, headers: [.authorization: "Bearer \(token)"], body: Self.json(#"{"alias":"x"}"#))
                #expect(response.status == .forbidden, "\(method) \(uri)")
                #expect(try Self.object(response)["error"] == "insufficient_scope", "\(method) \(uri)")
            }
        }
    }

    @Test func accessTokenVerifiesWithThePublishedES256Key() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let completed = try await Self.register(client, username: "alice", password: "correct horse battery")
            guard case .object(let tokens) = completed["tokens"], case .object(let account) = completed["account"] else {
                Issue.record("the completed flow has no tokens or account: \(completed)")
                return
            }
            let token = try #require(tokens["access_token"]?.stringValue)
            let jwks = try await client.execute(uri: "/oauth2/jwks", method: .get)
            #expect(jwks.headers[.contentType] == "application/jwk-set+json")
            let keySet = try JSONDecoder().decode(JSONWebKeySet.self, from: Data(buffer: jwks.body))
            let parts = token.split(separator: ".").map(String.init)
            let header = try JSONDecoder().decode([String: String].self, from: try #require(Base64URL.decode(parts[0])))
            #expect(header["typ"] == "at+jwt")
            #expect(header["alg"] == "ES256")
            let jwk = try #require(keySet.keys.first { $0.kid == header["kid"] })
            #expect(jwk.crv == "P-256")
            let point = Data([4]) + Base64URL.decode(jwk.x!)! + Base64URL.decode(jwk.y!)!
            let key = try P256.Signing.PublicKey(x963Representation: point)
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
            #expect(key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
            // A flipped payload no longer verifies.
            #expect(!key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])x".utf8)))

            let claims = try JSONDecoder().decode([String: JSONValue].self, from: try #require(Base64URL.decode(parts[1])))
            #expect(claims["iss"] == .string(test.broker.config.server.issuer))
            #expect(claims["sub"] == account["id"])
            #expect(claims["aud"] == "demo")
            #expect(claims["client_id"] == "demo")
            #expect(claims["scope"] == "openid")
            #expect(claims["stateless"] == false)
            #expect(claims["jti"]?.stringValue?.isEmpty == false)
            let iat = try #require(claims["iat"]?.numberValue)
            let exp = try #require(claims["exp"]?.numberValue)
            #expect(exp - iat == 900)
        }
    }

    @Test func accessTokenVerifiesWithThePublishedRS256Key() async throws {
        let test = try await Self.broker(algorithm: "RS256")
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let completed = try await Self.register(client, username: "bob", password: "correct horse battery")
            guard case .object(let tokens) = completed["tokens"] else {
                Issue.record("the completed flow has no tokens: \(completed)")
                return
            }
            let parts = try #require(tokens["access_token"]?.stringValue).split(separator: ".").map(String.init)
            let keySet = try JSONDecoder().decode(JSONWebKeySet.self, from: Data(buffer: try await client.execute(uri: "/oauth2/jwks", method: .get).body))
            let header = try JSONDecoder().decode([String: String].self, from: try #require(Base64URL.decode(parts[0])))
            #expect(header["alg"] == "RS256")
            let jwk = try #require(keySet.keys.first { $0.kid == header["kid"] })
            #expect(jwk.kty == "RSA")
            #expect(jwk.alg == "RS256")
            let key = try _RSA.Signing.PublicKey(n: try #require(Base64URL.decode(jwk.n!)), e: try #require(Base64URL.decode(jwk.e!)))
            #expect(key.keySizeInBits >= 2048)
            let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
            #expect(key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5))
        }
    }

    @Test func keyringRefusesTokensWithAnotherAlgorithmOrUnknownKey() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let result = try await test.signIn(
            FlowRequest(appID: "demo", providerID: "local", purpose: .register), answer: ["username": "carol", "password": "correct horse battery"]
        )
        let parts = result.tokens.accessToken.split(separator: ".").map(String.init)
        let noneHeader = Base64URL.encode(Data(#"{"alg":"none","typ":"at+jwt"}"#.utf8))
        let hsHeader = Base64URL.encode(Data(#"{"alg":"HS256","kid":"x"}"#.utf8))
        for forged in ["\(noneHeader).\(parts[1]).", "\(hsHeader).\(parts[1]).\(parts[2])", "\(parts[0]).\(parts[1]).AAAA", "garbage"] {
            await #expect(throws: BrokerError.self) { _ = try await test.broker.keyring.verify(forged) }
        }
        test.clock.advance(by: 901)
        await #expect(throws: BrokerError.self) { _ = try await test.broker.keyring.verify(result.tokens.accessToken) }
    }

    @Test func errorsAreJSONWithMachineCodes() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let unknownApp = try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"nope","provider":"local"}"#))
            #expect(unknownApp.status == .unauthorized)
            #expect(try Self.object(unknownApp)["error"] == "invalid_client")

            let malformed = try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app": 5"#))
            #expect(malformed.status == .badRequest)
            #expect(try Self.object(malformed)["error"] == "invalid_request")

            let badPurpose = try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"demo","provider":"local","purpose":"hack"}"#))
            #expect(badPurpose.status == .badRequest)

            let missingFlow = try await client.execute(uri: "/v1/flows/doesnotexist", method: .post, body: Self.json(#"{"answer":{}}"#))
            #expect(missingFlow.status == .notFound)
            #expect(try Self.object(missingFlow)["error"] == "flow_not_found")

            let started = try Self.object(try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"demo","provider":"local"}"#)))
            let wrong = try await client.execute(
                uri: "/v1/flows/\(started["flow"]!.stringValue!)", method: .post, body: Self.json(#"{"answer":{"username":"zed","password":"nope-nope-nope"}}"#)
            )
            #expect(wrong.status == .badRequest)
            let wrongBody = try Self.object(wrong)
            #expect(wrongBody["error"] == "invalid_credentials")
            #expect(wrongBody["error_description"] == "Wrong username or password.")
            #expect(wrong.headers[.init("X-Content-Type-Options")!] == "nosniff")
            #expect(wrong.headers[.init("X-Request-Id")!]?.isEmpty == false)

            let missingField = try await client.execute(
                uri: "/v1/flows/\(started["flow"]!.stringValue!)", method: .post, body: Self.json(#"{"answer":{"username":"zed"}}"#)
            )
            #expect(try Self.object(missingField)["error"] == "invalid_answer")
        }
    }

    @Test func confidentialAppAuthenticatesWithBasicOrBodySecret() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let anonymous = try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"backend","provider":"local"}"#))
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.headers[.wwwAuthenticate] != nil)
            let basic = "Basic " + Data("backend:\(Self.secret)".utf8).base64EncodedString()
            let completed = try await Self.register(client, app: "backend", username: "dora", password: "correct horse battery", headers: [.authorization: basic])
            #expect(completed["status"] == "completed")
            let wrongBasic = "Basic " + Data("backend:not-the-secret".utf8).base64EncodedString()
            let refused = try await client.execute(
                uri: "/v1/flows", method: .post, headers: [.authorization: wrongBasic], body: Self.json(#"{"app":"backend","provider":"local"}"#)
            )
            #expect(try Self.object(refused)["error"] == "invalid_client")
            let bodySecret = try await client.execute(
                uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"backend","provider":"local","client_secret":"\#(Self.secret)"}"#)
            )
            #expect(bodySecret.status == .created)
        }
    }

    @Test func healthAndReadiness() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .ok)
            // Public: the status only, never a dependency's error text.
            #expect(try Self.object(ready) == ["status": "ready"])
        }
    }

    @Test func dataSurvivesAServerRestart() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let first = try await Self.broker(temporary: temporary)
        let firstKeys = first.broker.keyring.keySet()
        try await Self.application(first).test(.live) { client in
            _ = try await Self.register(client, username: "erin", password: "correct horse battery")
        }
        // A new store handle and a new broker on the same file, as after a process restart.
        let reopened = try TemporaryStore.reopen(temporary)
        let second = try await Self.broker(temporary: reopened)
        #expect(second.broker.keyring.keySet() == firstKeys)
        try await Self.application(second).test(.live) { client in
            let started = try Self.object(try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"demo","provider":"local"}"#)))
            let done = try await client.execute(
                uri: "/v1/flows/\(started["flow"]!.stringValue!)", method: .post,
                body: Self.json(#"{"answer":{"username":"erin","password":"correct horse battery"}}"#)
            )
            #expect(done.status == .ok)
            #expect(try Self.object(done)["status"] == "completed")
        }
        #expect(try await second.store.count(table: .accounts) == 1)
        #expect(try await second.store.count(table: .refreshTokens) == 2)
    }
}

extension GatehouseServerTests {
    @Test func clientAddressComesFromTrustedProxiesOnly() {
        let trusted: Set = ["10.0.0.2", "10.0.0.3"]
        // A trusted proxy: the right-most address that is not a proxy.
        #expect(ClientAddressMiddleware.client(peer: "10.0.0.2", forwardedFor: ["198.51.100.7, 10.0.0.3"], trusted: trusted) == "198.51.100.7")
        // A client cannot choose its address by prepending entries: the right-most untrusted hop wins.
        #expect(ClientAddressMiddleware.client(peer: "10.0.0.2", forwardedFor: ["1.2.3.4", "203.0.113.9"], trusted: trusted) == "203.0.113.9")
        // Anyone else: the header is ignored.
        #expect(ClientAddressMiddleware.client(peer: "203.0.113.9", forwardedFor: ["1.2.3.4"], trusted: trusted) == nil)
        #expect(ClientAddressMiddleware.client(peer: "10.0.0.2", forwardedFor: [], trusted: trusted) == nil)
        #expect(ClientAddressMiddleware.client(peer: "10.0.0.2", forwardedFor: ["1.2.3.4"], trusted: []) == nil)
    }
}
