import Crypto
import FSSO
import Foundation
import GatehouseCore
import GatehouseTesting
import Testing
import _CryptoExtras

/// The `fsso-jwt` plugin: app-signed JWTs through the flow engine and the JWT bearer grant, and every
/// way a token can be wrong. Tokens are assembled here with swift-crypto directly, not with the
/// plugin's own code (the end-to-end tests add tokens made by openssl and PyJWT).
@Suite("FSSO")
struct FSSOTests {
    static let acmeKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let otherKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    static func yaml() -> String {
        func indent(_ pem: String) -> String { pem.split(separator: "\n").map { "                " + $0 }.joined(separator: "\n") }
        return """
            providers:
              - id: acme-sso
                type: fsso-jwt
                config:
                  maxLifetime: 5m
                  clockSkew: 30s
                  appAudiences: {partner: partner-api}
                  issuers:
                    - issuer: acme
                      apps: [notes, strict]
                      allowedClaims: [email]
                      keys:
                        - kid: k1
                          pem: |
            \(indent(acmeKey.publicKey.pkcs1PEMRepresentation))
                    - issuer: other
                      apps: [notes]
                      keys:
                        - kid: o1
                          pem: |
            \(indent(otherKey.publicKey.pemRepresentation))
            apps:
              - id: notes
                policy:
                  identityProviders: [acme-sso]
                  defaultScopes: [openid, profile]
              - id: partner
                policy:
                  identityProviders: [acme-sso]
            """
    }

