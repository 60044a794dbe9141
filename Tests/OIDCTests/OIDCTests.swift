import Crypto
import Foundation
import GatehouseCore
import GatehouseTesting
import OIDC
import Testing
import _CryptoExtras

/// An upstream OpenID provider inside the test, behind the plugin's HTTP client: it serves discovery
/// and a key set, and answers the token endpoint with the ID token the test chose. ID tokens are made
/// here with swift-crypto directly, not with the plugin's code (Tests/upstream runs the real peers).
final class ScriptedUpstream: OutboundHTTP, @unchecked Sendable {
    static let issuer = "https://login.upstream.test"
    let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    let ec = P256.Signing.PrivateKey()
    let lock = NSLock()
    /// Makes the token endpoint's ID token from the nonce the authorization request carried.
    var idToken: (@Sendable (_ nonce: String) -> String)?
    /// When set, the code exchange also answers an upstream refresh token, and a refresh grant answers
    /// the ID token this makes (no nonce: OIDC Core 12.2).
    var refreshedIDToken: (@Sendable () -> String)?
    var nonce = ""
    var requests: [OutboundRequest] = []
    var jwksFetches = 0

    func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse {
        lock.withLock { requests.append(request) }
        switch request.url {
        case Self.issuer + "/.well-known/openid-configuration":
            return json([
                "issuer": .string(Self.issuer), "authorization_endpoint": .string(Self.issuer + "/authorize"), "token_endpoint": .string(Self.issuer + "/token"),
                "jwks_uri": .string(Self.issuer + "/jwks"),
            ])
        case Self.issuer + "/jwks":
            lock.withLock { jwksFetches += 1 }
            let rsaKey = rsa.publicKey
            let primitives = try! rsaKey.getKeyPrimitives()
            let (n, e) = (primitives.modulus, primitives.publicExponent)
            let point = ec.publicKey.x963Representation
            return json([
                "keys": [
                    ["kty": "RSA", "kid": "r1", "n": .string(Base64URL.encode(n)), "e": .string(Base64URL.encode(e))],
                    ["kty": "EC", "kid": "e1", "crv": "P-256", "x": .string(Base64URL.encode(point[1..<33])), "y": .string(Base64URL.encode(point[33...]))],
                    ["kty": "oct", "kid": "h1", "k": .string(Base64URL.encode(Data("secret".utf8)))],
                ]
            ])
        case Self.issuer + "/token":
            let form = String(decoding: request.body ?? Data(), as: UTF8.self)
            if let refreshed = lock.withLock({ refreshedIDToken }) {
                if form.contains("grant_type=refresh_token") {
                    return json(["access_token": "upstream-access-2", "token_type": "Bearer", "id_token": .string(refreshed()), "refresh_token": "upstream-refresh-2"])
                }
                let token = lock.withLock { idToken?(nonce) } ?? ""
                return json(["access_token": "upstream-access", "token_type": "Bearer", "id_token": .string(token), "refresh_token": "upstream-refresh"])
            }
            let token = lock.withLock { idToken?(nonce) } ?? ""
            return json(["access_token": "upstream-access", "token_type": "Bearer", "id_token": .string(token)])
        default:
            throw .unreachable(request.url)
        }
    }

    func json(_ value: JSONValue) -> OutboundResponse { OutboundResponse(status: 200, body: Data(value.serialized())) }

    static func jws(header: [String: JSONValue], claims: [String: JSONValue], sign: (Data) throws -> Data) rethrows -> String {
        let input = Base64URL.encode(Data(JSONValue.object(header).serialized())) + "." + Base64URL.encode(Data(JSONValue.object(claims).serialized()))
        return input + "." + Base64URL.encode(try sign(Data(input.utf8)))
    }

    func rs256(_ claims: [String: JSONValue], kid: String = "r1") -> String {
        try! Self.jws(header: ["alg": "RS256", "kid": .string(kid)], claims: claims) { try rsa.signature(for: $0, padding: .insecurePKCS1v1_5).rawRepresentation }
    }

    func es256(_ claims: [String: JSONValue]) -> String {
        try! Self.jws(header: ["alg": "ES256", "kid": "e1"], claims: claims) { try ec.signature(for: $0).rawRepresentation }
    }
}

