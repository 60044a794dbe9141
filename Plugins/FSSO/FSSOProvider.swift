import Crypto
import Foundation
import GatehouseCore
import _CryptoExtras

/// Verifies app-signed JWTs and turns them into identities. Every refusal answers `invalid_grant`
/// on the wire; the precise reason (`bad_signature`, `token_replayed`, ...) goes to the log and the
/// audit log only.
public struct FSSOProvider: AssertionVerifying {
    public let id: String
    let config: FSSOPlugin.Config
    let environment: PluginEnvironment

    init(id: String, config: FSSOPlugin.Config, environment: PluginEnvironment) {
        self.id = id
        self.config = config
        self.environment = environment
    }

    public func begin(_ request: FlowRequest, in context: FlowContext) async throws -> FlowStep {
        .challenge(Challenge(type: "jwt", fields: ["fields": ["assertion"], "provider": .string(id), "audience": .string(config.audience)]), state: FlowState())
    }

    public func resume(_ state: FlowState, with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        do {
            return .identified(try await verify(try answer.string("assertion")), methods: ["fsso"])
        } catch let error as BrokerError where error.code == .invalidGrant {
            // A refused assertion is a wrong answer of the flow.
            var refused = error
            refused.kind = .failedAttempt
            throw refused
        }
    }

    public func verifyAssertion(_ assertion: String, for app: App) async throws -> ExternalIdentity {
        try await verify(assertion)
    }

    /// The checks, in the order that never uses a key on a token it should not: size, shape, `alg`,
    /// `kid`, issuer and key, signature, then the claims, and the replay cache last (so that a refused
    /// token does not use up its `jti`).
    func verify(_ token: String) async throws -> ExternalIdentity {
        guard token.utf8.count <= config.maxTokenBytes else { throw Self.refused("token_too_large") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            case .object(let header)? = try? JSONDecoder().decode(JSONValue.self, from: headerData),
            case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: payloadData)
        else { throw Self.refused("malformed_token") }

        guard header["alg"]?.stringValue == "RS256" else { throw Self.refused("alg_not_allowed") }
        guard let kid = header["kid"]?.stringValue, !kid.isEmpty else { throw Self.refused("missing_kid") }
        guard let iss = claims["iss"]?.stringValue, let issuer = config.issuers.first(where: { $0.issuer == iss }) else {
            throw Self.refused("unknown_issuer")
        }
        guard let key = issuer.keys.first(where: { $0.kid == kid }) else { throw Self.refused("unknown_kid") }
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        guard key.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput, padding: .insecurePKCS1v1_5) else {
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
        for name in issuer.allowedClaims { if let value = claims[name] { copied[name] = value } }
        return ExternalIdentity(providerID: id, subject: "\(iss)|\(subject)", username: subject, claims: copied)
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
