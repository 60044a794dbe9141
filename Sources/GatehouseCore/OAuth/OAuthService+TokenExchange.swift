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
        // RFC 8693 section 2.1: actor_token_type is required with actor_token, and must not come alone.
        if (exchange.actorToken != nil) != (exchange.actorTokenType != nil) {
            throw BrokerError(.invalidRequest, .badRequest, "actor_token and actor_token_type go together.")
        }
        if let requested = exchange.requestedTokenType, requested != Self.accessTokenType {
            throw BrokerError(.invalidRequest, .badRequest, "Only access tokens are issued (requested_token_type \(Self.accessTokenType)).")
        }
        // The audience first: a client asking for a target it may not have learns nothing about the token.
        // Several targets make one token for all of them (`aud` an array), each one allowed; a target
        // named twice counts once.
        let targets = (exchange.audiences + exchange.resources).uniqued()
        guard !targets.isEmpty else { throw BrokerError(.invalidRequest, .badRequest, "Name the target: audience or resource.") }
        for resource in exchange.resources where !(TokenExchangePolicy.isAudience(resource) && resource.contains(":")) {
            throw BrokerError(.invalidTarget, .badRequest, "resource must be an absolute URI without a fragment.")
        }
        if let refused = targets.first(where: { !policy.audiences.contains($0) }) {
            throw BrokerError(.invalidTarget, .badRequest, "This client may not get tokens for '\(refused)'.")
        }
        let subject = try await exchangedToken(subjectToken, type: subjectType, app: app, role: "subject_token")
        // The subject is a person: a client's own token (client credentials) stands for nobody.
        guard subject.authTime != nil, subject.subject != subject.clientID else { throw Self.unacceptable("subject_token") }
        // An app for provisioned accounts only takes none other by exchange either (a stateless
        // token has no account to be provisioned).
        if app.policy.provisionedOnly {
            guard !subject.stateless else { throw Self.unacceptable("subject_token").because("not_provisioned") }
            try await provisioned.refuseGrantUnlessProvisioned(subject.subject, app: app)
        }
        var act = subject.act
        if let actorToken = exchange.actorToken, let actorType = exchange.actorTokenType {
            let actor = try await exchangedToken(actorToken, type: actorType, app: app, role: "actor_token")
            // RFC 8693 section 4.1: the current actor on top, the earlier ones (the subject token's) nested.
            var members: [String: JSONValue] = ["sub": .string(actor.subject), "client_id": .string(actor.clientID)]
            if let earlier = subject.act { members["act"] = earlier }
            act = .object(members)
        }
        // At most the subject token's scopes, and only those the exchanging app may have at all.
        var scopes = subject.scopes.filter(app.policy.allowedScopes.contains)
        if let requested = request.scopes, !requested.isEmpty {
            if let widened = requested.first(where: { !subject.scopes.contains($0) }) {
                throw BrokerError(.invalidScope, .badRequest, "The scope '\(widened)' is more than the subject token allows; an exchange may only narrow.")
            }
            scopes = try app.policy.grantScopes(requested)
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

    /// RFC 8693 section 2.2.2: a subject or actor token invalid for any reason, or unacceptable by
    /// policy, is `invalid_request`; one message for every reason, so that the answer tells an
    /// exchanging app nothing about tokens it may not present.
    static func unacceptable(_ role: String) -> BrokerError {
        BrokerError(.invalidRequest, .badRequest, "The \(role) is not valid, or not acceptable for this client.").because("\(role)_refused")
    }

    /// Verifies a token presented in an exchange: one the broker issued to an app whose tokens this
    /// client may present (checked first on the unverified claims, as introspection does, so that
    /// how long a refusal takes says nothing about another app's token), valid now, not revoked, and
    /// for an ID token, of a session that is still live.
    func exchangedToken(_ token: String, type: String, app: App, role: String) async throws -> ExchangedToken {
        let refused = Self.unacceptable(role)
        // A `jwt` is whichever of the two its header says (`at+jwt` for access tokens).
        let kind = type == Self.jwtTokenType ? (SigningKeyring.type(of: token) == "at+jwt" ? Self.accessTokenType : Self.idTokenType) : type
        guard kind == Self.accessTokenType || kind == Self.idTokenType else {
            throw BrokerError(.invalidRequest, .badRequest, "\(role)_type '\(type)' is not supported (use \(Self.accessTokenType) or \(Self.idTokenType)).")
        }
        let policy = app.policy.tokenExchange
        func acceptable(_ clientID: String) -> Bool {
            !ConsoleConfig.isBuiltIn(clientID) && policy.accepts(tokensOf: clientID, asApp: app.id)
        }
        // An access token made by an exchange (its `aud` another than its client) is presented by
        // one of its audiences only: a service it was made for, calling on (a chain of delegation).
        func acceptable(clientID: String, audiences: [String]) -> Bool {
            audiences == [clientID] ? acceptable(clientID) : audiences.contains(app.id)
        }
        if kind == Self.accessTokenType {
            guard let claimed = Self.unverifiedClientID(token), acceptable(clientID: claimed.clientID, audiences: claimed.audiences) else { throw refused }
        } else {
            guard let claimed = Self.unverifiedMember("azp", of: token), acceptable(claimed) else { throw refused }
        }
        let exchanged: ExchangedToken
        if kind == Self.accessTokenType {
            guard let claims = try? await verifyAccessToken(token), acceptable(clientID: claims.clientID, audiences: claims.aud.value) else { throw refused }
            exchanged = ExchangedToken(
                subject: claims.sub.value, clientID: claims.clientID, scopes: claims.scope.split(separator: " ").map(String.init), expiresAt: claims.exp.value,
                authTime: claims.authTime, amr: claims.amr, identityProvider: claims.idp, stateless: claims.stateless, family: claims.fid,
                deviceKey: claims.deviceKey, act: claims.act
            )
        } else {
            let now = clock.now
            guard let claims = await keyring.verifyIDTokenHint(token, issuer: tokens.issuer), Date(timeIntervalSince1970: TimeInterval(claims.exp)) > now,
                try await !revocations.isSignedByRevokedKey(token),
                try await !revocations.isSubjectRevoked(claims.sub, issuedAt: Date(timeIntervalSince1970: TimeInterval(claims.iat))),
                try await !revocations.isClientRevoked(claims.azp, issuedAt: Date(timeIntervalSince1970: TimeInterval(claims.iat))),
                // Only an ID token of a browser session that is still live: logout ends what it may be exchanged for.
                let sid = claims.sid, let session = try await store.browserSession(id: sid), session.isLive(at: now)
            else { throw refused }
            exchanged = ExchangedToken(
                subject: claims.sub, clientID: claims.azp, scopes: ["openid"], expiresAt: Date(timeIntervalSince1970: TimeInterval(claims.exp)),
                authTime: claims.authTime, amr: claims.amr, identityProvider: claims.idp, stateless: false, family: nil, deviceKey: nil, act: nil
            )
        }
        if kind == Self.idTokenType, !acceptable(exchanged.clientID) { throw refused }
        return exchanged
    }
}