    static func broker(temporary: TemporaryStore? = nil, clock: TestClock = TestClock()) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(FSSOPlugin.self)
        return try await TestBroker.make(yaml: yaml(), registry: registry, temporary: temporary, clock: clock)
    }

    /// An RS256 JWT signed with `key`, header and claims as given.
    static func jwt(header: [String: JSONValue] = ["alg": "RS256", "kid": "k1", "typ": "JWT"], claims: [String: JSONValue], key: _RSA.Signing.PrivateKey = acmeKey) throws
        -> String
    {
        let head = Base64URL.encode(Data(JSONValue.object(header).serialized()))
        let body = Base64URL.encode(Data(JSONValue.object(claims).serialized()))
        let signature = try key.signature(for: Data("\(head).\(body)".utf8), padding: .insecurePKCS1v1_5)
        return "\(head).\(body).\(Base64URL.encode(signature.rawRepresentation))"
    }

    static func claims(_ clock: TestClock, sub: String = "alice", jti: String = UUID().uuidString, changes: [String: JSONValue] = [:]) -> [String: JSONValue] {
        let now = clock.now.timeIntervalSince1970
        var claims: [String: JSONValue] = [
            "iss": "acme", "sub": .string(sub), "aud": "identity-service", "jti": .string(jti), "iat": .number(now), "exp": .number(now + 60),
            "email": "alice@acme.example", "role": "admin",
        ]
        claims.merge(changes) { _, new in new }
        return claims
    }

    func reason(_ test: TestBroker, _ token: String, app appID: String = "notes") async -> String? {
        let provider = test.broker.plugins.assertionVerifiers["acme-sso"]!
        let app = try! await test.store.app(id: appID)!
        do {
            _ = try await provider.verifyAssertion(token, for: app.view)
            return nil
        } catch let error as BrokerError {
            #expect(error.code == .invalidGrant)
            return error.reason
        } catch {
            return "\(error)"
        }
    }

    @Test func aTokenIsUsedOnceAcrossEveryInstanceThatTrustsItsIssuer() async throws {
        func indent(_ pem: String) -> String { pem.split(separator: "\n").map { "                " + $0 }.joined(separator: "\n") }
        let second = """
              - id: acme-backup
                type: fsso-jwt
                config:
                  issuers:
                    - issuer: acme
                      apps: [notes]
                      keys:
                        - kid: k1
                          pem: |
            \(indent(Self.acmeKey.publicKey.pkcs1PEMRepresentation))
            apps:
            """
        let yaml = Self.yaml().replacingOccurrences(of: "apps:\n  - id: notes", with: second + "\n  - id: notes")
            .replacingOccurrences(of: "identityProviders: [acme-sso]\n    defaultScopes", with: "identityProviders: [acme-sso, acme-backup]\n    defaultScopes")
        var registry = PluginRegistry()
        registry.register(FSSOPlugin.self)
        let test = try await TestBroker.make(yaml: yaml, registry: registry)
        defer { test.temporary.remove() }
        let token = try Self.jwt(claims: Self.claims(test.clock))
        let app = try #require(try await test.store.app(id: "notes"))
        let first = try #require(test.broker.plugins.assertionVerifiers["acme-sso"])
        let backup = try #require(test.broker.plugins.assertionVerifiers["acme-backup"])
        _ = try await first.verifyAssertion(token, for: app.view)
        let replayed = await thrownError { _ = try await backup.verifyAssertion(token, for: app.view) }
        #expect(replayed?.reason == "token_replayed", "the same issuer's token at a second instance is a replay")
        // Another token of the same issuer is fine at the second instance.
        _ = try await backup.verifyAssertion(try Self.jwt(claims: Self.claims(test.clock)), for: app.view)
    }

    @Test func signsInThroughTheFlowAPIAndLinksTheSubject() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "acme-sso"))
        #expect(started.challenge.type == "jwt")
        let first = try await test.finish(started.flowID, answer: ["assertion": .string(try Self.jwt(claims: Self.claims(test.clock)))])
        #expect(first.account?.username == "alice")
        let second = try await test.signIn(
            FlowRequest(appID: "notes", providerID: "acme-sso"), answer: ["assertion": .string(try Self.jwt(claims: Self.claims(test.clock)))])
        #expect(second.account?.id == first.account?.id)
        // Only the allowed custom claim is kept.
        let link = try #require(try await test.store.identityLink(providerID: "acme-sso", subject: "acme|alice"))
        #expect(link.claims.email == "alice@acme.example")
        #expect(link.claims.extra["role"] == nil)
    }

    @Test func exchangesAJWTWithTheBearerGrant() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let form = ["grant_type": OAuthService.jwtBearerGrant, "client_id": "notes", "assertion": try Self.jwt(claims: Self.claims(test.clock, sub: "bob"))]
        let tokens = try await test.broker.oauth.token(try TokenRequest(form: form, basic: nil))
        #expect(tokens.refreshToken != nil)
        #expect(tokens.idToken != nil)
        let claims = try await test.broker.keyring.verify(tokens.accessToken)
        #expect(claims.amr == ["fsso", "acme-sso"])
        #expect(try await test.store.accounts(limit: 10, offset: 0).map(\.username) == ["bob"])
        // The same token again is a replay.
        do {
            _ = try await test.broker.oauth.token(try TokenRequest(form: form, basic: nil))
            Issue.record("a replayed assertion was accepted")
        } catch let error as BrokerError {
            #expect(error.code == .invalidGrant)
            #expect(error.reason == "token_replayed")
        }
        let audit = try await test.store.auditEvents(type: "signin.failure", appID: "notes", accountID: nil, since: nil, limit: 5)
        #expect(audit.first?.details["reason"] == "token_replayed")
        // A later assertion for the same person reaches the same account and refreshes its link.
        test.clock.advance(by: 120)
        let later = [
            "grant_type": OAuthService.jwtBearerGrant, "client_id": "notes",
            "assertion": try Self.jwt(claims: Self.claims(test.clock, sub: "bob", changes: ["email": "bob@acme.example"])),
        ]
        let laterTokens = try await test.broker.oauth.token(try TokenRequest(form: later, basic: nil))
        let subject = try await test.broker.keyring.verify(laterTokens.accessToken).sub.value
        #expect(try await test.store.accounts(limit: 10, offset: 0).map(\.id) == [subject])
        let link = try #require(try await test.store.identityLinks(accountID: subject).first)
        #expect(link.claims.email == "bob@acme.example")
        #expect(link.lastSignInAt == test.clock.now)
    }

    @Test func refusesEveryKindOfBadToken() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let clock = test.clock
        let now = clock.now.timeIntervalSince1970
        let good = Self.claims(clock)
        let publicKeyBytes = Data(Self.acmeKey.publicKey.pkcs1PEMRepresentation.utf8)
        let hsHead = Base64URL.encode(Data(#"{"alg":"HS256","kid":"k1"}"#.utf8))
        let hsBody = Base64URL.encode(Data(JSONValue.object(good).serialized()))
        let hsSignature = HMAC<SHA256>.authenticationCode(for: Data("\(hsHead).\(hsBody)".utf8), using: SymmetricKey(data: publicKeyBytes))
        let noneToken = Base64URL.encode(Data(#"{"alg":"none","kid":"k1"}"#.utf8)) + "." + hsBody + "."
        let valid = try Self.jwt(claims: good)
        var tampered = valid.split(separator: ".").map(String.init)
        tampered[1] = Base64URL.encode(Data(JSONValue.object(Self.claims(clock, sub: "mallory")).serialized()))

        let cases: [(String, String)] = [
            (noneToken, "alg_not_allowed"),
            ("\(hsHead).\(hsBody).\(Base64URL.encode(Data(hsSignature)))", "alg_not_allowed"),
            (try Self.jwt(header: ["alg": "RS256"], claims: good), "missing_kid"),
            (try Self.jwt(header: ["alg": "RS256", "kid": "o1"], claims: good, key: Self.otherKey), "unknown_kid"),
            (try Self.jwt(claims: Self.claims(clock, changes: ["iss": "nobody"])), "unknown_issuer"),
            (try Self.jwt(claims: good, key: Self.otherKey), "bad_signature"),
            (tampered.joined(separator: "."), "bad_signature"),
            (try Self.jwt(claims: Self.claims(clock, changes: ["iat": .number(now - 200), "exp": .number(now - 100)])), "token_expired"),
            (try Self.jwt(claims: Self.claims(clock, changes: ["iat": .number(now + 120), "exp": .number(now + 180)])), "token_from_future"),
            (try Self.jwt(claims: Self.claims(clock, changes: ["exp": .number(now + 600)])), "lifetime_too_long"),
            (try Self.jwt(claims: Self.claims(clock, changes: ["aud": "someone-else"])), "bad_audience"),
            (try Self.jwt(claims: Self.claims(clock, changes: ["sub": .null])), "missing_sub"),
            (try Self.jwt(claims: Self.claims(clock, changes: ["jti": .null])), "missing_jti"),
            ("eyJ!!!.e30.AAAA", "malformed_token"),
            ("a.b", "malformed_token"),
            (String(repeating: "A", count: 9000), "token_too_large"),
        ]
        for (token, expected) in cases {
            #expect(await reason(test, token) == expected, "\(expected)")
        }
        // Nothing above used up the good token's jti.
        #expect(await reason(test, valid) == nil)
        #expect(await reason(test, valid) == "token_replayed")
    }

    @Test func acceptsMillisecondTimestampsAndAudienceLists() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let now = test.clock.now.timeIntervalSince1970
        let token = try Self.jwt(
            claims: Self.claims(
                test.clock,
                changes: [
                    "iat": .number((now * 1000).rounded()), "exp": .number(((now + 60) * 1000).rounded()), "aud": ["other", "identity-service"],
                ]))
        #expect(await reason(test, token) == nil)
    }

    @Test func replayIsRefusedAfterARestartToo() async throws {
        let clock = TestClock()
        let first = try await Self.broker(clock: clock)
        defer { first.temporary.remove() }
        let token = try Self.jwt(claims: Self.claims(clock))
        #expect(await reason(first, token) == nil)
        let restarted = try await Self.broker(temporary: try TemporaryStore.reopen(first.temporary), clock: clock)
        #expect(await reason(restarted, token) == "token_replayed")
    }

    @Test func refusesWeakOrMalformedKeysWithTheirPath() throws {
        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).publicKey.pemRepresentation
        func indent(_ pem: String) -> String { pem.split(separator: "\n").map { "                " + $0 }.joined(separator: "\n") }
        var registry = PluginRegistry()
        registry.register(FSSOPlugin.self)
        let yaml = """
            providers:
              - id: acme-sso
                type: fsso-jwt
                config:
                  issuers:
                    - issuer: acme
                      apps: [notes]
                      keys:
                        - kid: weak
                          pem: |
            \(indent(weak))
                        - kid: junk
                          pem: not a key
            """
        do {
            _ = try ConfigLoader(registry: registry).load(yaml: yaml, environment: [:])
            Issue.record("a 1024-bit key was accepted")
        } catch {
            #expect(error.issues.map(\.description) == ["providers[0].config.issuers[0].keys[0].pem: the key has 1024 bits; at least 2048 are required"])
        }
    }
}

