import Crypto
import Foundation
import GatehouseClient
import GatehouseTesting
import Testing
import _CryptoExtras

/// Everything the SDK's suite talks to, started once for the suite: a real SMTP server, a real
/// OpenLDAP directory (its seed's people), the app registration API's stand-in (custom-api), a second
/// Gatehouse as the upstream OpenID provider (with ursula, who signs in there), and the broker under
/// test, configured with every provider the flows need. `acmeKey` signs the FSSO JWTs of the issuer
/// `acme` (the app back end's part).
final class SDKWorld: SharedTestPeer {
    static let suitePeer = TaskLocal<SDKWorld?>(wrappedValue: nil)
    static let customSecret = "custom-api-secret-0123456789-abcdefgh"
    static let upstreamSecret = "upstream-secret-0123456789-abcdefghijkl"
    static let ursulaPassword = "purple otter lantern"
    static let nativeReturn = "com.example.native:/oauth2redirect"
    /// The origin an Android app's passkeys carry (`android:apk-key-hash:` and its signing certificate's SHA-256).
    static let androidOrigin = "android:apk-key-hash:RzfQ3hFRzAnaKBAwpbVYlOF1VwPkgoQiXOlWMlRx6Fc"

    let smtp: SMTPTestServer
    let slapd: Slapd
    let apiPID: pid_t
    let apiFolder: URL
    let upstream: BrokerProcess
    let broker: BrokerProcess
    let acmeKey: _RSA.Signing.PrivateKey

    init(smtp: SMTPTestServer, slapd: Slapd, apiPID: pid_t, apiFolder: URL, upstream: BrokerProcess, broker: BrokerProcess, acmeKey: _RSA.Signing.PrivateKey) {
        self.smtp = smtp
        self.slapd = slapd
        self.apiPID = apiPID
        self.apiFolder = apiFolder
        self.upstream = upstream
        self.broker = broker
        self.acmeKey = acmeKey
    }