/// A sign-in the callback refused, with the error code the app heard.
struct Refused: Error {
    var code: String
}

@Suite("OIDC")
struct OIDCTests {
    static let yaml = """
        providers:
          - id: corp
            type: oidc
            name: Corp
            config:
              issuer: \(ScriptedUpstream.issuer)
              clientID: broker
              clientSecret: upstream-secret
              clockSkew: 30s
              groupsPrefix: "corp:"
        apps:
          - id: phone
            redirectURIs: [com.example.phone:/back]
            policy:
              identityProviders: [corp]
              selfRegistration: true
        """

    static func claims(_ clock: TestClock, nonce: String, changes: [String: JSONValue] = [:]) -> [String: JSONValue] {
        let now = clock.now.timeIntervalSince1970
        var claims: [String: JSONValue] = [
            "iss": .string(ScriptedUpstream.issuer), "aud": "broker", "sub": "u-42", "iat": .number(now), "exp": .number(now + 300), "nonce": .string(nonce),
            "preferred_username": "ann", "email": "ann@corp.test", "email_verified": true, "groups": ["eng", "ops"],
        ]
        claims.merge(changes) { _, new in new }
        return claims
    }

    /// Runs a native sign-in through the engine: start, the upstream's redirect to the callback, then
    /// the app's continuation with its verifier. Answers the tokens, or the callback's error code.
    static func signIn(_ test: TestBroker, _ upstream: ScriptedUpstream) async throws -> Result<IssuedTokens, Refused> {
        let verifier = RandomToken.make()
        let started = try await test.engine.start(
            FlowRequest(appID: "phone", providerID: "corp"), returnURI: "com.example.phone:/back", codeChallenge: PKCE.challenge(for: verifier), client: nil
        )
        guard case .challenge(let flowID, let challenge, _) = started, let url = challenge.fields["url"]?.stringValue,
            let query = URLComponents(string: url)?.queryItems
        else { throw FlowDriverError.unexpectedOutcome("no redirect challenge") }
        #expect(query.first { $0.name == "state" }?.value == flowID)
        #expect(query.first { $0.name == "code_challenge_method" }?.value == "S256")
        upstream.lock.withLock { upstream.nonce = query.first { $0.name == "nonce" }?.value ?? "" }
        let outcome = try await test.engine.callback(state: flowID, answer: ChallengeResponse(["code": "c", "unrelated": "x"]), cookie: nil, crossSitePost: false)
        guard case .redirect(let location) = outcome, let items = URLComponents(string: location)?.queryItems else {
            throw FlowDriverError.unexpectedOutcome("\(outcome)")
        }
        #expect(location.hasPrefix("com.example.phone:/back?"))
        if let error = items.first(where: { $0.name == "error" })?.value { return .failure(Refused(code: error)) }
        let code = items.first { $0.name == "code" }?.value ?? ""
        guard
            case .completed(_, let tokens, _, _) = try await test.engine.resume(
                flowID: flowID, answer: ChallengeResponse(["code": .string(code), "codeVerifier": .string(verifier)]), client: nil
            )
        else { throw FlowDriverError.unexpectedOutcome("not completed") }
        return .success(tokens)
    }

