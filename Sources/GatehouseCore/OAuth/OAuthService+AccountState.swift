import Foundation

/// Disabling and enabling an account: one state, used by the admin API and CLI, the console and SCIM
/// provisioning. A disabled account signs in through no provider, gets no token at any grant, and
/// every token and session it held ends when it is disabled.
extension OAuthService {
    /// How long after a disable the revocation of the account's access tokens reaches: a request that
    /// read the account just before it was disabled (a sign-in step, a refresh that rechecks with a
    /// directory) issues its token later, within its plugins' longest timeout (120 s), and that token
    /// must be refused too.
    static let disableReach: TimeInterval = 120

    /// Disables the account. In this order: the mark, so that sign-ins and grants from here are
    /// refused; its browser sessions, so that the apps that got tokens in them hear of it; then its
    /// refresh tokens in the store and its access tokens on the revocation list. Answers false when
    /// there is no such account; disabling a disabled account ends what it holds again.
    /// `by` is kept with the state (`admin`, `scim:<client>`); `actor` names who did it in the
    /// `account.disabled` audit event.
    public func disableAccount(id: String, reason: String, by: String, actor: [String: String]) async throws -> Bool {
        guard try await store.setAccountDisabled(id: id, at: clock.now, by: by) else { return false }
        let ended = try await sessions.endAll(accountID: id, reason: "account_disabled", actor: actor["admin"] ?? actor["scimClient"])
        let revoked = try await revoker.disabledSubject(id, reach: Self.disableReach)
        var details = actor
        details["reason"] = reason
        details["sessionsEnded"] = String(ended)
        details["refreshTokensRevoked"] = String(revoked)
        try await store.appendAudit(AuditEvent(time: clock.now, type: "account.disabled", accountID: id, details: details))
        return true
    }

    /// Enables a disabled account again: sign-ins work again; what was revoked stays revoked. With
    /// `onlyIfDisabledBy`, only a disable of that one is lifted (a SCIM client's re-activation does
    /// not undo an administrator's disable). False when there is no such account.
    public func enableAccount(id: String, reason: String, onlyIfDisabledBy: String? = nil, actor: [String: String]) async throws -> Bool {
        guard let account = try await store.account(id: id) else { return false }
        guard account.isDisabled else { return true }
        if let onlyIfDisabledBy, account.disabledBy != onlyIfDisabledBy { return true }
        guard try await store.setAccountDisabled(id: id, at: nil, by: nil) else { return false }
        var details = actor
        details["reason"] = reason
        try await store.appendAudit(AuditEvent(time: clock.now, type: "account.enabled", accountID: id, details: details))
        return true
    }
}
