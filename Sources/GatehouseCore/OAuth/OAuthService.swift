import Foundation
import Logging

/// The OAuth 2.0 / OpenID Connect side of the broker: token grants, introspection, revocation,
/// userinfo and deregistration. The server's OAuth routes call only this.
public struct OAuthService: Sendable {
    public let store: any BrokerStore
    public let tokens: TokenIssuer
    public let revocations: RevocationList
    /// Takes back what the broker issued (the only writer of `revocations`).
    public let revoker: Revoker
    public let clients: ClientAuthenticator
    public let plugins: PluginInstances
    public let clock: any BrokerClock
    public let logger: Logger
    /// Checks DPoP proofs at the token endpoint and the broker's resources; nil: DPoP is off.
    public let dpop: DPoPVerifier?
    /// Browser single sign-on sessions and their end (logout on every node, back-channel logout).
    public let sessions: BrowserSessionService
    /// Delivers the outbox: webhook events and back-channel logout tokens.
    public let events: EventDelivery
    /// SCIM's side of sign-in: links, groups.
    public let provisioned: ProvisionedAccounts

    public init(
        store: any BrokerStore, tokens: TokenIssuer, plugins: PluginInstances, clock: any BrokerClock, logger: Logger, apps: AppCache? = nil,
        defaultLockout: LockoutPolicy = LockoutPolicy(), metrics: BrokerMetrics = BrokerMetrics(), dpop: DPoPVerifier? = nil,
        http: any OutboundHTTP = NoOutboundHTTP(), sealer: SecretSealer, events settings: EventSettings = EventSettings(), scim: ScimConfig = ScimConfig()
    ) {
        self.dpop = dpop
        self.provisioned = ProvisionedAccounts(
            store: store, config: scim, trustsEmail: { [plugins] in plugins.identityProviders[$0]?.traits.trustsEmailForLinking ?? false })
        self.store = store
        self.tokens = tokens
        self.revocations = RevocationList(store: store, clock: clock)
        self.revoker = Revoker(list: revocations, store: store, clock: clock)
        let events = EventDelivery(
            store: store, http: http, keyring: tokens.keyring, sealer: sealer, clock: clock, logger: logger, issuer: tokens.issuer, settings: settings)
        self.events = events
        self.sessions = BrowserSessionService(store: store, revoker: revoker, clock: clock, logger: logger, deliverNow: { await events.runOnce(rounds: 1) })
        self.clients = ClientAuthenticator(
            apps: apps ?? AppCache(store: store, clock: clock), failures: FailedAuthenticationLimit(store: store, clock: clock, metrics: metrics),
            defaultLockout: defaultLockout
        )
        self.plugins = plugins
        self.clock = clock
        self.logger = logger
    }

    var keyring: SigningKeyring { tokens.keyring }

    static func invalidGrant(_ message: String) -> BrokerError { BrokerError(.invalidGrant, .badRequest, message) }

    // MARK: - Token endpoint

    public func token(_ request: TokenRequest) async throws -> IssuedTokens {
        let app = try await clients.authenticate(request.client, clientIP: request.clientIP)
        guard let grantType = request.grantType else { throw BrokerError(.invalidRequest, .badRequest, "grant_type is missing.") }
        guard
            [Self.authorizationCodeGrant, Self.refreshTokenGrant, Self.clientCredentialsGrant, Self.jwtBearerGrant, Self.deviceCodeGrant, Self.tokenExchangeGrant]
                .contains(grantType)
        else {
            throw BrokerError(.unsupportedGrantType, .badRequest, "The grant type '\(grantType)' is not supported.")
        }
        // The proof is checked before the grant, so that a refused proof uses up no code or token.
        let dpopJKT = try await dpop?.binding(request.dpop, app: app)
        var issued: IssuedTokens
        switch grantType {
        case Self.authorizationCodeGrant: issued = try await exchangeCode(request, app: app, dpopJKT: dpopJKT)
        case Self.refreshTokenGrant: issued = try await refresh(request, app: app, dpopJKT: dpopJKT)
        case Self.clientCredentialsGrant: issued = try await clientCredentials(request, app: app, dpopJKT: dpopJKT)
        case Self.deviceCodeGrant: issued = try await deviceCode(request, app: app, dpopJKT: dpopJKT)
        case Self.tokenExchangeGrant: issued = try await tokenExchange(request, app: app, dpopJKT: dpopJKT)
        default: issued = try await jwtBearer(request, app: app, dpopJKT: dpopJKT)
        }
        if issued.tokenType == "DPoP", let dpop { issued.dpopNonce = try await dpop.nonceToHandOut(for: app) }
        return issued
    }