    static func broker(_ upstream: ScriptedUpstream, clock: TestClock = TestClock(), yaml: String = yaml) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(OIDCPlugin.self)
        return try await TestBroker.make(yaml: yaml, registry: registry, clock: clock, http: upstream)
    }

    /// A browser sign-in through `/oauth2/authorize` with the app's `prompt` and `max_age`: the
    /// upstream URL the browser is sent to, and the callback's outcome (the app's code, or its error).
    static func browserSignIn(_ test: TestBroker, _ upstream: ScriptedUpstream, prompt: [String], maxAge: Int?) async throws
        -> (upstreamQuery: [URLQueryItem], redirect: [URLQueryItem], verifier: String)
    {
        let app = try #require(try await test.store.app(id: "phone"))
        let verifier = RandomToken.make()
        let request = AuthorizationRequest(
            clientID: "phone", redirectURI: "com.example.phone:/back", scopes: ["openid"], state: "s", nonce: "n", codeChallenge: PKCE.challenge(for: verifier),
            prompt: prompt, maxAge: maxAge
        )
        let cookie = RandomToken.make()
        let outcome = try await test.engine.startAuthorization(
            app: app, request: request, binding: BrowserBinding(cookieDigest: SecretDigest.sha256Hex(cookie), csrfToken: "csrf"), clientIP: nil
        )
        guard case .challenge(let flowID, let challenge, _) = outcome, let url = challenge.fields["url"]?.stringValue,
            let query = URLComponents(string: url)?.queryItems
        else { throw FlowDriverError.unexpectedOutcome("\(outcome)") }
        upstream.lock.withLock { upstream.nonce = query.first { $0.name == "nonce" }?.value ?? "" }
        let answer = try await test.engine.callback(state: flowID, answer: ChallengeResponse(["code": "c"]), cookie: cookie, crossSitePost: false)
        let location: String
        switch answer {
        case .browser(.authorized(_, let redirect, _), _, _): location = redirect
        case .redirect(let redirect): location = redirect
        default: throw FlowDriverError.unexpectedOutcome("\(answer)")
        }
        return (query, URLComponents(string: location)?.queryItems ?? [], verifier)
    }

    @Test func theAppsPromptAndMaxAgeGoUpstreamAndAuthTimeIsWhenThePersonReallySignedIn() async throws {
        let upstream = ScriptedUpstream()
        let test = try await Self.broker(upstream)
        defer { test.temporary.remove() }
        let clock = test.clock
        // The upstream authenticated the person five seconds ago: within max_age, after the redirect.
        let authenticated = clock.now.timeIntervalSince1970 - 5
        upstream.idToken = { nonce in upstream.rs256(Self.claims(clock, nonce: nonce, changes: ["auth_time": .number(authenticated)])) }
        let fresh = try await Self.browserSignIn(test, upstream, prompt: ["login"], maxAge: 60)
        #expect(fresh.upstreamQuery.first { $0.name == "prompt" }?.value == "login")
        #expect(fresh.upstreamQuery.first { $0.name == "max_age" }?.value == "60")
        let code = try #require(fresh.redirect.first { $0.name == "code" }?.value, "\(fresh.redirect)")
        let tokens = try await test.broker.oauth.token(
            try TokenRequest(
                form: [
                    "grant_type": "authorization_code", "code": code, "code_verifier": fresh.verifier, "redirect_uri": "com.example.phone:/back", "client_id": "phone",
                ],
                basic: nil
            ))
        let payload = try #require(try tokens.idToken.flatMap { Base64URL.decode(String($0.split(separator: ".")[1])) })
        let idClaims = try JSONDecoder().decode([String: JSONValue].self, from: payload)
        #expect(
            idClaims["auth_time"] == .number(Double(Int(authenticated))),
            "auth_time is the upstream's, not the broker's now: \(String(describing: idClaims["auth_time"]))")

        // An upstream that only showed consent (auth_time an hour old) does not satisfy max_age...
        let stale = clock.now.timeIntervalSince1970 - 3_600
        upstream.idToken = { nonce in upstream.rs256(Self.claims(clock, nonce: nonce, changes: ["auth_time": .number(stale)])) }
        let tooOld = try await Self.browserSignIn(test, upstream, prompt: [], maxAge: 60)
        #expect(tooOld.redirect.first { $0.name == "error" }?.value == "login_required", "\(tooOld.redirect)")
        #expect(tooOld.redirect.first { $0.name == "code" } == nil)
        // ...nor prompt=login, and max_age without auth_time cannot be checked (OIDC Core 3.1.3.7).
        let notAgain = try await Self.browserSignIn(test, upstream, prompt: ["login"], maxAge: nil)
        #expect(notAgain.redirect.first { $0.name == "error" }?.value == "login_required", "\(notAgain.redirect)")
        upstream.idToken = { nonce in upstream.rs256(Self.claims(clock, nonce: nonce)) }
        let unknown = await thrownError { _ = try await Self.browserSignIn(test, upstream, prompt: [], maxAge: 60) }
        #expect(unknown?.reason == "missing_auth_time")
        // prompt=login alone asks the upstream for max_age=0 too, so that it says when: without auth_time, no proof.
        let unproven = await thrownError { _ = try await Self.browserSignIn(test, upstream, prompt: ["login"], maxAge: nil) }
        #expect(unproven?.reason == "missing_auth_time")
        let now = clock.now.timeIntervalSince1970
        upstream.idToken = { nonce in upstream.rs256(Self.claims(clock, nonce: nonce, changes: ["auth_time": .number(now)])) }
        let again = try await Self.browserSignIn(test, upstream, prompt: ["login"], maxAge: nil)
        #expect(again.upstreamQuery.first { $0.name == "max_age" }?.value == "0" && again.redirect.first { $0.name == "code" } != nil)
        // Without prompt or max_age nothing extra goes upstream.
        let plain = try await Self.browserSignIn(test, upstream, prompt: [], maxAge: nil)
        #expect(plain.upstreamQuery.first { $0.name == "prompt" } == nil && plain.upstreamQuery.first { $0.name == "max_age" } == nil)
        #expect(plain.redirect.first { $0.name == "code" } != nil)
    }

    @Test func aRefreshMapsTheUpstreamsFreshClaimsUnderTheSameRulesAsASignIn() async throws {
        let upstream = ScriptedUpstream()
        let yaml = Self.yaml.replacingOccurrences(of: "groupsPrefix: \"corp:\"", with: "groupsPrefix: \"corp:\"\n      allowedGroups: [eng]\n      recheckInterval: 0s")
        let test = try await Self.broker(upstream, yaml: yaml)
        defer { test.temporary.remove() }
        let clock = test.clock
        upstream.idToken = { nonce in upstream.rs256(Self.claims(clock, nonce: nonce)) }
        // The refreshed ID token: a new address, still in eng.
        upstream.refreshedIDToken = {
            upstream.rs256(Self.claims(clock, nonce: "", changes: ["email": "ann.new@corp.test", "groups": ["eng"]]).filter { $0.key != "nonce" })
        }
        let tokens = try #require(try await Self.signIn(test, upstream).get())
        func refresh(_ token: String?) async throws -> IssuedTokens {
            try await test.broker.oauth.token(
                try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": try #require(token), "client_id": "phone"], basic: nil))
        }
        let renewed = try await refresh(tokens.refreshToken)
        let link = try #require(try await test.store.identityLink(providerID: "corp", subject: "u-42"))
        #expect(link.claims.email == "ann.new@corp.test" && link.claims.groups == ["corp:eng"], "the link keeps what the upstream says now")
        // Moved out of eng at the upstream: the next refresh is refused, as a sign-in would be.
        upstream.refreshedIDToken = {
            upstream.rs256(Self.claims(clock, nonce: "", changes: ["groups": ["sales"]]).filter { $0.key != "nonce" })
        }
        let refused = await thrownError { _ = try await refresh(renewed.refreshToken) }
        #expect(refused?.code == .invalidGrant && refused?.reason == "group_not_allowed", "\(String(describing: refused))")
    }

    @Test func signsInWithAnRS256OrES256IDTokenAndMapsTheClaims() async throws {
        let upstream = ScriptedUpstream()
        let test = try await Self.broker(upstream)
        defer { test.temporary.remove() }
        let clock = test.clock
        upstream.idToken = { nonce in upstream.rs256(Self.claims(clock, nonce: nonce)) }
        let tokens = try #require(try await Self.signIn(test, upstream).get())
        #expect(try await test.broker.keyring.verify(tokens.accessToken).amr == ["corp"])
        let link = try #require(try await test.store.identityLink(providerID: "corp", subject: "u-42"))
        #expect(link.claims.email == "ann@corp.test" && link.claims.emailVerified)
        #expect(link.claims.groups == ["corp:eng", "corp:ops"])
        upstream.idToken = { nonce in upstream.es256(Self.claims(clock, nonce: nonce)) }
        #expect(try await Self.signIn(test, upstream).get().accessToken.isEmpty == false)
        // The client secret went as HTTP Basic, and the code with its PKCE verifier.
        let exchange = try #require(upstream.requests.last { $0.url.hasSuffix("/token") })
        #expect(exchange.headers.contains { $0.name == "Authorization" && $0.value.hasPrefix("Basic ") })
        #expect(String(decoding: exchange.body ?? Data(), as: UTF8.self).contains("code_verifier="))
    }

    @Test func refusesEveryIDTokenThatFailsACheck() async throws {
        let upstream = ScriptedUpstream()
        let test = try await Self.broker(upstream)
        defer { test.temporary.remove() }
        let clock = test.clock
        let now = clock.now.timeIntervalSince1970
        let hmacKey = SymmetricKey(data: Data("secret".utf8))
        let cases: [(String, @Sendable (String) -> String)] = [
            ("alg none", { nonce in ScriptedUpstream.jws(header: ["alg": "none"], claims: Self.claims(clock, nonce: nonce)) { _ in Data() } }),
            (
                "HS256 with the oct key",
                { nonce in
                    ScriptedUpstream.jws(header: ["alg": "HS256", "kid": "h1"], claims: Self.claims(clock, nonce: nonce)) {
                        Data(HMAC<SHA256>.authenticationCode(for: $0, using: hmacKey))
                    }
                }
            ),
            ("wrong issuer", { upstream.rs256(Self.claims(clock, nonce: $0, changes: ["iss": "https://other.test"])) }),
            ("wrong audience", { upstream.rs256(Self.claims(clock, nonce: $0, changes: ["aud": "someone"])) }),
            ("two audiences without azp", { upstream.rs256(Self.claims(clock, nonce: $0, changes: ["aud": ["broker", "someone"]])) }),
            ("wrong azp", { upstream.rs256(Self.claims(clock, nonce: $0, changes: ["azp": "someone"])) }),
            ("expired beyond the skew", { upstream.rs256(Self.claims(clock, nonce: $0, changes: ["exp": .number(now - 31)])) }),
            ("issued in the future", { upstream.rs256(Self.claims(clock, nonce: $0, changes: ["iat": .number(now + 120)])) }),
            ("wrong nonce", { _ in upstream.rs256(Self.claims(clock, nonce: "another")) }),
            (
                "critical header",
                { nonce in
                    try! ScriptedUpstream.jws(header: ["alg": "RS256", "kid": "r1", "crit": ["exp"]], claims: Self.claims(clock, nonce: nonce)) {
                        try upstream.rsa.signature(for: $0, padding: .insecurePKCS1v1_5).rawRepresentation
                    }
                }
            ),
            ("unknown kid", { upstream.rs256(Self.claims(clock, nonce: $0), kid: "r9") }),
            (
                "ES256 header on the RSA key",
                { nonce in
                    try! ScriptedUpstream.jws(header: ["alg": "ES256", "kid": "r1"], claims: Self.claims(clock, nonce: nonce)) {
                        try upstream.ec.signature(for: $0).rawRepresentation
                    }
                }
            ),
        ]
        for (name, token) in cases {
            upstream.idToken = token
            let result = try await Self.signIn(test, upstream)
            guard case .failure(let refusal) = result else {
                Issue.record("\(name) signed someone in")
                continue
            }
            #expect(refusal.code == "invalid_id_token", "\(name): \(refusal.code)")
        }
        #expect(try await test.store.accounts(limit: 10, offset: 0).isEmpty)
        // Within the skew an ID token is still good.
        upstream.idToken = { upstream.rs256(Self.claims(clock, nonce: $0, changes: ["exp": .number(now - 20)])) }
        #expect((try? await Self.signIn(test, upstream).get()) != nil)
    }

    @Test func anUnknownKeyIDFetchesTheKeySetAgainAtMostOncePerInterval() async throws {
        let upstream = ScriptedUpstream()
        let test = try await Self.broker(upstream)
        defer { test.temporary.remove() }
        let clock = test.clock
        upstream.idToken = { upstream.rs256(Self.claims(clock, nonce: $0)) }
        _ = try await Self.signIn(test, upstream).get()
        #expect(upstream.jwksFetches == 1)
        upstream.idToken = { upstream.rs256(Self.claims(clock, nonce: $0), kid: "forged") }
        _ = try await Self.signIn(test, upstream)
        _ = try await Self.signIn(test, upstream)
        #expect(upstream.jwksFetches == 2)
        clock.advance(by: 11)
        _ = try await Self.signIn(test, upstream)
        #expect(upstream.jwksFetches == 3)
    }

    @Test func aCallbackIsUsedOnceAndANativeFlowNeedsItsReturnCodeAndVerifier() async throws {
        let upstream = ScriptedUpstream()
        let test = try await Self.broker(upstream)
        defer { test.temporary.remove() }
        let clock = test.clock
        upstream.idToken = { upstream.rs256(Self.claims(clock, nonce: $0)) }
        do {
            _ = try await test.engine.start(FlowRequest(appID: "phone", providerID: "corp"), client: nil)
            Issue.record("a public app started a browser sign-in without PKCE")
        } catch let error as BrokerError {
            #expect(error.code == .invalidRequest)
        }
        let started = try await test.engine.start(
            FlowRequest(appID: "phone", providerID: "corp"), codeChallenge: PKCE.challenge(for: RandomToken.make()), client: nil
        )
        guard case .challenge(let flowID, let challenge, _) = started else { throw FlowDriverError.unexpectedOutcome("no challenge") }
        upstream.nonce = URLComponents(string: challenge.fields["url"]?.stringValue ?? "")?.queryItems?.first { $0.name == "nonce" }?.value ?? ""
        // A bare visit is no answer and changes nothing; another provider's callback URL is refused.
        await #expect(throws: BrokerError.self) { _ = try await test.engine.callback(state: flowID, answer: ChallengeResponse([:]), cookie: nil, crossSitePost: false) }
        await #expect(throws: BrokerError.self) {
            _ = try await test.engine.callback(state: flowID, answer: ChallengeResponse(["code": "c"]), cookie: nil, crossSitePost: false, providerID: "other")
        }
        guard case .redirect(let location) = try await test.engine.callback(state: flowID, answer: ChallengeResponse(["code": "c"]), cookie: nil, crossSitePost: false),
            let code = URLComponents(string: location)?.queryItems?.first(where: { $0.name == "code" })?.value
        else { throw FlowDriverError.unexpectedOutcome("no return code") }
        await #expect(throws: BrokerError.self) {
            _ = try await test.engine.callback(state: flowID, answer: ChallengeResponse(["code": "c"]), cookie: nil, crossSitePost: false)
        }
        do {
            _ = try await test.engine.resume(
                flowID: flowID, answer: ChallengeResponse(["code": .string(code), "codeVerifier": .string(RandomToken.make())]), client: nil)
            Issue.record("a wrong verifier finished the flow")
        } catch let error as BrokerError {
            #expect(error.code == .invalidGrant)
        }
        #expect(try await test.store.flow(id: flowID, now: clock.now) == nil)
    }

    @Test func configMistakesNameTheirPath() {
        var registry = PluginRegistry()
        registry.register(OIDCPlugin.self)
        func issues(_ config: String) -> [String] {
            configIssues("providers:\n  - id: up\n    type: oidc\n    config:\n" + config, registry: registry)
        }
        #expect(issues("      issuer: http://upstream.test\n      clientID: c\n      clientSecret: s\n").contains { $0.hasPrefix("providers[0].config.issuer:") })
        #expect(issues("      issuer: https://u.test\n      clientID: c\n").contains { $0.hasPrefix("providers[0].config.clientSecret:") })
        #expect(
            issues("      issuer: https://u.test\n      clientID: c\n      clientSecret: s\n      scopes: [email]\n").contains {
                $0.hasPrefix("providers[0].config.scopes:")
            })
        #expect(
            issues("      issuer: https://u.test\n      clientID: c\n      clientSecret: s\n      signingAlgorithms: [RS256, HS256]\n")
                .contains { $0.hasPrefix("providers[0].config.signingAlgorithms[1]:") }
        )
        #expect(
            issues("      issuer: https://u.test\n      clientID: c\n      clientSecret: s\n      trustEmail: true\n      insecureSkipEmailVerified: true\n")
                .contains { $0.hasPrefix("providers[0].config.trustEmail:") }
        )
        #expect(
            issues("      issuer: https://u.test\n      clientID: c\n      clientSecret: s\n      extraAuthParameters: {nonce: x}\n")
                .contains { $0.hasPrefix("providers[0].config.extraAuthParameters.nonce:") }
        )
    }
}
