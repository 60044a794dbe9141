import Crypto
import Foundation
import GatehouseCore
import _CryptoExtras

/// Verifies app-signed JWTs and turns them into identities. Every refusal answers `invalid_grant`
/// on the wire; the precise reason (`bad_signature`, `token_replayed`, ...) goes to the log and the
/// audit log only.
public struct FSSOProvider: AssertionKeyManaging {
    public let id: String
    let config: FSSOPlugin.Config
    let environment: PluginEnvironment

    init(id: String, config: FSSOPlugin.Config, environment: PluginEnvironment) {
        self.id = id
        self.config = config
        self.environment = environment
    }

    public func begin(_ request: FlowRequest, in context: FlowContext) async throws -> FlowStep {
        .challenge(Challenge(type: Self.challenge.type, fields: ["provider": .string(id), "audience": .string(config.audience)]), state: FlowState())
    }

    /// Asks for the app-signed JWT.
    static let challenge = ChallengeDescription(
        type: "jwt", summary: "A JWT the app's back end signed for the person (RS256).",
        inputs: [ChallengeInput(name: "assertion", label: "Assertion", maxLength: 65_536)],
        details: [ChallengeDetail("provider", .string, "The provider instance."), ChallengeDetail("audience", .string, "The `aud` the JWT must carry.")]
    )

    public func resume(_ state: FlowState, with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        do {
            return .identified(try await verify(try answer.string("assertion"), app: context.app), methods: ["fsso"])
        } catch let error as BrokerError where error.code == .invalidGrant {
            // A refused assertion is a wrong answer of the flow.
            var refused = error
            refused.kind = .failedAttempt
            throw refused
        }
    }

    public func verifyAssertion(_ assertion: String, for app: App) async throws -> ExternalIdentity {
        try await verify(assertion, app: app)
    }

    /// The checks, in the order that never uses a key on a token it should not: size, shape, `alg`,
    /// `kid`, issuer and key, signature, then the claims, and the replay cache last (so that a refused
    /// token does not use up its `jti`).
    func verify(_ token: String, app: App) async throws -> ExternalIdentity {
        guard token.utf8.count <= config.maxTokenBytes else { throw Self.refused("token_too_large") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            case .object(let header)? = try? JSONDecoder().decode(JSONValue.self, from: headerData),
            case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: payloadData)
        else { throw Self.refused("malformed_token") }

        guard header["alg"]?.stringValue == "RS256" else { throw Self.refused("alg_not_allowed") }
        guard let kid = header["kid"]?.stringValue, !kid.isEmpty else { throw Self.refused("missing_kid") }
        guard let iss = claims["iss"]?.stringValue else { throw Self.refused("unknown_issuer") }
        let (publicKey, allowedClaims, isTest) = try await key(issuer: iss, kid: kid, app: app)
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        guard publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput, padding: .insecurePKCS1v1_5) else {
            throw Self.refused("bad_signature")
        }