    static let authorizationCodeGrant = "authorization_code"
    static let refreshTokenGrant = "refresh_token"
    static let clientCredentialsGrant = "client_credentials"

    func exchangeCode(_ request: TokenRequest, app: App, dpopJKT: String?) async throws -> IssuedTokens {
        guard let code = request.code, let redirectURI = request.redirectURI, let verifier = request.codeVerifier else {
            throw BrokerError(.invalidRequest, .badRequest, "code, redirect_uri and code_verifier are required.")
        }
        let now = clock.now
        let digest = SecretDigest.sha256Hex(code)
        guard let record = try await store.authorizationCode(digest: digest), record.appID == app.id else {
            throw Self.invalidGrant("The code is not valid for this client.")
        }
        // Binding first: only the party holding the verifier can redeem the code, or by replaying it
        // revoke what it issued; a leaked code alone does neither.
        guard record.redirectURI == redirectURI else { throw Self.invalidGrant("redirect_uri does not match the authorization request.") }
        guard PKCE.verify(verifier, against: record.codeChallenge) else { throw Self.invalidGrant("code_verifier does not match the code_challenge.") }
        let reused = Self.invalidGrant("The code was already used; what it issued is revoked.")
        if record.usedAt != nil {
            try await revokeIssued(by: record)
            throw reused
        }
        guard record.expiresAt > now else { throw Self.invalidGrant("The code has expired.") }
        // What the exchange will issue is recorded in the same write that uses the code up.
        let familyID = UUID().uuidString.lowercased()
        let accessTokenID = RandomToken.make(byteCount: 16)
        let accessTokenExpiresAt = now.addingTimeInterval(app.policy.accessTokenLifetime.timeInterval + 1)
        guard
            try await store.redeemAuthorizationCode(
                digest: digest, now: now, familyID: familyID, accessTokenID: accessTokenID, accessTokenExpiresAt: accessTokenExpiresAt
            )
        else {
            // Another request redeemed it a moment ago: treat as reuse, with what that one recorded.
            try await revokeIssued(by: try await store.authorizationCode(digest: digest) ?? record)
            throw reused
        }
        guard let account = try await store.account(id: record.accountID) else { throw Self.invalidGrant("The account no longer exists.") }
        try account.refuseGrantIfDisabled()
        try await provisioned.refuseGrantUnlessProvisioned(account.id, app: app)
        // A code issued in a session that ended meanwhile (a logout racing the redirect) yields nothing.
        if let sessionID = record.sessionID {
            guard let session = try await store.browserSession(id: sessionID), session.isLive(at: now) else {
                throw Self.invalidGrant("The session the code was issued in has ended; sign in again.")
            }
        }
        let issued = try await tokens.issue(
            TokenIssuer.Grant(
                app: app, subject: account.id, accountID: account.id, scopes: record.scopes, methods: record.methods,
                identityProvider: record.identityProvider, authTime: record.authTime, nonce: record.nonce, refreshFamilyID: familyID,
                profile: try await profile(of: account, identityProvider: record.identityProvider, scopes: record.scopes, app: app.id), accessTokenID: accessTokenID,
                dpopJKT: dpopJKT, sessionID: record.sessionID,
                acr: AuthenticationLevel(methods: record.methods, identityProvider: record.identityProvider, plugins: plugins).rawValue
            )
        )
        // A logout that ended the session while these were being written revoked the families it
        // found; this one may have come after its look. Read again, and take it back if so.
        if let sessionID = record.sessionID, !record.scopes.contains("offline_access"),
            try await store.browserSession(id: sessionID).map({ $0.endedAt != nil }) ?? true
        {
            try await revoker.familyForGood(familyID)
            throw Self.invalidGrant("The session the code was issued in has ended; sign in again.")
        }
        return issued
    }