/// An authenticator that always asks again: stands for a second factor real people must pass (device
/// attestation, say) that test accounts skip.
struct EndlessFactor: Authenticator {
    let id: String
    func begin(in context: FlowContext) async throws -> FlowStep {
        .challenge(Challenge(type: "attestation"))
    }
    func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        .challenge(Challenge(type: "attestation"))
    }
    enum Factory: PluginFactory {
        struct Config: Decodable, Sendable {}
        static let typeName = "endless-factor"
        static let challenges = [ChallengeDescription(type: "attestation", summary: "Never passes.")]
        static func make(id: String, config: Config, environment: PluginEnvironment) throws -> EndlessFactor { EndlessFactor(id: id) }
    }
}

extension FSSOTests {
    static let ops = AdminIdentity(name: "ops")

    static func keysBroker() async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(FSSOPlugin.self)
        registry.register(EndlessFactor.Factory.self)
        let yaml =
            yaml() + """

                  - id: strict
                    policy:
                      identityProviders: [acme-sso]
                      authenticators: [attest]
                      secondFactor: attest
                """
        let withFactor = yaml.replacingOccurrences(of: "apps:\n", with: "  - id: attest\n    type: endless-factor\napps:\n")
        return try await TestBroker.make(yaml: withFactor, registry: registry)
    }

    @Test func registeredKeysWorkUntilRemoved() async throws {
        let test = try await Self.keysBroker()
        defer { test.temporary.remove() }
        let betaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let added = try await test.broker.admin.createResourceItem(
            "keys", of: .provider("acme-sso"), fields: ["issuer": "beta", "kid": "b1", "pem": .string(betaKey.publicKey.pkcs1PEMRepresentation), "apps": "notes"],
            by: Self.ops
        )
        #expect(added.event == "key_added")
        let token = try Self.jwt(header: ["alg": "RS256", "kid": "b1"], claims: Self.claims(test.clock, changes: ["iss": "beta"]), key: betaKey)
        #expect(await reason(test, token) == nil)
        let keys = try await test.broker.admin.resourceItems("keys", of: .provider("acme-sso")).items
        #expect(keys.contains { $0["issuer"] == "beta" && $0["kid"] == "b1" && $0["source"] == "registered" && $0["createdBy"] == "ops" })
        _ = try await test.broker.admin.deleteResourceItem("keys", of: .provider("acme-sso"), key: ["beta", "b1"], by: Self.ops)
        let again = try Self.jwt(header: ["alg": "RS256", "kid": "b1"], claims: Self.claims(test.clock, changes: ["iss": "beta"]), key: betaKey)
        #expect(await reason(test, again) == "unknown_issuer")
        // Weak keys are refused with the field at fault.
        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).publicKey.pemRepresentation
        do {
            _ = try await test.broker.admin.createResourceItem(
                "keys", of: .provider("acme-sso"), fields: ["issuer": "beta", "kid": "weak", "pem": .string(weak), "apps": "notes"], by: Self.ops)
            Issue.record("a weak key was registered")
        } catch let error as BrokerError {
            #expect(error.issues.first?.path == "pem")
        }
        // The events are named by the plugin type.
        #expect(try await test.store.auditEvents(type: "fsso-jwt.key_added", appID: nil, accountID: nil, since: nil, limit: 5).count == 1)
        #expect(try await test.store.auditEvents(type: "fsso-jwt.key_removed", appID: nil, accountID: nil, since: nil, limit: 5).first?.details["admin"] == "ops")
    }

    @Test func testKeysRegisterTestAccountsPastTheSecondFactorUntilRevoked() async throws {
        let test = try await Self.keysBroker()
        defer { test.temporary.remove() }
        // A real person on the strict app meets the second factor.
        let real = try await test.engine.resume(
            flowID: try await test.start(FlowRequest(appID: "strict", providerID: "acme-sso")).flowID,
            answer: ChallengeResponse(["assertion": .string(try Self.jwt(claims: Self.claims(test.clock, sub: "real")))]), client: nil
        )
        guard case .challenge(_, let challenge, _) = real else { Issue.record("no second factor"); return }
        #expect(challenge.type == "attestation")

        let generated = try await Self.generateTestKey(test, app: "strict")
        #expect(generated.key.issuer == "gatehouse-test:strict")
        let privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: generated.privateKeyPEM)
        func testToken(sub: String) throws -> String {
            try Self.jwt(
                header: ["alg": "RS256", "kid": .string(generated.key.kid)], claims: Self.claims(test.clock, sub: sub, changes: ["iss": .string(generated.key.issuer)]),
                key: privateKey)
        }
        let signedUp = try await test.signIn(FlowRequest(appID: "strict", providerID: "acme-sso"), answer: ["assertion": .string(try testToken(sub: "tester-1"))])
        #expect(signedUp.account?.isTest == true)
        #expect(try await test.broker.admin.user(id: signedUp.account!.id).testAccount)
        // Only the app the key was made for may use it.
        #expect(await reason(test, try testToken(sub: "tester-2")) == "issuer_not_allowed")
        // The private key was not kept.
        let stored = try await test.store.pluginRecords(namespace: "acme-sso", keyPrefix: "", now: test.clock.now)
        #expect(!stored.contains { String(decoding: $0.value, as: UTF8.self).contains("PRIVATE KEY") })
        #expect(try await test.broker.admin.resourceItems("test-keys", of: .app("strict")).items.map { $0["kid"] } == [.string(generated.key.kid)])
        // Revoked: refused at once.
        _ = try await test.broker.admin.deleteResourceItem("test-keys", of: .app("strict"), key: [generated.key.kid], by: Self.ops)
        let strict = try #require(try await test.store.app(id: "strict"))
        let provider = test.broker.plugins.assertionVerifiers["acme-sso"]!
        do {
            _ = try await provider.verifyAssertion(try testToken(sub: "tester-3"), for: strict.view)
            Issue.record("a revoked test key still worked")
        } catch let error as BrokerError {
            #expect(error.reason == "key_revoked")
        }
        #expect(
            try await test.store.auditEvents(type: "fsso-jwt.test_key_revoked", appID: "strict", accountID: nil, since: nil, limit: 5).first?.details["admin"] == "ops")
    }

    /// `Departure.app`'s contract: a deleted app's test keys go with it, so an app made later with the
    /// same id does not accept them; registered keys stop naming it. Both are audited.
    @Test func aDeletedAppsTestKeysGoWithItAndAnAppMadeAgainWithItsIDRefusesThem() async throws {
        let test = try await Self.keysBroker()
        defer { test.temporary.remove() }
        let generated = try await Self.generateTestKey(test, app: "strict")
        let privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: generated.privateKeyPEM)
        let token = try Self.jwt(
            header: ["alg": "RS256", "kid": .string(generated.key.kid)], claims: Self.claims(test.clock, sub: "qa-1", changes: ["iss": .string(generated.key.issuer)]),
            key: privateKey
        )
        _ = try await test.broker.admin.createResourceItem(
            "keys", of: .provider("acme-sso"),
            fields: [
                "issuer": "beta", "kid": "both", "pem": .string(try _RSA.Signing.PrivateKey(keySize: .bits2048).publicKey.pkcs1PEMRepresentation), "apps": "notes,strict",
            ], by: Self.ops
        )
        try await test.broker.admin.deleteApp(id: "strict", by: Self.ops)
        let left = try await test.store.pluginRecords(namespace: "acme-sso", keyPrefix: "", now: test.clock.now)
        #expect(!left.contains { $0.key.contains("gatehouse-test:strict") }, "the test key is gone")
        #expect(try await test.broker.admin.resourceItems("keys", of: .provider("acme-sso")).items.first { $0["kid"] == "both" }?["apps"] == ["notes"])
        #expect(
            try await test.store.auditEvents(type: "fsso-jwt.test_key_removed", appID: "strict", accountID: nil, since: nil, limit: 5).first?.details["admin"] == "ops")

        _ = try await test.broker.admin.createApp(["id": "strict", "name": "Strict again", "policy": ["identityProviders": ["acme-sso"]]], by: Self.ops)
        let again = try #require(try await test.store.app(id: "strict"))
        let provider = try #require(test.broker.plugins.assertionVerifiers["acme-sso"])
        let refusal = await thrownError(BrokerError.self) { _ = try await provider.verifyAssertion(token, for: again.view) }
        #expect(refusal?.code == .invalidGrant, "the old test key signs nobody into the new app")
    }

    /// A test key for `app` through the generic admin resources, as the admin API and CLI make one.
    static func generateTestKey(_ test: TestBroker, app: String) async throws -> (key: FSSOKey, privateKeyPEM: String) {
        let change = try await test.broker.admin.createResourceItem("test-keys", of: .app(app), fields: [:], by: ops)
        guard case .object(let item) = change.item, let key = item["key"], let pem = change.shownOnce, item["private_key_pem"] == .string(pem) else {
            throw FlowDriverError.unexpectedOutcome("no key in \(change.item)")
        }
        #expect(change.event == "test_key_generated")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return (try decoder.decode(FSSOKey.self, from: Data(key.serialized())), pem)
    }
}

