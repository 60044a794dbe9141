import Foundation

/// The end of an account: deregistration by the person or an administrator deletes it and revokes
/// every token it holds, on every node.
extension OAuthService {
    /// `DELETE /v1/account`: the person deletes their own account with an access token from a recent
    /// sign-in (`deregistrationMaxAuthAge`). A stateless sign-in has no account: its subject is revoked.
    public func deregister(accessToken: PresentedToken) async throws {
        let claims = try await authorize(accessToken)
        guard let authTime = claims.authTime, clock.now.timeIntervalSince1970 - Double(authTime) <= Self.deregistrationMaxAuthAge else {
            throw BrokerError(.loginRequired, .forbidden, "Deleting the account needs a recent sign-in (less than 15 minutes ago); sign in again.")
        }
        if claims.stateless {
            try await revoker.subject(claims.sub.value)
            try await store.appendAudit(
                AuditEvent(time: clock.now, type: "account.deregistered", appID: claims.clientID, accountID: claims.sub.value, details: ["stateless": "true"])
            )
            return
        }
        guard try await deleteAccount(id: claims.sub.value, appID: claims.clientID, admin: nil) else {
            throw BrokerError(.invalidToken, .unauthenticated, "The account no longer exists.")
        }
    }

    /// The account a registration started with an access token adds a credential to (a second
    /// device): the token must be this app's, from a stateful sign-in less than 15 minutes ago, since
    /// a new credential outlives the token that added it. Answers the account and, for a DPoP-bound
    /// token, the key its proof (checked here, and used up) was made with.
    public func accountRegistering(with accessToken: PresentedToken, appID: String) async throws -> (accountID: String, dpopJKT: String?) {
        let claims = try await authorize(accessToken)
        guard !claims.stateless else { throw BrokerError.stateless(.accountCredentials) }
        guard claims.clientID == appID else { throw BrokerError(.invalidToken, .unauthenticated, "The access token was issued to another app.") }
        guard let authTime = claims.authTime, clock.now.timeIntervalSince1970 - Double(authTime) <= Self.deregistrationMaxAuthAge else {
            throw BrokerError(.loginRequired, .forbidden, "Adding a credential needs a recent sign-in (less than 15 minutes ago); sign in again.")
        }
        guard try await store.account(id: claims.sub.value) != nil else { throw BrokerError(.invalidToken, .unauthenticated, "The account no longer exists.") }
        return (claims.sub.value, claims.cnf?.jkt)
    }

    /// Deletes an account (by its owner or an admin): what providers keep about it, its identity
    /// links, refresh tokens and codes; its access tokens stop introspecting as active at once.
    /// False when there was no such account.
    public func deleteAccount(id: String, appID: String?, admin: AdminIdentity?) async throws -> Bool {
        // Its browser sessions end first, so that the apps that got tokens in them hear of it.
        try await sessions.endAll(accountID: id, reason: "deregistration", actor: admin?.name)
        for link in try await store.identityLinks(accountID: id) {
            _ = try await plugins.forgetting[link.providerID]?.forget(.identity(subject: link.subject))
        }
        for plugin in plugins.forgetting.values { _ = try await plugin.forget(.account(id: id)) }
        guard try await store.deleteAccount(id: id) else { return false }
        try await ConsentBook(store: store, clock: clock).revokeAll(accountID: id)
        _ = try await AdminRoleBook(store: store, clock: clock).remove(id)
        try await revoker.subject(id)
        var details = ["stateless": "false"]
        if let admin { details.merge(admin.auditDetails) { _, admin in admin } }
        try await store.appendAudit(AuditEvent(time: clock.now, type: "account.deregistered", appID: appID, accountID: id, details: details))
        return true
    }
}
