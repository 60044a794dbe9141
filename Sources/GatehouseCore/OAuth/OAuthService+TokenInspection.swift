import Foundation

/// What resource servers and apps ask about tokens the broker issued: verification, introspection
/// (RFC 7662), revocation (RFC 7009) and userinfo (OIDC Core section 5.3).
extension OAuthService {
    /// Verifies an access token and checks it is not revoked.
    public func verifyAccessToken(_ token: String, expiredGrace: TimeInterval = 0) async throws -> AccessTokenClaims {
        let claims = try await keyring.verify(token, expiredGrace: expiredGrace)
        // A revoked signing key: refused on every node within the list's refresh, before the node re-reads its keys.
        if try await revocations.isSignedByRevokedKey(token) {
            throw BrokerError(.invalidToken, .unauthenticated, "The access token was signed by a revoked key.")
        }
        if try await revocations.isRevoked(claims) {
            throw BrokerError(.invalidToken, .unauthenticated, "The access token was revoked.")
        }
        return claims
    }

    /// Checks an access token a request presented to one of the broker's own resources (userinfo,
    /// the account API): valid, not revoked, and for a DPoP-bound token (`cnf.jkt`) presented with the
    /// `DPoP` scheme and a proof made with its key for this request, carrying the token's hash (RFC
    /// 9449 section 7). A bound token presented as a bearer token is refused, as is an unbound one
    /// presented with the `DPoP` scheme.
    /// The refusal's reason when a DPoP-bound token comes with the Bearer scheme: the answer then
    /// offers both challenges (RFC 9449 section 7.2).
    public static let boundTokenAsBearer = "dpop_bound_token_as_bearer"

    public func authorize(_ presented: PresentedToken, expiredGrace: TimeInterval = 0) async throws -> AccessTokenClaims {
        let claims = try await verifyAccessToken(presented.token, expiredGrace: expiredGrace)
        // A token made for another service (a token exchange's audience) is not for the broker's own
        // resources (RFC 9068 section 4: a resource server takes only tokens whose aud names it).
        guard claims.aud.value == [claims.clientID] else {
            throw BrokerError(.invalidToken, .unauthenticated, "This access token is for another audience.")
        }
        guard let bound = claims.cnf?.jkt else {
            if presented.scheme == .dpop {
                throw BrokerError(.invalidToken, .unauthenticated, "This access token is not bound to a DPoP key; present it with the Bearer scheme.")
            }
            return claims
        }
        guard presented.scheme == .dpop else {
            throw BrokerError(.invalidToken, .unauthenticated, "This access token is bound to a DPoP key; present it with the DPoP scheme and a proof.")
                .because(Self.boundTokenAsBearer)
        }
        guard let dpop, let presentation = presented.dpop, !presentation.proofs.isEmpty else {
            throw DPoPVerifier.refused("A DPoP-bound access token needs a DPoP proof with each request.", "proof_required")
        }
        let nonceRequired = try await clients.apps.app(id: claims.clientID)?.policy.dpopNonce ?? false
        let jkt = try await dpop.verify(presentation, accessToken: presented.token, nonceRequired: nonceRequired)
        guard jkt == bound else { throw DPoPVerifier.refused("The DPoP proof is made with another key than the one the token is bound to.", "key_mismatch") }
        return claims
    }

    /// RFC 7662. Only confidential clients may introspect. A client learns about the access tokens
    /// issued to it, and to the apps its policy's `introspectTokensOf` names; refresh tokens only
    /// about its own. Every other token answers `{"active": false}`, as an unknown one does.
    public func introspect(token: String, client: ClientCredentials?, clientIP: String? = nil) async throws -> [String: JSONValue] {
        let app = try await clients.authenticate(client, clientIP: clientIP)
        guard app.isConfidential else { throw BrokerError(.invalidClient, .unauthenticated, "Introspection needs a confidential client.") }
        let inactive: [String: JSONValue] = ["active": false]
        if token.contains(".") {
            // Whose token it claims to be is read before any verification, so that how long the
            // answer takes tells a caller nothing about another app's token.
            // A resource server also learns about the tokens made for it (a token exchange's `aud`).
            guard let claimed = Self.unverifiedClientID(token),
                app.policy.mayIntrospect(tokensOf: claimed.clientID, asApp: app.id) || claimed.audiences.contains(app.id),
                let claims = try? await verifyAccessToken(token),
                app.policy.mayIntrospect(tokensOf: claims.clientID, asApp: app.id) || claims.aud.value.contains(app.id)
            else { return inactive }
            let audience: JSONValue = claims.aud.value.count == 1 ? .string(claims.aud.value[0]) : .array(claims.aud.value.map(JSONValue.string))
            var answer: [String: JSONValue] = [
                "active": true, "token_type": "Bearer", "scope": .string(claims.scope), "client_id": .string(claims.clientID),
                "sub": .string(claims.sub.value), "aud": audience, "iss": .string(claims.iss.value),
                "exp": .number(claims.exp.value.timeIntervalSince1970), "iat": .number(claims.iat.value.timeIntervalSince1970),
                "jti": .string(claims.jti.value), "stateless": .bool(claims.stateless),
            ]
            if let authTime = claims.authTime { answer["auth_time"] = .number(Double(authTime)) }
            // RFC 9449 section 6.2: the resource server checks the proof against this key.
            if let jkt = claims.cnf?.jkt {
                answer["cnf"] = ["jkt": .string(jkt)]
                answer["token_type"] = "DPoP"
            }
            if let key = claims.deviceKey { answer["device_key"] = .string(key) }
            if let act = claims.act { answer["act"] = act }
            return answer
        }
        let now = clock.now
        guard let record = try await store.refreshToken(digest: SecretDigest.sha256Hex(token)), record.appID == app.id, record.revokedAt == nil,
            record.usedAt == nil, record.expiresAt > now, try await !revocations.isFamilyRevoked(record.familyID),
            try await !revocations.isClientRevoked(record.appID, issuedAt: record.issuedAt)
        else { return inactive }
        return [
            "active": true, "token_type": "refresh_token", "scope": .string(record.scopes.joined(separator: " ")), "client_id": .string(record.appID),
            "sub": .string(record.accountID), "exp": .number(record.expiresAt.timeIntervalSince1970),
            "iat": .number(record.issuedAt.timeIntervalSince1970),
        ]
    }