extension FSSOTests {
    @Test func bearerGrantCannotSkipARequiredSecondFactor() async throws {
        let test = try await Self.keysBroker()
        defer { test.temporary.remove() }
        let form = ["grant_type": OAuthService.jwtBearerGrant, "client_id": "strict", "assertion": try Self.jwt(claims: Self.claims(test.clock, sub: "eve"))]
        do {
            _ = try await test.broker.oauth.token(try TokenRequest(form: form, basic: nil))
            Issue.record("the bearer grant skipped the second factor")
        } catch let error as BrokerError {
            #expect(error.code == .invalidGrant)
            #expect(error.reason == "second_factor_required")
        }
        #expect(try await test.store.count(table: .accounts) == 0)
        // A test account may (it skips the factor by design).
        let generated = try await Self.generateTestKey(test, app: "strict")
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: generated.privateKeyPEM)
        let token = try Self.jwt(
            header: ["alg": "RS256", "kid": .string(generated.key.kid)], claims: Self.claims(test.clock, sub: "qa-1", changes: ["iss": .string(generated.key.issuer)]),
            key: key
        )
        let tokens = try await test.broker.oauth.token(
            try TokenRequest(form: ["grant_type": OAuthService.jwtBearerGrant, "client_id": "strict", "assertion": token], basic: nil))
        #expect(tokens.refreshToken != nil)
    }
}