    static func start() async throws -> SDKWorld {
        let smtp = try await SMTPTestServer.start()
        let slapd = try await Slapd.start()
        let acmeKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let acmePEM = acmeKey.publicKey.pemRepresentation.split(separator: "\n").map { "                " + $0 }.joined(separator: "\n")
        let apiFolder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-sdk-api-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: apiFolder, withIntermediateDirectories: true)
        let (apiPID, apiPort) = try await ChildProcess.spawnServer(
            [
                "python3", BrokerProcess.repository.appendingPathComponent("Tests/custom-api/app_api.py").path, "--secret", customSecret, "--port-file",
                apiFolder.appendingPathComponent("port").path, "--log", apiFolder.appendingPathComponent("calls.jsonl").path,
            ],
            portFile: apiFolder.appendingPathComponent("port").path, log: apiFolder.appendingPathComponent("api.log").path
        )
        let ports = try await BrokerProcess.freePorts(2)
        let (upPort, downPort) = (ports[0], ports[1])
        let upstream = try await BrokerProcess.start(
            """
            providers:
              - {id: local, type: local, config: {bcryptCost: 4}}
            apps:
              - id: broker
                secret: \(upstreamSecret)
                redirectURIs: [http://127.0.0.1:\(downPort)/oauth2/callback/upstream]
                policy: {identityProviders: [local], allowedScopes: [openid, profile, email, offline_access], idTokenSigningAlg: ES256}
            """, port: upPort
        )
        let added = await ChildProcess.run([
            "sh", "-c",
            "cd '\(upstream.folder.path)' && printf '%s\\n' '\(ursulaPassword)' | '\(BrokerProcess.binary("gatehouse"))' users add ursula --config gatehouse.yaml",
        ])
        guard added.status == 0 else { throw ChildProcessError(message: "users add ursula: \(added.output)") }
        let broker = try await BrokerProcess.start(
            """
            admin:
              tokens: [{name: sdk-admin, token: \(BrokerProcess.adminToken)}]
            \(smtp.mailYAML())
            providers:
              - {id: local, type: local, config: {bcryptCost: 4}}
              - {id: device, type: device-key}
              - {id: pin, type: pin, config: {hashCost: 4, lockout: {maxFailures: 3, lockoutDuration: 60, permanentAfter: 2}}}
              - {id: email, type: email-code}
              - {id: quickmail, type: email-code, config: {resend: {interval: 0s}}}
              - {id: activation, type: activation, config: {deviceKeys: device, hashCost: 4}}
              - {id: bank, type: custom-api, config: {url: "http://127.0.0.1:\(apiPort)/register", secret: "\(customSecret)"}}
              - {id: eid, type: custom-api, config: {url: "http://127.0.0.1:\(apiPort)/register", secret: "\(customSecret)", mode: two-step}}
              - id: acme-sso
                type: fsso-jwt
                config:
                  issuers:
                    - issuer: acme
                      apps: [backend]
                      keys:
                        - kid: k1
                          pem: |
            \(acmePEM)
              - id: corp
                type: ldap
                config:
                  url: \(slapd.url)
                  bindDN: cn=gatehouse,ou=services,dc=example,dc=org
                  bindPassword: service-secret
                  userSearch: {baseDN: "ou=people,dc=example,dc=org", filter: (objectClass=inetOrgPerson), username: uid, idAttr: entryUUID, emailAttr: mail, nameAttr: displayName}
              - {id: attest, type: device-attestation, config: {apps: {sensor: {testKeys: true}}}}
              - {id: passkeys, type: webauthn, config: {rpID: sdk.example.test, origins: ["\(SDKWorld.androidOrigin)"]}}
              - {id: app-code, type: totp}
              - id: upstream
                type: oidc
                config: {issuer: "http://127.0.0.1:\(upPort)", clientID: broker, clientSecret: "\(upstreamSecret)", clientAuthentication: client_secret_post, signingAlgorithms: [ES256], scopes: [openid, profile]}
            apps:
              - id: phone
                policy:
                  identityProviders: [device]
                  authenticators: [pin]
                  secondFactor: pin
                  selfRegistration: true
                  pinPolicy: {minLength: 5}
                  defaultScopes: [openid, profile]
                  allowedScopes: [openid, profile, offline_access]
                  accessTokenLifetime: 10m
              - id: mobile
                policy: {identityProviders: [activation, device], pinPolicy: {minLength: 5}, defaultScopes: [openid]}
              - id: web
                policy: {identityProviders: [local, email], selfRegistration: true, defaultScopes: [openid, profile, email], allowedScopes: [openid, profile, email]}
              - id: bankapp
                policy: {identityProviders: [bank], selfRegistration: true}
              - id: strict
                policy: {identityProviders: [device], selfRegistration: true, dpop: required, dpopNonce: true}
              - id: backend
                policy: {identityProviders: [acme-sso], selfRegistration: true, defaultScopes: [openid, profile]}
              - id: staff
                policy: {identityProviders: [corp], selfRegistration: true, defaultScopes: [openid, profile, email]}
              - id: eidapp
                policy: {identityProviders: [eid], selfRegistration: true}
              - id: sensor
                policy: {identityProviders: [device], authenticators: [attest], selfRegistration: true, deviceRegistration: {attestation: required}}
              - id: family
                policy: {identityProviders: [local, device, quickmail], selfRegistration: true, deviceRegistration: {account: either}}
              - id: passkeyphone
                policy: {identityProviders: [passkeys], selfRegistration: true}
              - id: authapp
                policy: {identityProviders: [local], authenticators: [app-code], secondFactor: app-code, selfRegistration: true}
              - id: native
                redirectURIs: [\(nativeReturn)]
                policy: {identityProviders: [upstream], selfRegistration: true, defaultScopes: [openid, profile]}
            """, port: downPort
        )
        return SDKWorld(smtp: smtp, slapd: slapd, apiPID: apiPID, apiFolder: apiFolder, upstream: upstream, broker: broker, acmeKey: acmeKey)
    }

    func remove() async {
        await broker.stop()
        await upstream.stop()
        await ChildProcess.terminate(apiPID)
        try? FileManager.default.removeItem(at: apiFolder)
        await smtp.remove()
        await slapd.remove()
    }

    /// A client of `app` on a new installation, with software keys and tokens in memory.
    func client(
        _ app: String, bindTokens: Bool = true, keys: any DeviceKeyStore = SoftwareKeyStore(), tokens: any TokenStore = InMemoryTokenStore(),
        attestation: (any AttestationProvider)? = nil, transport: any HTTPTransport = URLSessionTransport()
    ) -> GatehouseClient {
        GatehouseClient(
            configuration: GatehouseConfiguration(
                baseURL: broker.baseURL, app: app, returnURI: app == "native" ? Self.nativeReturn : nil,
                installation: Installation(platform: .ios, model: "iPhone 16", osVersion: "18.1", appVersion: "2.0", buildType: "release", alias: "Test phone"),
                bindTokens: bindTokens
            ),
            keys: keys, tokens: tokens, attestation: attestation, transport: transport
        )
    }

    /// A JWT the app back end of issuer `acme` signs for `subject` (docs/plugins/fsso.md, "Token rules").
    func acmeJWT(subject: String, audience: String, jti: String = UUID().uuidString) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let header: JSON = ["alg": "RS256", "kid": "k1", "typ": "JWT"]
        let claims: JSON = [
            "iss": "acme", "sub": .string(subject), "aud": .string(audience), "jti": .string(jti), "iat": .number(Double(now)), "exp": .number(Double(now + 120)),
        ]
        let input = "\(Base64.encodeURL(try JSONEncoder().encode(header))).\(Base64.encodeURL(try JSONEncoder().encode(claims)))"
        let signature = try acmeKey.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return "\(input).\(Base64.encodeURL(signature.rawRepresentation))"
    }
}

