import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport

/// Checks an upstream ID token as OpenID Connect Core section 3.1.3.7 says: a compact JWS whose
/// algorithm is on the allow-list (never `none`, never HMAC, whatever the header says), signed by a
/// key of the upstream's JWKS of that algorithm's type; `iss` exactly the upstream's; `aud` the
/// client id (other audiences only when trusted, and then `azp` must be the client id); `exp` and
/// `iat` within the allowed skew of the broker's clock; the `nonce` of this flow; `at_hash` when
/// present. Every refusal names its reason.
struct IDTokenVerifier: Sendable {
    let config: OIDCConfig
    let directory: UpstreamDirectory
    let clock: any BrokerClock

    /// The most bytes an ID token may have.
    static let maxTokenBytes = 16 * 1024
    /// Registered claims of the token itself, never copied into an identity.
    static let tokenClaims: Set = ["iss", "aud", "exp", "iat", "nbf", "nonce", "at_hash", "c_hash", "s_hash", "azp", "auth_time", "jti", "sid", "acr", "amr"]

    /// The verified claims. `nonce` is nil for an ID token from a refresh (OIDC Core 12.2: no nonce check).
    func verify(_ token: String, nonce: String?, accessToken: String?) async throws(BrokerError) -> [String: JSONValue] {
        guard token.utf8.count <= Self.maxTokenBytes else { throw OIDCError.invalidIDToken("too_large") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])), let payloadBytes = Base64URL.decode(String(parts[1])),
            let signature = Base64URL.decode(String(parts[2])),
            case .object(let header)? = try? JSONDecoder().decode(JSONValue.self, from: headerBytes),
            case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: payloadBytes)
        else { throw OIDCError.invalidIDToken("malformed") }
        guard let alg = header["alg"]?.stringValue, config.signingAlgorithms.contains(alg), OIDCConfig.supportedAlgorithms.contains(alg) else {
            throw OIDCError.invalidIDToken("algorithm_not_allowed")
        }
        // RFC 7515 section 4.1.11: extensions this verifier does not understand make the token unusable.
        if header["crit"] != nil { throw OIDCError.invalidIDToken("unsupported_critical_header") }
        let kid = header["kid"]?.stringValue
        let keys = try await directory.keys(kid: kid, alg: alg)
        guard !keys.isEmpty else { throw OIDCError.invalidIDToken("unknown_key") }
        let input = Data(parts[0].utf8) + Data(".".utf8) + Data(parts[1].utf8)
        guard keys.contains(where: { $0.verifies(signature, over: input, alg: alg) }) else { throw OIDCError.invalidIDToken("bad_signature") }

        guard claims["iss"]?.stringValue == config.issuer else { throw OIDCError.invalidIDToken("wrong_issuer") }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let single)?: audiences = [single]
        case .array(let many)?: audiences = many.compactMap(\.stringValue)
        default: audiences = []
        }
        guard audiences.contains(config.clientID) else { throw OIDCError.invalidIDToken("wrong_audience") }
        guard audiences.allSatisfy({ $0 == config.clientID || config.trustedAudiences.contains($0) }) else {
            throw OIDCError.invalidIDToken("untrusted_audience")
        }
        if let azp = claims["azp"] {
            guard azp.stringValue == config.clientID else { throw OIDCError.invalidIDToken("wrong_authorized_party") }
        } else if audiences.count > 1 {
            throw OIDCError.invalidIDToken("missing_authorized_party")
        }
        let now = clock.now.timeIntervalSince1970
        let skew = config.clockSkew.timeInterval
        guard let exp = claims["exp"]?.numberValue, let iat = claims["iat"]?.numberValue else { throw OIDCError.invalidIDToken("missing_times") }
        guard exp > now - skew else { throw OIDCError.invalidIDToken("expired") }
        guard iat <= now + skew else { throw OIDCError.invalidIDToken("issued_in_future") }
        if let nbf = claims["nbf"]?.numberValue, nbf > now + skew { throw OIDCError.invalidIDToken("not_yet_valid") }
        if let nonce {
            guard let sent = claims["nonce"]?.stringValue, SecretDigest.constantTimeEquals(sent, nonce) else { throw OIDCError.invalidIDToken("wrong_nonce") }
        }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw OIDCError.invalidIDToken("missing_subject") }
        if let atHash = claims["at_hash"]?.stringValue, let accessToken {
            guard SecretDigest.constantTimeEquals(atHash, Self.tokenHash(accessToken, alg: alg)) else { throw OIDCError.invalidIDToken("wrong_at_hash") }
        }
        return claims
    }

    /// OIDC Core section 3.1.3.6: the left half of the token's hash with the ID token's algorithm's
    /// hash function (SHA-512 for Ed25519), base64url.
    static func tokenHash(_ token: String, alg: String) -> String {
        let data = Data(token.utf8)
        if alg == "EdDSA" { return Base64URL.encode(Data(SHA512.hash(data: data)).prefix(32)) }
        return Base64URL.encode(Data(SHA256.hash(data: data)).prefix(16))
    }
}
