import Foundation

/// Checks DPoP proofs (RFC 9449 section 4.3): one `DPoP` header, a JWS of type `dpop+jwt` signed with
/// an allowed asymmetric algorithm by the public key in its own `jwk` header, for this request's
/// method and URL, issued within the last five minutes, used once (its `jti` is remembered in the
/// store, so on every node), with the access token's hash (`ath`) where a token is presented, and a
/// server nonce where the app asks for one. Answers the key's RFC 7638 thumbprint, which bound tokens
/// carry as `cnf.jkt`.
public struct DPoPVerifier: Sendable {
    /// The proof algorithms accepted (discovery's `dpop_signing_alg_values_supported`).
    public static let algorithms = ["ES256", "EdDSA", "RS256", "PS256"]
    /// How old a proof may be, and how far ahead of the broker's clock its `iat` may lie.
    public static let maxAge: TimeInterval = 300
    public static let futureSkew: TimeInterval = 60

    let replays: PluginStorage
    public let nonces: DPoPNonces
    let clock: any BrokerClock

    /// `storage` keeps the used `jti`s and the nonce key (a namespace of the core's own).
    public init(storage: PluginStorage, clock: any BrokerClock) {
        self.replays = storage
        self.nonces = DPoPNonces(storage: storage, clock: clock)
        self.clock = clock
    }

    /// Verifies the request's proof; `accessToken` is the token presented with it (resource requests),
    /// whose hash the proof's `ath` must carry. Refusals are `invalid_dpop_proof` (with a reason), or
    /// `use_dpop_nonce` carrying the nonce to use.
    public func verify(_ presentation: DPoPPresentation, accessToken: String? = nil, nonceRequired: Bool) async throws -> String {
        guard presentation.proofs.count == 1, let text = presentation.proofs.first else {
            throw Self.refused("A request carries exactly one DPoP header.", "dpop_header_count")
        }
        guard let proof = CompactJWS(text, maxBytes: 8192) else { throw Self.refused("The DPoP proof is not a JWS with JSON header and claims.", "malformed_proof") }
        guard proof.header["typ"]?.stringValue == "dpop+jwt" else { throw Self.refused("The DPoP proof's typ must be dpop+jwt.", "wrong_typ") }
        guard let algorithm = proof.algorithm, Self.algorithms.contains(algorithm) else {
            throw Self.refused("The DPoP proof's alg must be one of \(Self.algorithms.joined(separator: ", ")).", "alg_not_allowed")
        }
        guard let jwk = proof.header["jwk"] else { throw Self.refused("The DPoP proof has no jwk header.", "missing_jwk") }
        let key: PublicJWK
        do { key = try PublicJWK(jwk) } catch { throw Self.refused("The DPoP proof's jwk is not accepted: \(error.message).", "bad_jwk") }
        guard key.algorithms.contains(algorithm), proof.isSigned(by: key, allowed: Self.algorithms) else {
            throw Self.refused("The DPoP proof's signature is not valid for its jwk.", "bad_signature")
        }
        guard let jti = proof.claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw Self.refused("The DPoP proof needs a jti.", "missing_jti")
        }
        guard proof.claims["htm"]?.stringValue == presentation.method else {
            throw Self.refused("The DPoP proof's htm is not this request's method (\(presentation.method)).", "htm_mismatch")
        }
        guard let htu = proof.claims["htu"]?.stringValue, Self.sameTarget(htu, presentation.url) else {
            throw Self.refused("The DPoP proof's htu is not this request's URL (\(presentation.url)).", "htu_mismatch")
        }
        let now = clock.now
        guard let issuedAt = proof.time("iat") else { throw Self.refused("The DPoP proof needs an iat.", "missing_iat") }
        guard issuedAt >= now.addingTimeInterval(-Self.maxAge), issuedAt <= now.addingTimeInterval(Self.futureSkew) else {
            throw Self.refused("The DPoP proof's iat is too far from the server's time; make a fresh proof.", "stale_proof")
        }
        if let accessToken {
            guard let ath = proof.claims["ath"]?.stringValue, SecretDigest.constantTimeEquals(ath, Base64URL.sha256(accessToken)) else {
                throw Self.refused("The DPoP proof's ath is not the hash of the presented access token.", "ath_mismatch")
            }
        }
        if nonceRequired {
            guard let nonce = proof.claims["nonce"]?.stringValue, try await nonces.isValid(nonce) else {
                var error = BrokerError(.useDPoPNonce, .badRequest, "The DPoP proof must carry the nonce from the DPoP-Nonce header.")
                error.dpopNonce = try await nonces.current()
                throw error
            }
        }
        // Last, so that a refused proof does not use up its jti.
        let replayKey = "jti:" + SecretDigest.sha256Hex("\(key.thumbprint):\(jti)")
        guard try await replays.insert(true, key: replayKey, expiresAt: issuedAt.addingTimeInterval(Self.maxAge + Self.futureSkew)) else {
            throw Self.refused("The DPoP proof was used before; make a fresh one for each request.", "proof_replayed")
        }
        return key.thumbprint
    }

    /// Whether two URLs name the same target for `htu` (RFC 9449 section 4.3): scheme and host without
    /// regard to case, default ports implied, the same path; query and fragment ignored.
    static func sameTarget(_ left: String, _ right: String) -> Bool {
        guard let a = URLComponents(string: left), let b = URLComponents(string: right), let schemeA = a.scheme?.lowercased(),
            let schemeB = b.scheme?.lowercased(), let hostA = a.host?.lowercased(), let hostB = b.host?.lowercased()
        else { return false }
        func port(_ components: URLComponents, _ scheme: String) -> Int? { components.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) }
        func path(_ components: URLComponents) -> String { components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath }
        return schemeA == schemeB && hostA == hostB && port(a, schemeA) == port(b, schemeB) && path(a) == path(b)
    }

    static func refused(_ message: String, _ reason: String) -> BrokerError {
        BrokerError(.invalidDPoPProof, .badRequest, message).because(reason)
    }
}

extension DPoPVerifier {
    /// The key a token request binds its tokens to, as the app's policy says: `off` ignores proofs,
    /// `allowed` checks one when the request has one, `required` refuses a request without.
    public func binding(_ presentation: DPoPPresentation?, app: App) async throws -> String? {
        let mode = app.policy.dpop
        guard mode != .off else { return nil }
        guard let presentation, !presentation.proofs.isEmpty else {
            guard mode == .required else { return nil }
            var error = Self.refused("This app requires DPoP: send a DPoP proof with the request (RFC 9449).", "proof_required")
            if app.policy.dpopNonce { error.dpopNonce = try await nonces.current() }
            throw error
        }
        return try await verify(presentation, nonceRequired: app.policy.dpopNonce)
    }

    /// The nonce to send with a successful answer to a client of `app`, when the app asks for nonces.
    public func nonceToHandOut(for app: App) async throws -> String? {
        app.policy.dpopNonce && app.policy.dpop != .off ? try await nonces.current() : nil
    }
}
