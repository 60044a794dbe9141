import Foundation

/// The signed-in person's browser sessions and consents, with their access token: they see them and
/// end or revoke them (`/v1/account/sessions`, `/v1/account/consents`).
extension OAuthService {
    /// The account an access token acts for here: a stateful sign-in's account that still exists,
    /// through a first-party app (a third-party app, one that needs consent, may not see or end the
    /// person's sessions or other apps' consents).
    func accountActing(with accessToken: PresentedToken) async throws -> String {
        let claims = try await authorize(accessToken)
        guard !claims.stateless else { throw BrokerError.stateless(.accountCredentials) }
        guard let app = try await store.app(id: claims.clientID), !app.policy.consentRequired else {
            throw BrokerError(.insufficientScope, .forbidden, "Only the person's first-party apps may manage their sessions and consents.")
        }
        guard try await store.account(id: claims.sub.value) != nil else { throw BrokerError(.invalidToken, .unauthenticated, "The account no longer exists.") }
        return claims.sub.value
    }

    public func sessions(accessToken: PresentedToken) async throws -> [BrowserSession] {
        try await sessions.sessions(accountID: try await accountActing(with: accessToken))
    }

    /// Ends one of the person's sessions, on every node at once.
    public func endSession(_ sessionID: String, accessToken: PresentedToken) async throws {
        let accountID = try await accountActing(with: accessToken)
        guard try await sessions.end(sessionID: sessionID, accountID: accountID, reason: "person") else {
            throw BrokerError(.notFound, .notFound, "No session '\(sessionID)' of this account is open.")
        }
    }

    public func consents(accessToken: PresentedToken) async throws -> [ConsentBook.Grant] {
        try await ConsentBook(store: store, clock: clock).grants(accountID: try await accountActing(with: accessToken))
    }

    /// Forgets the person's consent for an app, and takes back what the consent let it have: the
    /// refresh tokens the app holds for the person, and the access tokens issued with them (on every
    /// node within the revocation list's refresh). Its next sign-in asks again.
    public func revokeConsent(appID: String, accessToken: PresentedToken) async throws {
        try await revokeConsent(appID: appID, accountID: try await accountActing(with: accessToken))
    }

    /// The same for a person signed in to the account page.
    public func revokeConsent(appID: String, accountID: String) async throws {
        let consents = ConsentBook(store: store, clock: clock)
        // Any consent covers the empty set of scopes: one keyed read for "is there one?".
        guard try await consents.covers(accountID: accountID, appID: appID, scopes: []) else {
            throw BrokerError(.notFound, .notFound, "This account has not allowed the app '\(appID)' anything.")
        }
        // The tokens first, the consent last: if anything fails on the way, the consent is still
        // listed and revoking it again finishes the job.
        let families = try await revoker.account(accountID, at: appID)
        _ = try await consents.revoke(accountID: accountID, appID: appID)
        try await store.appendAudit(
            AuditEvent(time: clock.now, type: "consent.revoked", appID: appID, accountID: accountID, details: ["revokedFamilies": String(families.count)])
        )
    }
}