extension FSSOTests {
    /// Storage keys join issuer and kid with `:`, which issuers contain too: moving the separator must
    /// not reach another issuer's key or an app's test key.
    @Test func aKeyAnswersOnlyForItsOwnIssuerAndKid() async throws {
        let test = try await Self.keysBroker()
        defer { test.temporary.remove() }
        let portKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        _ = try await test.broker.admin.createResourceItem(
            "keys", of: .provider("acme-sso"),
            fields: ["issuer": "https://idp.example:8443", "kid": "k1", "pem": .string(portKey.publicKey.pemRepresentation), "apps": ["notes"]], by: Self.ops
        )
        let moved = try Self.jwt(header: ["alg": "RS256", "kid": "8443:k1"], claims: Self.claims(test.clock, changes: ["iss": "https://idp.example"]), key: portKey)
        #expect(await reason(test, moved) != nil, "a key answered for another issuer")
        let right = try Self.jwt(header: ["alg": "RS256", "kid": "k1"], claims: Self.claims(test.clock, changes: ["iss": "https://idp.example:8443"]), key: portKey)
        #expect(await reason(test, right) == nil)

        // An app's test key, reached through `iss: gatehouse-test` and a kid holding the rest.
        let generated = try await Self.generateTestKey(test, app: "strict")
        let testKey = try _RSA.Signing.PrivateKey(pemRepresentation: generated.privateKeyPEM)
        let sideways = try Self.jwt(
            header: ["alg": "RS256", "kid": .string("strict:\(generated.key.kid)")], claims: Self.claims(test.clock, changes: ["iss": "gatehouse-test"]), key: testKey
        )
        #expect(await reason(test, sideways) == "unknown_issuer")
        // Nor can an admin plant a key there, or remove the test key through the issuer keys.
        await #expect(throws: BrokerError.self) {
            _ = try await test.broker.admin.createResourceItem(
                "keys", of: .provider("acme-sso"),
                fields: ["issuer": "gatehouse-test", "kid": "strict:x", "pem": .string(portKey.publicKey.pemRepresentation), "apps": "strict"], by: Self.ops
            )
        }
        await #expect(throws: BrokerError.self) {
            _ = try await test.broker.admin.deleteResourceItem("keys", of: .provider("acme-sso"), key: ["gatehouse-test", "strict:\(generated.key.kid)"], by: Self.ops)
        }
        #expect(try await test.broker.admin.resourceItems("test-keys", of: .app("strict")).items.count == 1)
    }
}