        let audiences: [String] =
            switch claims["aud"] {
            case .string(let one)?: [one]
            case .array(let many)?: many.compactMap(\.stringValue)
            default: []
            }
        guard audiences.contains(config.audience) else { throw Self.refused("bad_audience") }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw Self.refused("missing_sub") }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty else { throw Self.refused("missing_jti") }
        guard let issuedAt = claims["iat"].flatMap(Self.epochSeconds), let expiresAt = claims["exp"].flatMap(Self.epochSeconds) else {
            throw Self.refused("missing_times")
        }
        let now = environment.clock.now.timeIntervalSince1970
        let skew = config.clockSkew.timeInterval
        guard expiresAt > issuedAt else { throw Self.refused("invalid_times") }
        guard expiresAt + skew > now else { throw Self.refused("token_expired") }
        guard issuedAt - skew <= now else { throw Self.refused("token_from_future") }
        guard expiresAt - issuedAt <= config.maxLifetime.timeInterval else { throw Self.refused("lifetime_too_long") }

        // Single use: remembered in the store (so across restarts and nodes) until the token expires.
        let replayKey = "jti:\(iss):\(jti)"
        guard try await environment.storage.insert(true, key: replayKey, expiresAt: Date(timeIntervalSince1970: expiresAt + skew)) else {
            throw Self.refused("token_replayed")
        }

        var copied: [String: JSONValue] = ["iss": .string(iss)]
        for name in allowedClaims { if let value = claims[name] { copied[name] = value } }
        if isTest { copied[testAccountClaim] = true }
        return ExternalIdentity(providerID: id, subject: "\(iss)|\(subject)", username: subject, claims: copied)
    }

    /// The key for (iss, kid): from config, registered at run time, or an app's test key (which only
    /// that app may use). Returns it with the claims the issuer may set and whether it is a test key.
    private func key(issuer iss: String, kid: String, app: App) async throws -> (_RSA.Signing.PublicKey, [String], Bool) {
        if iss.hasPrefix(AssertionKey.testIssuer(appID: "")) {
            guard iss == AssertionKey.testIssuer(appID: app.id) else { throw Self.refused("unknown_issuer") }
            guard let stored = try await environment.storage.get(StoredKey.self, key: StoredKey.storageKey(iss, kid))?.value else {
                throw Self.refused("unknown_kid")
            }
            guard stored.revokedAt == nil else { throw Self.refused("key_revoked") }
            return (try stored.publicKey(), [], true)
        }
        let configured = config.issuers.first { $0.issuer == iss }
        if let key = configured?.keys.first(where: { $0.kid == kid }) { return (key.publicKey, configured?.allowedClaims ?? [], false) }
        if let stored = try await environment.storage.get(StoredKey.self, key: StoredKey.storageKey(iss, kid))?.value, stored.revokedAt == nil {
            return (try stored.publicKey(), configured?.allowedClaims ?? [], false)
        }
        throw Self.refused(configured == nil ? "unknown_issuer" : "unknown_kid")
    }

    // MARK: - AssertionKeyManaging

    /// A key registered at run time or generated as a test key; only public halves are stored.
    struct StoredKey: Codable, Sendable {
        var issuer: String
        var kid: String
        var pem: String
        var appID: String?
        var createdAt: Date
        var createdBy: String
        var revokedAt: Date?

        static func storageKey(_ issuer: String, _ kid: String) -> String { "key:\(issuer):\(kid)" }

        func publicKey() throws -> _RSA.Signing.PublicKey {
            do {
                return try _RSA.Signing.PublicKey(pemRepresentation: pem)
            } catch {
                throw FSSOProvider.refused("unknown_kid")
            }
        }

        var view: AssertionKey {
            AssertionKey(issuer: issuer, kid: kid, source: appID == nil ? .registered : .test, appID: appID, createdAt: createdAt, createdBy: createdBy, revokedAt: revokedAt)
        }
    }

    public func addKey(issuer: String, kid: String, pem: String, by creator: String) async throws {
        guard !issuer.isEmpty, !kid.isEmpty, !issuer.hasPrefix(AssertionKey.testIssuer(appID: "")) else {
            throw BrokerError(.invalidRequest, .badRequest, "issuer and kid are required; gatehouse-test: issuers are reserved for test keys.")
        }
        do {
            _ = try FSSOPlugin.Config.Key.parse(pem, path: [ConfigPath.Key("pem")])
        } catch let issue as ConfigIssue {
            throw BrokerError(.invalidRequest, .badRequest, issue.description, issues: [issue])
        }
        if config.issuers.first(where: { $0.issuer == issuer })?.keys.contains(where: { $0.kid == kid }) == true {
            throw BrokerError(.conflict, .conflict, "The config already has key '\(kid)' for '\(issuer)'.")
        }
        let record = StoredKey(issuer: issuer, kid: kid, pem: pem, createdAt: environment.clock.now, createdBy: creator)
        guard try await environment.storage.insert(record, key: StoredKey.storageKey(issuer, kid)) else {
            throw BrokerError(.conflict, .conflict, "Key '\(kid)' of '\(issuer)' is already registered.")
        }
    }

    public func removeKey(issuer: String, kid: String) async throws -> Bool {
        guard !issuer.hasPrefix(AssertionKey.testIssuer(appID: "")) else { return false }
        return try await environment.storage.delete(key: StoredKey.storageKey(issuer, kid))
    }

    public func keys() async throws -> [AssertionKey] {
        let configured = config.issuers.flatMap { issuer in issuer.keys.map { AssertionKey(issuer: issuer.issuer, kid: $0.kid, source: .config) } }
        return configured + (try await environment.storage.all(StoredKey.self, keyPrefix: "key:").map(\.value.view))
    }

    public func generateTestKey(appID: String, by creator: String) async throws -> (key: AssertionKey, privateKeyPEM: String) {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let record = StoredKey(
            issuer: AssertionKey.testIssuer(appID: appID), kid: "test-" + RandomToken.make(byteCount: 8), pem: privateKey.publicKey.pemRepresentation,
            appID: appID, createdAt: environment.clock.now, createdBy: creator
        )
        guard try await environment.storage.insert(record, key: StoredKey.storageKey(record.issuer, record.kid)) else {
            throw BrokerError.internalFailure("A test key id collided; try again.")
        }
        return (record.view, privateKey.pemRepresentation)
    }

    public func revokeTestKey(appID: String, kid: String) async throws -> Bool {
        let key = StoredKey.storageKey(AssertionKey.testIssuer(appID: appID), kid)
        guard let stored = try await environment.storage.get(StoredKey.self, key: key), stored.value.revokedAt == nil else { return false }
        var revoked = stored.value
        revoked.revokedAt = environment.clock.now
        return try await environment.storage.replace(revoked, key: key, version: stored.version)
    }

    /// `iat`/`exp` in seconds or milliseconds since 1970: a value above 10^11 (the year 5138 in
    /// seconds) can only be milliseconds.
    static func epochSeconds(_ value: JSONValue) -> Double? {
        guard let number = value.numberValue, number.isFinite, number > 0 else { return nil }
        return number > 1e11 ? number / 1000 : number
    }

    static func refused(_ reason: String) -> BrokerError {
        BrokerError(.invalidGrant, .badRequest, "The assertion is not valid.").because(reason)
    }
}