    /// The `client_id` and `aud` a JWT's payload names, unverified (nil when it is not a JWT with a
    /// `client_id`).
    static func unverifiedClientID(_ token: String) -> (clientID: String, audiences: [String])? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])) else { return nil }
        // Only these members are decoded: decoding the whole payload into `JSONValue` was a fifth of
        // what an introspection cost.
        guard let claim = try? clientIDDecoder.decode(ClientIDClaim.self, from: payload), let clientID = claim.clientID else { return nil }
        return (clientID, claim.audiences)
    }

    /// One string member of a JWT's payload, unverified.
    static func unverifiedMember(_ name: String, of token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])),
            case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: payload)
        else { return nil }
        return members[name]?.stringValue
    }

    private struct ClientIDClaim: Decodable {
        var clientID: String?
        var audiences: [String] = []
        enum CodingKeys: String, CodingKey {
            case clientID = "client_id"
            case aud
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            clientID = try container.decodeIfPresent(String.self, forKey: .clientID)
            if let one = try? container.decodeIfPresent(String.self, forKey: .aud) {
                audiences = [one]
            } else {
                audiences = (try? container.decodeIfPresent([String].self, forKey: .aud)) ?? []
            }
        }
    }

    private static let clientIDDecoder = JSONDecoder()

    /// RFC 7009: revokes a refresh token (with its family) or an access token of the calling client.
    /// Unknown tokens and tokens of other clients are ignored: the answer is the same either way.
    public func revoke(token: String, client: ClientCredentials?, clientIP: String? = nil) async throws {
        let app = try await clients.authenticate(client, clientIP: clientIP)
        let now = clock.now
        if token.contains(".") {
            guard let claims = try? await keyring.verify(token), claims.clientID == app.id else { return }
            try await revoker.accessToken(jti: claims.jti.value, expiresAt: claims.exp.value)
            try await store.appendAudit(AuditEvent(time: now, type: "token.revoked", appID: app.id, details: ["token_type": "access_token"]))
            return
        }
        guard let record = try await store.refreshToken(digest: SecretDigest.sha256Hex(token)), record.appID == app.id else { return }
        let revoked = try await revoker.family(record.familyID)
        try await store.appendAudit(
            AuditEvent(
                time: now, type: "token.revoked", appID: app.id, accountID: record.accountID, details: ["token_type": "refresh_token", "revoked": String(revoked)])
        )
    }

    /// OIDC Core section 5.3: the signed-in person's claims for the scopes of the access token.
    public func userinfo(accessToken: PresentedToken) async throws -> [String: JSONValue] {
        let claims = try await authorize(accessToken)
        let scopes = claims.scope.split(separator: " ").map(String.init)
        guard scopes.contains("openid") else {
            throw BrokerError(.insufficientScope, .forbidden, "The access token has no openid scope.")
        }
        var answer: [String: JSONValue] = ["sub": .string(claims.sub.value)]
        if !claims.stateless {
            guard let account = try await store.account(id: claims.sub.value) else {
                throw BrokerError(.invalidToken, .unauthenticated, "The account no longer exists.")
            }
            try account.refuseTokenIfDisabled()
            answer.merge(try await profile(of: account, identityProvider: claims.idp, scopes: scopes, app: claims.clientID)) { current, _ in current }
        }
        return answer
    }
}
