import Crypto
import Foundation
import GatehousePluginKit
import _CryptoExtras

/// Verifies app-signed JWTs and turns them into identities. Every refusal answers `invalid_grant`
/// on the wire; the precise reason (`bad_signature`, `token_replayed`, ...) goes to the log and the
/// audit log only.
public struct FSSOProvider: IdentityProvider {
    public var traits: PluginTraits { PluginTraits(registration: .federated) }
    public let id: String
    let config: FSSOPlugin.Config
    let environment: PluginEnvironment

    init(id: String, config: FSSOPlugin.Config, environment: PluginEnvironment) {
        self.id = id
        self.config = config
        self.environment = environment
    }

    public func begin(in context: FlowContext) async throws -> FlowStep {
        .challenge(Challenge(type: Self.challenge.type, fields: ["provider": .string(id), "audience": .string(config.audience(for: context.app.id))]))
    }

    /// Asks for the app-signed JWT.
    static let challenge = ChallengeDescription(
        type: "jwt", summary: "A JWT the app's back end signed for the person (RS256).",
        elements: [
            .text("assertion", label: "Assertion", maxLength: 65_536), .detail("provider", .string, "The provider instance."),
            .detail("audience", .string, "The `aud` the JWT must carry."),
        ])

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        do {
            return .identified(try await verify(try answer.string("assertion"), app: context.app))
        } catch let error as BrokerError where error.code == .invalidGrant {
            // A refused assertion is a wrong answer of the flow.
            var refused = error
            refused.kind = .failedAttempt
            throw refused
        }
    }

    public func verifyAssertion(_ assertion: String, for app: AppView) async throws -> ExternalIdentity {
        try await verify(assertion, app: app)
    }

    /// The checks, in the order that never uses a key on a token it should not: size, shape, `alg`,
    /// `kid`, issuer and key, signature, then the claims, and the replay cache last (so that a refused
    /// token does not use up its `jti`).
    func verify(_ token: String, app: AppView) async throws -> ExternalIdentity {
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
        guard audiences.contains(config.audience(for: app.id)) else { throw Self.refused("bad_audience") }
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

        // Single use: remembered in the store (so across restarts and nodes) until the token expires,
        // per issuer and shared by every fsso-jwt instance (two instances trusting the same issuer
        // must not each accept the token once). Hashed parts: no (iss, jti) pair can collide with another.
        let replayKey = "jti:\(Base64URL.sha256(iss)):\(Base64URL.sha256(jti))"
        let replays = environment.storage.shared
        // Records of the per-instance cache of earlier versions still count until they expire (a
        // token accepted just before an upgrade is not accepted again after it).
        let legacyKey = "jti:\(iss):\(jti)"
        guard try await environment.storage.get(Bool.self, key: legacyKey) == nil,
            try await replays.insert(true, key: replayKey, expiresAt: Date(timeIntervalSince1970: expiresAt + skew))
        else {
            throw Self.refused("token_replayed")
        }

        var copied: [String: JSONValue] = ["iss": .string(iss)]
        for name in allowedClaims { if let value = claims[name] { copied[name] = value } }
        return ExternalIdentity(
            providerID: id, subject: "\(iss)|\(subject)", username: subject, claims: IdentityClaims(claims: copied), methods: [Self.method], isTest: isTest
        )
    }

    /// The key for (iss, kid): from config, registered at run time, or an app's test key (which only
    /// that app may use). Returns it with the claims the issuer may set and whether it is a test key.
    /// A key answers only for the apps its issuer (or its registration) names: `issuer_not_allowed`
    /// before any signature work for another app.
    private func key(issuer iss: String, kid: String, app: AppView) async throws -> (_RSA.Signing.PublicKey, [String], Bool) {
        if FSSOKey.isReserved(iss) {
            guard iss.hasPrefix(FSSOKey.testIssuerPrefix) else { throw Self.refused("unknown_issuer") }
            guard iss == FSSOKey.testIssuer(appID: app.id) else { throw Self.refused("issuer_not_allowed") }
            guard let stored = try await stored(issuer: iss, kid: kid), stored.appID == app.id else { throw Self.refused("unknown_kid") }
            guard stored.revokedAt == nil else { throw Self.refused("key_revoked") }
            return (try stored.publicKey(), [], true)
        }
        let configured = config.issuers.first { $0.issuer == iss }
        if let configured, let key = configured.keys.first(where: { $0.kid == kid }) {
            guard configured.apps.contains(app.id) else { throw Self.refused("issuer_not_allowed") }
            return (key.publicKey, configured.allowedClaims, false)
        }
        if let stored = try await stored(issuer: iss, kid: kid), stored.appID == nil, stored.revokedAt == nil {
            // A key answers for the apps it was registered for, and never beyond what a configured
            // issuer allows (keys registered before keys named their apps follow the issuer's).
            let allowed = (stored.apps ?? configured?.apps ?? []).filter { configured?.apps.contains($0) ?? true }
            guard allowed.contains(app.id) else { throw Self.refused("issuer_not_allowed") }
            return (try stored.publicKey(), configured?.allowedClaims ?? [], false)
        }
        throw Self.refused(configured == nil ? "unknown_issuer" : "unknown_kid")
    }

    /// The stored key of exactly (iss, kid). Storage keys join the two with `:`, which issuers contain
    /// too, so the record's own fields must match: a token may not reach another issuer's (or an
    /// app's test) key by moving the separator (`iss: a`, `kid: b:c` against `a:b`, `c`).
    func stored(issuer iss: String, kid: String) async throws -> StoredKey? {
        guard !kid.contains(":"), let stored = try await environment.storage.get(StoredKey.self, key: StoredKey.storageKey(iss, kid))?.value,
            stored.issuer == iss, stored.kid == kid
        else { return nil }
        return stored
    }

    /// `iat`/`exp` in seconds or milliseconds since 1970: a value above 10^11 (the year 5138 in
    /// seconds) can only be milliseconds.
    static func epochSeconds(_ value: JSONValue) -> Double? {
        guard let number = value.numberValue, number.isFinite, number > 0 else { return nil }
        return number > 1e11 ? number / 1000 : number
    }

    /// The `amr` value of a sign-in with an app-signed assertion.
    static let method = "fsso"

    static func refused(_ reason: String) -> BrokerError {
        BrokerError(.invalidGrant, .badRequest, "The assertion is not valid.").because(reason)
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension FSSOProvider: AssertionVerifying {}
extension FSSOProvider: AdminResourceOffering {}
extension FSSOProvider: Forgetting {}