extension FSSOTests {
    /// Two apps share one instance: each issuer (and each registered key) signs people into the apps
    /// it names only, and an app may require its own audience.
    @Test func anIssuerSignsPeopleIntoOnlyTheAppsItNames() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let fromOther = {
            try Self.jwt(header: ["alg": "RS256", "kid": "o1"], claims: Self.claims(test.clock, changes: ["iss": "other", "aud": "partner-api"]), key: Self.otherKey)
        }
        #expect(await reason(test, try fromOther(), app: "partner") == "issuer_not_allowed", "partner accepted an issuer of notes")
        #expect(await reason(test, try Self.jwt(claims: Self.claims(test.clock, changes: ["aud": "partner-api"])), app: "partner") == "issuer_not_allowed")

        // A key registered for partner only.
        let partnerKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let added = try await test.broker.admin.createResourceItem(
            "keys", of: .provider("acme-sso"),
            fields: ["issuer": "partner-idp", "kid": "p1", "pem": .string(partnerKey.publicKey.pemRepresentation), "apps": ["partner"]],
            by: Self.ops
        )
        #expect(added.item["apps"] == ["partner"])
        func partnerToken(aud: String) throws -> String {
            try Self.jwt(header: ["alg": "RS256", "kid": "p1"], claims: Self.claims(test.clock, changes: ["iss": "partner-idp", "aud": .string(aud)]), key: partnerKey)
        }
        #expect(await reason(test, try partnerToken(aud: "partner-api")) == "issuer_not_allowed")
        // Partner requires its own audience: the instance's is not enough.
        #expect(await reason(test, try partnerToken(aud: "identity-service"), app: "partner") == "bad_audience")
        #expect(await reason(test, try partnerToken(aud: "partner-api"), app: "partner") == nil)
        // The flow tells the client which audience to use.
        let started = try await test.start(FlowRequest(appID: "partner", providerID: "acme-sso"))
        #expect(started.challenge.fields["audience"] == "partner-api")