    /// A reused code means it leaked: revoke the refresh-token family and the access token it issued
    /// (RFC 6749 section 4.1.2).
    func revokeIssued(by record: AuthorizationCodeRecord) async throws {
        let now = clock.now
        // For good: it also covers the refresh token the racing exchange is about to insert (a plain
        // insert, which no update of the family can catch).
        if let family = record.issuedFamilyID { try await revoker.familyForGood(family) }
        if let jti = record.issuedAccessTokenID, let expiresAt = record.issuedAccessTokenExpiresAt {
            try await revoker.accessToken(jti: jti, expiresAt: expiresAt)
        }
        try await store.appendAudit(
            AuditEvent(time: now, type: "code.reused", appID: record.appID, accountID: record.accountID, outcome: ErrorCode.invalidGrant.rawValue)
        )
        logger.warning("authorization code reused; issued tokens revoked", metadata: ["app": .string(record.appID)])
    }

    func refresh(_ request: TokenRequest, app: App, dpopJKT: String?) async throws -> IssuedTokens {
        guard let token = request.refreshToken, !token.isEmpty else {
            throw BrokerError(.invalidRequest, .badRequest, "refresh_token is required.")
        }
        let now = clock.now
        let digest = SecretDigest.sha256Hex(token)
        guard let record = try await store.refreshToken(digest: digest), record.appID == app.id else {
            throw Self.invalidGrant("The refresh token is not valid for this client.")
        }
        guard record.revokedAt == nil, try await !revocations.isFamilyRevoked(record.familyID),
            try await !revocations.isClientRevoked(record.appID, issuedAt: record.issuedAt)
        else {
            throw Self.invalidGrant("The refresh token was revoked.")
        }
        guard record.expiresAt > now else { throw Self.invalidGrant("The refresh token has expired.") }
        let successor = try await tokens.successors?.successor(of: token)
        // A rotated token presented again: within the app's grace, the client lost the answer and
        // gets the same successor; otherwise it is a reuse, and the family goes.
        var reissue = false
        if record.usedAt != nil {
            guard try await isRetryWithinGrace(record, successor: successor, app: app, now: clock.now) else { throw try await refreshTokenReused(record, app: app) }
            reissue = true
        }
        var dpopJKT = dpopJKT
        if let bound = record.dpopJKT {
            // RFC 9449 section 5: a bound refresh token goes only with a proof of its key, whatever
            // the app's policy says by now.
            if dpopJKT == nil, let presentation = request.dpop, !presentation.proofs.isEmpty, let dpop {
                dpopJKT = try await dpop.verify(presentation, nonceRequired: app.policy.dpopNonce)
            }
            guard let used = dpopJKT else {
                throw DPoPVerifier.refused("This refresh token is bound to a DPoP key: send a DPoP proof made with it.", "proof_required")
            }
            guard used == bound else { throw DPoPVerifier.refused("The DPoP proof is made with another key than the refresh token is bound to.", "key_mismatch") }
        }
        if reissue, try await !self.successor(successor, answersKey: dpopJKT) { throw try await refreshTokenReused(record, app: app) }
        var scopes = record.scopes
        if let requested = request.scopes, !requested.isEmpty {
            guard requested.allSatisfy(record.scopes.contains) else {
                throw BrokerError(.invalidScope, .badRequest, "A refresh may only narrow the original scopes.")
            }
            scopes = requested
        }
        guard let account = try await store.account(id: record.accountID) else { throw Self.invalidGrant("The account no longer exists.") }
        try account.refuseGrantIfDisabled()
        try await provisioned.refuseGrantUnlessProvisioned(account.id, app: app)
        // Logout ends what a session issued (but offline access): checked here too, so a session end
        // that stopped half-way never leaves its tokens renewable.
        if let sessionID = record.sessionID, !record.scopes.contains("offline_access"), let session = try await store.browserSession(id: sessionID),
            session.endedAt != nil
        {
            // Revoked for good now: the ended session is purged after a day, and with it this reason.
            try await revoker.familyForGood(record.familyID)
            throw Self.invalidGrant("The session this token was issued in has ended.")
        }
        // A device removed while this token was being issued: its revocation may have missed it.
        if let keyID = record.signInKeyID {
            guard let key = try await store.signInKey(id: keyID) else { throw Self.invalidGrant("The device this token was issued to was removed.") }
            // The app's rules for the key hold at every use of its sign-in, as at the sign-in itself
            // (an app switched to requiring attestation stops renewing unattested keys' tokens).
            guard plugins.identityProviders[key.providerID] != nil else {
                throw Self.invalidGrant("The provider this device key was registered with is no longer configured.").because("provider_removed")
            }
            try await plugins.keyUseCheckers[key.providerID]?.checkKeyUse(key, at: app.view)
        }
        // One read of the links serves the recheck and the profile claims.
        var links = try await store.identityLinks(accountID: account.id)
        try await recheck(links: &links, identityProvider: record.identityProvider, account: account)
        var grant = TokenIssuer.Grant(
            app: app, subject: account.id, accountID: account.id, scopes: scopes, methods: record.methods, identityProvider: record.identityProvider,
            authTime: record.authTime, refreshFamilyID: record.familyID, replacingRefreshToken: reissue ? nil : digest,
            profile: try await provisioned.adding(
                groupsOf: account.id, to: Self.profile(of: account, links: links, identityProvider: record.identityProvider, scopes: scopes), scopes: scopes,
                app: app.id),
            refreshTokenScopes: record.scopes, signInKeyID: record.signInKeyID, dpopJKT: dpopJKT, installation: record.installation,
            sessionID: record.sessionID,
            acr: AuthenticationLevel(methods: record.methods, identityProvider: record.identityProvider, plugins: plugins).rawValue
        )
        grant.refreshTokenValue = successor
        grant.reissuesRefreshToken = reissue
        do {
            return try await tokens.issue(grant)
        } catch is TokenIssuer.RefreshTokenAlreadyUsed {
            // Another request rotated it a moment ago (the same client retrying at once): within
            // the grace it gets the same successor; otherwise a reuse.
            if let rotated = try await store.refreshToken(digest: digest), try await isRetryWithinGrace(rotated, successor: successor, app: app, now: clock.now),
                try await self.successor(successor, answersKey: dpopJKT)
            {
                grant.replacingRefreshToken = nil
                grant.reissuesRefreshToken = true
                return try await tokens.issue(grant)
            }
            throw try await refreshTokenReused(record, app: app)
        }
    }

