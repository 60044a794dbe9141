import Foundation

/// Token exchange (RFC 8693): a back end holding a person's token (an access or ID token the broker
/// issued) gets an access token for another audience, as that person, with the same or fewer scopes,
/// and with an actor token, the `act` claim of delegation. Which audiences, and whose tokens, is the
/// exchanging app's policy (`tokenExchange`). The new token never outlives the subject token, keeps
/// its refresh-token family and sign-in key (so logout, device removal and deregistration take it
/// back as they take the original), and comes without a refresh token.
extension OAuthService {
    public static let tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    static let jwtTokenType = "urn:ietf:params:oauth:token-type:jwt"

    /// A subject or actor token, verified: who it stands for and what it allows.
    struct ExchangedToken {
        var subject: String
        var clientID: String
        var scopes: [String]
        var expiresAt: Date
        var authTime: Int?
        var amr: [String]?
        var identityProvider: String?
        var stateless: Bool
        var family: String?
        var deviceKey: String?
        var act: JSONValue?
    }

    func tokenExchange(_ request: TokenRequest, app: App, dpopJKT: String?) async throws -> IssuedTokens {
        let policy = app.policy.tokenExchange
        // A back end exchanges; a public client (an app in a person's hands) may not.
        guard !policy.audiences.isEmpty, app.isConfidential else {
            throw BrokerError(.unauthorizedClient, .badRequest, "This client may not use token exchange.")
        }
        let exchange = request.exchange
        guard let subjectToken = exchange.subjectToken, !subjectToken.isEmpty, let subjectType = exchange.subjectTokenType, !subjectType.isEmpty else {
            throw BrokerError(.invalidRequest, .badRequest, "subject_token and subject_token_type are required.")
        }
        if exchange.actorToken != nil, exchange.actorTokenType == nil {
            throw BrokerError(.invalidRequest, .badRequest, "actor_token_type is required with actor_token.")
        }
        if let requested = exchange.requestedTokenType, requested != Self.accessTokenType {
            throw BrokerError(.invalidRequest, .badRequest, "Only access tokens are issued (requested_token_type \(Self.accessTokenType)).")
        }
        // The audience first: a client asking for a target it may not have learns nothing about the token.
        let targets = exchange.audiences + exchange.resources
        guard !targets.isEmpty else { throw BrokerError(.invalidRequest, .badRequest, "Name the target: audience or resource.") }
        for resource in exchange.resources where !(TokenExchangePolicy.isAudience(resource) && resource.contains(":")) {
            throw BrokerError(.invalidTarget, .badRequest, "resource must be an absolute URI without a fragment.")
        }
        if let refused = targets.first(where: { !policy.audiences.contains($0) }) {
            throw BrokerError(.invalidTarget, .badRequest, "This client may not get tokens for '\(refused)'.")
        }
        let subject = try await exchangedToken(subjectToken, type: subjectType, app: app, role: "subject_token")
        var act = subject.act
        if let actorToken = exchange.actorToken, let actorType = exchange.actorTokenType {
            let actor = try await exchangedToken(actorToken, type: actorType, app: app, role: "actor_token")
            // RFC 8693 section 4.1: the current actor on top, the earlier ones (the subject token's) nested.
            var members: [String: JSONValue] = ["sub": .string(actor.subject), "client_id": .string(actor.clientID)]
            if let earlier = subject.act { members["act"] = earlier }
            act = .object(members)
        }
        var scopes = subject.scopes
        if let requested = request.scopes, !requested.isEmpty {
            if let widened = requested.first(where: { !subject.scopes.contains($0) }) {
                throw BrokerError(.invalidScope, .badRequest, "The scope '\(widened)' is more than the subject token allows; an exchange may only narrow.")
            }
            scopes = requested.uniqued()
        }
        return try await issueExchanged(subject: subject, scopes: scopes, targets: targets, act: act, app: app, dpopJKT: dpopJKT)
    }