        // A key registered for a configured issuer cannot widen it: acme signs into notes and strict only.
        _ = try await test.broker.admin.createResourceItem(
            "keys", of: .provider("acme-sso"), fields: ["issuer": "acme", "kid": "k9", "pem": .string(partnerKey.publicKey.pemRepresentation), "apps": "partner,notes"],
            by: Self.ops
        )
        let widened = { (app: String) in
            try Self.jwt(
                header: ["alg": "RS256", "kid": "k9"], claims: Self.claims(test.clock, changes: ["aud": app == "partner" ? "partner-api" : "identity-service"]),
                key: partnerKey)
        }
        #expect(await reason(test, try widened("partner"), app: "partner") == "issuer_not_allowed")
        #expect(await reason(test, try widened("notes")) == nil)

        // A key must name its apps.
        do {
            _ = try await test.broker.admin.createResourceItem(
                "keys", of: .provider("acme-sso"), fields: ["issuer": "partner-idp", "kid": "p2", "pem": .string(partnerKey.publicKey.pemRepresentation)], by: Self.ops
            )
            Issue.record("a key without apps was registered")
        } catch let error as BrokerError {
            #expect(error.issues.map(\.path) == ["apps"])
        }
    }

    @Test func anIssuerWithoutAppsIsAConfigErrorWithItsPath() throws {
        var registry = PluginRegistry()
        registry.register(FSSOPlugin.self)
        let yaml = Self.yaml().replacingOccurrences(of: "apps: [notes]\n", with: "\n")
        do {
            _ = try ConfigLoader(registry: registry).load(yaml: yaml, environment: [:])
            Issue.record("an issuer without apps was accepted")
        } catch {
            #expect(error.issues.map(\.description) == ["providers[0].config.issuers[1].apps: is required: name the apps this issuer may sign people into"])
        }
    }
}