/// Answers challenges from a script: one closure per challenge type, the errors seen kept.
final class ScriptedDelegate: FlowDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String] = []
    private var errors: [GatehouseError] = []
    private let script: @Sendable (Challenge, GatehouseError?) async throws -> FlowAnswer

    init(_ script: @escaping @Sendable (Challenge, GatehouseError?) async throws -> FlowAnswer) {
        self.script = script
    }

    func answer(_ challenge: Challenge, after error: GatehouseError?) async throws -> FlowAnswer {
        lock.withLock {
            seen.append(challenge.type)
            if let error { errors.append(error) }
        }
        return try await script(challenge, error)
    }

    var challengeTypes: [String] { lock.withLock { seen } }
    var refusals: [GatehouseError] { lock.withLock { errors } }
}

/// Counts the requests to one path, to prove what went on the wire.
final class CountingTransport: HTTPTransport, @unchecked Sendable {
    private let inner = URLSessionTransport()
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        lock.withLock { counts[request.url.path, default: 0] += 1 }
        return try await inner.send(request)
    }

    func count(_ path: String) -> Int { lock.withLock { counts[path] ?? 0 } }
}

/// Makes `test` attestations (docs/plugins/device-attestation.md, "Test registration keys") with a test
/// registration key the admin API issued, as an integration test's AttestationProvider would.
struct TestKeyAttestation: AttestationProvider {
    let kid: String
    let key: P256.Signing.PrivateKey
    let issuer: String
    let asked = Asked()

    /// What the broker asked for, to prove the SDK passed it on.
    final class Asked: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [(challenge: String, formats: [String], requestHash: String?)] = []
        func record(_ value: (String, [String], String?)) { lock.withLock { values.append(value) } }
        var all: [(challenge: String, formats: [String], requestHash: String?)] { lock.withLock { values } }
    }

    func attestation(challenge: String, formats: [String], requestHash: String?, key deviceKey: any DeviceKey) async throws -> AttestationEvidence {
        asked.record((challenge, formats, requestHash))
        let header: JSON = ["alg": "ES256", "kid": .string(kid)]
        let claims: JSON = [
            "aud": .string(issuer), "nonce": .string(challenge), "jkt": .string(deviceKey.thumbprint), "iat": .number(Date().timeIntervalSince1970.rounded(.down)),
        ]
        let input = "\(Base64.encodeURL(try JSONEncoder().encode(header))).\(Base64.encodeURL(try JSONEncoder().encode(claims)))"
        let signature = try key.signature(for: Data(input.utf8))
        return AttestationEvidence(format: "test", fields: ["token": .string("\(input).\(Base64.encodeURL(signature.rawRepresentation))")])
    }
}