    /// A rotated token came back: it was stolen, or the client is broken. Revoke the family
    /// (RFC 9700 section 4.14.2) and return the error to answer with.
    func refreshTokenReused(_ record: RefreshTokenRecord, app: App) async throws -> BrokerError {
        let now = clock.now
        // The family's access tokens (they carry it as `fid`) stop too.
        let revoked = try await revoker.family(record.familyID)
        try await store.appendAudit(
            AuditEvent(
                time: now, type: "token.reuse_detected", appID: app.id, accountID: record.accountID, outcome: ErrorCode.invalidGrant.rawValue,
                details: ["revoked": String(revoked)]
            )
        )
        logger.warning("refresh token reused; family revoked", metadata: ["app": .string(app.id)])
        return Self.invalidGrant("The refresh token was already used; its whole family is revoked.")
    }

    /// Whether a rotated refresh token presented again is a client retrying within its app's
    /// `refreshReuseGrace`: rotated that recently, not revoked, and its successor (made the same way
    /// on every node) stored in the same family, neither used nor revoked. Never across a revocation
    /// (the family's revocation is checked before), never once the successor itself rotated.
    func isRetryWithinGrace(_ record: RefreshTokenRecord, successor: String?, app: App, now: Date) async throws -> Bool {
        let grace = app.policy.refreshReuseGrace.timeInterval
        // A little earlier than `usedAt` is fine: another node's clock, or a read that waited.
        guard grace > 0, let usedAt = record.usedAt, record.revokedAt == nil, now.timeIntervalSince(usedAt) >= -2, now.timeIntervalSince(usedAt) <= grace, let successor,
            let next = try await store.refreshToken(digest: SecretDigest.sha256Hex(successor)), next.familyID == record.familyID, next.appID == app.id,
            next.usedAt == nil, next.revokedAt == nil, next.expiresAt > now
        else { return false }
        return try await !revocations.isFamilyRevoked(record.familyID)
    }