extension FSSOTests {
    /// Each refused assertion costs an RSA verification: refusals count against the client id (and
    /// the address) like failed client authentication, and over the limit the grant answers 429.
    @Test func refusedAssertionsAreLimitedPerClientID() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        _ = try await test.broker.admin.patchPolicy(id: "notes", patch: ["lockout": ["maxFailedAuthenticationsPerClient": 3]], by: Self.ops)
        test.clock.advance(by: 2)
        func exchange(_ assertion: String) async throws -> IssuedTokens {
            try await test.broker.oauth.token(
                try TokenRequest(form: ["grant_type": OAuthService.jwtBearerGrant, "client_id": "notes", "assertion": assertion], basic: nil, clientIP: "192.0.2.5")
            )
        }
        let forged = try Self.jwt(claims: Self.claims(test.clock), key: Self.otherKey)
        for _ in 0..<3 {
            do { _ = try await exchange(forged); Issue.record("a forged assertion was accepted") } catch let error as BrokerError { #expect(error.code == .invalidGrant) }
        }
        do {
            _ = try await exchange(forged)
            Issue.record("the client id was not limited")
        } catch let error as BrokerError {
            #expect(error.code == .rateLimited && error.retryAfter != nil)
        }
        // A genuine assertion still passes: knowing an app's id is not enough to lock its users out.
        #expect(try await exchange(try Self.jwt(claims: Self.claims(test.clock))).refreshToken != nil)
    }
}
