import Foundation

/// A browser's single sign-on session: who signed in, when and how, and which apps got an
/// authorization code in it (they hear of its end by back-channel logout). Kept in the store, so every
/// node sees it and its end at once; the browser holds only a random cookie whose digest is stored.
public struct BrowserSession: Sendable, Hashable, Codable {
    /// The session's public id: `sid` in ID tokens and logout tokens, and in the session lists.
    public var id: String
    /// SHA-256 (hex) of the cookie value; the value itself is never stored.
    public var cookieDigest: String
    public var accountID: String
    /// Identity-provider instances the person signed in with in this session.
    public var providers: [String]
    /// Authenticator instances the person passed in this session (second factors, step-ups).
    public var factors: [String]
    /// `amr` of the sign-in (RFC 8176 values and the instances), for the tokens it yields.
    public var methods: [String]
    /// The provider's subject and the username of the last sign-in, so that a step-up flow can go on
    /// from the identity without asking for it again.
    public var subject: String
    public var username: String
    /// When the person last actually signed in (`auth_time`); a step-up does not move it.
    public var authTime: Date
    public var createdAt: Date
    /// The last time the session signed the person in to an app (idle lifetime).
    public var lastSeenAt: Date
    /// The session's absolute end: the absolute lifetime of the app it was created at.
    public var expiresAt: Date
    /// Set when the session was ended (logout, an admin, a password reset).
    public var endedAt: Date?
    /// Apps that received an authorization code in this session.
    public var appIDs: [String]
    public var clientIP: String?
    /// The browser's `User-Agent`, cut to 200 characters, for the person's session list.
    public var userAgent: String?

    public init(
        id: String, cookieDigest: String, accountID: String, providers: [String], factors: [String], methods: [String], subject: String, username: String,
        authTime: Date, createdAt: Date, lastSeenAt: Date, expiresAt: Date, endedAt: Date? = nil, appIDs: [String] = [], clientIP: String? = nil,
        userAgent: String? = nil
    ) {
        self.id = id
        self.cookieDigest = cookieDigest
        self.accountID = accountID
        self.providers = providers
        self.factors = factors
        self.methods = methods
        self.subject = subject
        self.username = username
        self.authTime = authTime
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.expiresAt = expiresAt
        self.endedAt = endedAt
        self.appIDs = appIDs
        self.clientIP = clientIP
        self.userAgent = userAgent
    }

    /// Whether the session is still in force at `now` (not ended, not past its absolute end).
    public func isLive(at now: Date) -> Bool { endedAt == nil && expiresAt > now }

    /// Whether `policy` lets the session sign someone in at `now`: within the app's idle and absolute
    /// lifetimes, whichever ends first.
    public func isUsable(under policy: SessionPolicy, at now: Date) -> Bool {
        isLive(at: now) && now.timeIntervalSince(lastSeenAt) < policy.idleLifetime.timeInterval
            && now.timeIntervalSince(authTime) < policy.absoluteLifetime.timeInterval
    }
}

/// A refresh-token family issued in a browser session, with the scopes it was granted
/// (`offline_access` families outlive the session).
public struct SessionTokenFamily: Sendable, Hashable {
    public var familyID: String
    public var scopes: [String]

    public init(familyID: String, scopes: [String]) {
        self.familyID = familyID
        self.scopes = scopes
    }
}

extension BrowserSessionStore {
    /// The live session a browser's cookie value names; nil for none, an unknown value, or an ended
    /// or expired session.
    public func liveBrowserSession(cookie: String?, now: Date) async throws -> BrowserSession? {
        guard let cookie, let session = try await browserSession(cookieDigest: SecretDigest.sha256Hex(cookie)), session.isLive(at: now) else { return nil }
        return session
    }
}

/// Browser sessions in the store.
public protocol BrowserSessionStore: Sendable {
    func insertBrowserSession(_ session: BrowserSession) async throws
    func browserSession(cookieDigest: String) async throws -> BrowserSession?
    func browserSession(id: String) async throws -> BrowserSession?
    /// The account's sessions that are not ended and not past their absolute end, newest first.
    func browserSessions(accountID: String, now: Date) async throws -> [BrowserSession]
    /// Records a new sign-in in a live session (a step-up, or the same person signing in again):
    /// `providers` join the session's and `methods` replace its `amr`; a step-up (`authTime` nil) adds
    /// `factors` to the session's, a real sign-in replaces them (a factor counts from the sign-in it
    /// was passed in) and sets `authTime` and the browser's new `cookieDigest`. False when the
    /// session is not live.
    func updateBrowserSessionSignIn(
        id: String, providers: [String], factors: [String], methods: [String], authTime: Date?, cookieDigest: String?, now: Date
    ) async throws -> Bool
    /// Notes that the session signed the person in to `appID` now (idle lifetime, back-channel list).
    func recordBrowserSessionUse(id: String, appID: String, now: Date) async throws
    /// Ends the session; false when it had ended already (so that only one caller logs the apps out).
    /// In the same write, queues a back-channel logout delivery (`payload`) for each of `logoutApps`
    /// in the outbox, so that a node stopping in between loses none.
    func endBrowserSession(id: String, now: Date, logoutApps: [String], payload: String) async throws -> Bool
    /// Refresh-token families issued in the session.
    func browserSessionTokenFamilies(sessionID: String) async throws -> [SessionTokenFamily]
    /// Removes sessions that ended or expired before `before`.
    func deleteExpiredBrowserSessions(before: Date) async throws -> Int
}

extension BrowserSessionStore {
    /// Ends the session without notifying any app.
    public func endBrowserSession(id: String, now: Date) async throws -> Bool {
        try await endBrowserSession(id: id, now: now, logoutApps: [], payload: "")
    }
}