    /// Whether a retry proving `key` (nil: no proof) may be answered the successor: a successor bound
    /// to a key goes only to the holder of that key; anyone else presenting the old token is a reuse
    /// (the successor went to someone with another key).
    func successor(_ successor: String?, answersKey key: String?) async throws -> Bool {
        guard let successor, let next = try await store.refreshToken(digest: SecretDigest.sha256Hex(successor)) else { return false }
        return next.dpopJKT == nil || next.dpopJKT == key
    }

    /// Asks the provider that identified the account whether the identity is still good, under the
    /// same rules as a sign-in; the claims it read again replace the link's (in the store and in
    /// `links`, so the tokens issued now carry them).
    /// Asks the provider whether it still accepts the identity; a provider that answers takes its
    /// time (a directory, an upstream), so the account is read again afterwards: one disabled or
    /// deprovisioned meanwhile gets nothing.
    func recheck(links: inout [IdentityLink], identityProvider: String?, account: Account) async throws {
        guard let index = links.firstIndex(where: { $0.providerID == identityProvider }) else { return }
        if let reason = try await IdentityRecheckBook(plugins: plugins, store: store).recheck(&links[index]) {
            throw Self.invalidGrant("The identity provider no longer accepts this account.").because(reason)
        }
        guard let identityProvider, plugins.recheckers[identityProvider] != nil else { return }
        guard let current = try await store.account(id: account.id) else { throw Self.invalidGrant("The account no longer exists.") }
        try current.refuseGrantIfDisabled()
    }

    public static let jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// RFC 7523: a JWT an app's back end signed for one of its users, verified by the app's
    /// assertion-verifying providers; the person is linked to an account like any sign-in.
    /// Refusals answer `invalid_grant`; the precise reason is audited.
    func jwtBearer(_ request: TokenRequest, app: App, dpopJKT: String?) async throws -> IssuedTokens {
        guard let assertion = request.assertion, !assertion.isEmpty else {
            throw BrokerError(.invalidRequest, .badRequest, "assertion is required.")
        }
        let verifiers = app.policy.identityProviders.compactMap { plugins.assertionVerifiers[$0] }
        guard !verifiers.isEmpty else {
            throw BrokerError(.unauthorizedClient, .badRequest, "This client may not use the JWT bearer grant.")
        }
        // Refused assertions count against the address and the client id (each costs an RSA check).
        let (identity, provider) = try await clients.guardedAssertion(app: app, clientIP: request.clientIP) {
            () async throws -> (ExternalIdentity, any IdentityProvider) in
            var lastError = BrokerError(.invalidGrant, .badRequest, "The assertion is not valid.").because("unknown_issuer")
            for verifier in verifiers {
                do {
                    return (try await verifier.verifyAssertion(assertion, for: app.view), verifier)
                } catch let error as BrokerError where error.code == .invalidGrant {
                    // The most telling refusal wins: a known issuer's over "unknown_issuer".
                    if lastError.reason == "unknown_issuer" || error.reason != "unknown_issuer" { lastError = error }
                    // Another instance may know the issuer, or allow it for this app.
                    if error.reason != "unknown_issuer" && error.reason != "issuer_not_allowed" { break }
                }
            }
            logger.notice("assertion refused", metadata: ["app": .string(app.id), "reason": .string(lastError.reason ?? "invalid_grant")])
            try await store.appendAudit(
                AuditEvent(
                    time: clock.now, type: "signin.failure", appID: app.id, outcome: lastError.code.rawValue,
                    details: ["reason": lastError.reason ?? "", "grant": "jwt-bearer"])
            )
            throw lastError
        }
        let now = clock.now
        // The grant has no place for a second factor: where the app requires one, only test accounts
        // (which skip it by design) may use the grant; people sign in through a flow.
        if app.policy.secondFactor != nil, !identity.isTest {
            try await store.appendAudit(
                AuditEvent(
                    time: now, type: "signin.failure", appID: app.id, providerID: provider.id, outcome: ErrorCode.invalidGrant.rawValue,
                    details: ["reason": "second_factor_required", "grant": "jwt-bearer"])
            )
            throw BrokerError(.invalidGrant, .badRequest, "This app requires a second factor; sign in through a flow.").because("second_factor_required")
        }
        let scopes = try app.policy.grantScopes(request.scopes)
        if provisioned.config.enabled, try await store.identityLink(providerID: identity.providerID, subject: identity.subject) == nil {
            _ = try await provisioned.linkIfProvisioned(identity, appID: app.id, now: now)
        }
        try await provisioned.refuseUnlessProvisioned(identity, app: app)
        let (account, _, refreshLink) = try await IdentityLinker(store: store, clock: clock).linkRefreshingLater(
            identity, audit: AuditEvent(time: now, type: "account.created", appID: app.id, providerID: provider.id)
        )
        try account.refuseGrantIfDisabled()
        let grant = TokenIssuer.Grant(
            app: app, subject: account.id, accountID: account.id, scopes: scopes, methods: identity.methods + [provider.id], identityProvider: provider.id,
            authTime: now,
            profile: try await provisioned.adding(
                groupsOf: account.id, to: ProfileClaims.make(username: account.username, claims: identity.claims, scopes: scopes), scopes: scopes,
                app: app.id),
            signInKeyID: identity.signInKeyID, dpopJKT: dpopJKT
        )
        let success = AuditEvent(
            time: now, type: "signin.success", appID: app.id, accountID: account.id, providerID: provider.id,
            details: ["grant": "jwt-bearer", "username": account.username]
        )
        // The audit event and the link's refresh go beside the refresh token: one commit instead of
        // three in a row.
        return try await SideBySide.run(
            { try await tokens.issue(grant) },
            beside: {
                try await SideBySide.run({ try await store.appendAudit(success) }, beside: refreshLink)
            })
    }