    func issueExchanged(subject: ExchangedToken, scopes: [String], targets: [String], act: JSONValue?, app: App, dpopJKT: String?) async throws -> IssuedTokens {
        let now = clock.now
        let expiresAt = min(now.addingTimeInterval(app.policy.accessTokenLifetime.timeInterval), subject.expiresAt)
        var claims = AccessTokenClaims(
            issuer: tokens.issuer, subject: subject.subject, audience: app.id, issuedAt: now, expiresAt: expiresAt, scope: scopes.joined(separator: " "),
            stateless: subject.stateless, authTime: subject.authTime.map { Date(timeIntervalSince1970: TimeInterval($0)) }, amr: subject.amr,
            identityProvider: subject.identityProvider, dpopJKT: dpopJKT, deviceKey: subject.deviceKey, family: subject.family
        )
        claims.aud = .init(value: targets)
        claims.act = act
        let token = try await keyring.sign(claims)
        try await store.appendAudit(
            AuditEvent(
                time: now, type: "token.exchanged", appID: app.id, accountID: subject.stateless ? nil : subject.subject,
                details: ["audience": targets.joined(separator: " "), "subjectClient": subject.clientID, "scope": claims.scope, "delegated": String(act != nil)]
            )
        )
        var issued = IssuedTokens(
            accessToken: token, tokenType: dpopJKT == nil ? "Bearer" : "DPoP", expiresIn: max(0, Int(claims.exp.value.timeIntervalSince(now).rounded(.down))),
            scope: claims.scope
        )
        issued.issuedTokenType = Self.accessTokenType
        return issued
    }

    /// Verifies a token presented in an exchange: one the broker issued, valid now, not revoked, of an
    /// app whose tokens this client may present. Refusals are `invalid_grant` (RFC 8693 section 2.2.2:
    /// the subject or actor token is invalid), a type the broker does not take `invalid_request`.
    func exchangedToken(_ token: String, type: String, app: App, role: String) async throws -> ExchangedToken {
        let invalid = Self.invalidGrant("The \(role) is not valid.")
        let exchanged: ExchangedToken
        // A `jwt` is whichever of the two its header says (`at+jwt` for access tokens).
        let kind = type == Self.jwtTokenType ? (SigningKeyring.type(of: token) == "at+jwt" ? Self.accessTokenType : Self.idTokenType) : type
        switch kind {
        case Self.accessTokenType:
            guard let claims = try? await verifyAccessToken(token) else { throw invalid }
            exchanged = ExchangedToken(
                subject: claims.sub.value, clientID: claims.clientID, scopes: claims.scope.split(separator: " ").map(String.init), expiresAt: claims.exp.value,
                authTime: claims.authTime, amr: claims.amr, identityProvider: claims.idp, stateless: claims.stateless, family: claims.fid,
                deviceKey: claims.deviceKey, act: claims.act
            )
        case Self.idTokenType:
            let now = clock.now
            guard let claims = await keyring.verifyIDTokenHint(token, issuer: tokens.issuer), Date(timeIntervalSince1970: TimeInterval(claims.exp)) > now,
                try await !revocations.isSignedByRevokedKey(token),
                try await !revocations.isSubjectRevoked(claims.sub, issuedAt: Date(timeIntervalSince1970: TimeInterval(claims.iat))),
                try await !revocations.isClientRevoked(claims.azp, issuedAt: Date(timeIntervalSince1970: TimeInterval(claims.iat)))
            else { throw invalid }
            // An ID token of a session that ended stands for nobody signed in any more.
            if let sid = claims.sid, let session = try await store.browserSession(id: sid), session.endedAt != nil { throw invalid }
            exchanged = ExchangedToken(
                subject: claims.sub, clientID: claims.azp, scopes: ["openid"], expiresAt: Date(timeIntervalSince1970: TimeInterval(claims.exp)),
                authTime: claims.authTime, amr: claims.amr, identityProvider: claims.idp, stateless: false, family: nil, deviceKey: nil, act: nil
            )
        default:
            throw BrokerError(.invalidRequest, .badRequest, "\(role)_type '\(type)' is not supported (use \(Self.accessTokenType) or \(Self.idTokenType)).")
        }
        guard app.policy.tokenExchange.accepts(tokensOf: exchanged.clientID, asApp: app.id) else {
            throw Self.invalidGrant("This client may not present tokens issued to '\(exchanged.clientID)'.")
        }
        return exchanged
    }
}
