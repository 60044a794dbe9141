import Foundation
import Logging

/// Browser single sign-on sessions: finding the one a browser's cookie names, and ending sessions
/// (logout, a person or an admin ending one, deregistration, a password reset). Ending a session is
/// one store write every node reads, then the session's refresh tokens (except `offline_access`
/// ones) and their access tokens are revoked, and the apps that got tokens in it hear of it by
/// back-channel logout, from the outbox (so a node that stops mid-retry loses no logout token).
public struct BrowserSessionService: Sendable {
    let store: any BrokerStore
    let revoker: Revoker
    let clock: any BrokerClock
    let logger: Logger
    /// Sends what is due in the outbox now (rather than at the next delivery round).
    let deliverNow: @Sendable () async -> Void

    public init(store: any BrokerStore, revoker: Revoker, clock: any BrokerClock, logger: Logger, deliverNow: @escaping @Sendable () async -> Void = {}) {
        self.store = store
        self.revoker = revoker
        self.clock = clock
        self.logger = logger
        self.deliverNow = deliverNow
    }

    /// The live session the cookie value names; nil for none, an unknown value, or an ended or expired
    /// session (a cookie replayed after logout finds nothing).
    public func current(cookie: String?) async throws -> BrowserSession? {
        try await store.liveBrowserSession(cookie: cookie, now: clock.now)
    }

    /// The account's live sessions, newest first.
    public func sessions(accountID: String) async throws -> [BrowserSession] {
        try await store.browserSessions(accountID: accountID, now: clock.now)
    }

    /// Ends one session of `accountID` by its id; false when the account has no such live session.
    /// `reason` is audited (`logout`, `person`, `admin`, `password_reset`, `replaced`, `deregistration`).
    @discardableResult
    public func end(sessionID: String, accountID: String, reason: String, actor: String? = nil, wait: Bool = false) async throws -> Bool {
        guard let session = try await store.browserSession(id: sessionID), session.accountID == accountID else { return false }
        return try await end(session, reason: reason, actor: actor, wait: wait)
    }

    /// Ends every live session of the account; returns how many.
    @discardableResult
    public func endAll(accountID: String, reason: String, actor: String? = nil, wait: Bool = false) async throws -> Int {
        var ended = 0
        for session in try await sessions(accountID: accountID) where try await end(session, reason: reason, actor: actor, wait: wait) {
            ended += 1
        }
        return ended
    }

    /// Ends `session`. Only the caller whose write ended it revokes and notifies (two nodes ending
    /// it at once send one logout token per app). The logout tokens go into the outbox; `wait`:
    /// return only after a first delivery round (deregistration, tests); otherwise that round runs
    /// in a task of its own. Retries follow from the outbox, on any node.
    @discardableResult
    public func end(_ session: BrowserSession, reason: String, actor: String? = nil, wait: Bool = false) async throws -> Bool {
        let now = clock.now
        // The tokens first: an end that fails on the way leaves the session live, so ending it again
        // (the person's next logout, the admin's retry) does all of it, instead of finding the session
        // ended and its tokens still good.
        var revoked = try await revokeTokens(of: session.id, now: now)
        var logoutApps: [String] = []
        for appID in session.appIDs {
            if let app = try await store.app(id: appID), app.policy.logout.backchannelLogoutURI != nil { logoutApps.append(app.id) }
        }
        let payload = String(decoding: JSONValue.object(["sid": .string(session.id), "sub": .string(session.accountID)]).serialized(), as: UTF8.self)
        guard try await store.endBrowserSession(id: session.id, now: now, logoutApps: logoutApps, payload: payload) else { return false }
        // A code exchanged in between wrote a family after the first pass.
        revoked += try await revokeTokens(of: session.id, now: now)
        var details = ["sid": session.id, "reason": reason, "refreshTokensRevoked": String(revoked), "apps": session.appIDs.joined(separator: " ")]
        if let actor { details["admin"] = actor }
        try await store.appendAudit(AuditEvent(time: now, type: "session.ended", accountID: session.accountID, details: details))
        logger.info("session ended", metadata: ["reason": .string(reason), "apps": .stringConvertible(session.appIDs.count)])
        guard !logoutApps.isEmpty else { return true }
        // The tokens are in the outbox: any node sends them. This round only makes them go at once.
        if wait {
            await deliverNow()
        } else {
            let deliverNow = deliverNow
            Task { await deliverNow() }
        }
        return true
    }

    /// Revokes the session's refresh-token families (all but `offline_access` ones) and their access
    /// tokens; answers how many refresh tokens were live. Idempotent.
    private func revokeTokens(of sessionID: String, now: Date) async throws -> Int {
        var revoked = 0
        for family in try await store.browserSessionTokenFamilies(sessionID: sessionID) where !family.scopes.contains("offline_access") {
            revoked += try await revoker.family(family.familyID)
        }
        return revoked
    }
}