    func clientCredentials(_ request: TokenRequest, app: App, dpopJKT: String?) async throws -> IssuedTokens {
        guard app.isConfidential, app.policy.clientCredentialsGrant else {
            throw BrokerError(.unauthorizedClient, .badRequest, "This client may not use the client_credentials grant.")
        }
        let personal: Set = ["openid", "profile", "email", "offline_access", "groups"]
        let scopes = try app.policy.grantScopes(request.scopes ?? app.policy.defaultScopes.filter { !personal.contains($0) })
        if let scope = scopes.first(where: personal.contains) {
            throw BrokerError(.invalidScope, .badRequest, "The scope '\(scope)' is not available to a client acting for itself.")
        }
        let issued = try await tokens.issue(
            TokenIssuer.Grant(app: app, subject: app.id, accountID: nil, scopes: scopes, methods: [], identityProvider: nil, authTime: nil, dpopJKT: dpopJKT)
        )
        return issued
    }

    func profile(of account: Account, identityProvider: String?, scopes: [String], app appID: String) async throws -> [String: JSONValue] {
        let needsClaims = scopes.contains("email") || scopes.contains("profile") || scopes.contains("groups")
        let links = needsClaims ? try await store.identityLinks(accountID: account.id) : []
        return try await provisioned.adding(
            groupsOf: account.id, to: Self.profile(of: account, links: links, identityProvider: identityProvider, scopes: scopes), scopes: scopes, app: appID)
    }

    /// The profile claims from the link of the provider that signed the person in (else any link).
    static func profile(of account: Account, links: [IdentityLink], identityProvider: String?, scopes: [String]) -> [String: JSONValue] {
        let claims = (links.first { $0.providerID == identityProvider } ?? links.first)?.claims ?? IdentityClaims()
        return ProfileClaims.make(username: account.username, claims: claims.overlaid(with: account.profile), scopes: scopes)
    }

    /// Deletes the signed-in account, its identity links, everything the providers keep about it, and
    /// every refresh token it holds; its access tokens stop introspecting as active at once. With a
    /// stateless token, every token of that stateless subject is revoked (there is nothing to delete).
    /// How recent the sign-in behind a deregistration must be: deleting an account is final, so a
    /// token kept alive by refreshes for days is not enough (step-up, as for a password change).
    public static let deregistrationMaxAuthAge: TimeInterval = 15 * 60
}
