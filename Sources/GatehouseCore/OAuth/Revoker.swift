import Foundation

/// The one owner of revocation: every way the broker takes back what it issued goes through here,
/// each kind with one order (what is written first, so that a failure half-way leaves nothing
/// usable) and one rule for how long the revocation is remembered. Nothing else builds a
/// `RevocationRecord`. The action that revokes (a logout, a removed device, a deleted app) writes its
/// own audit event, naming what was revoked.
public struct Revoker: Sendable {
    /// The revocations every node checks tokens against.
    public let list: RevocationList
    let store: any BrokerStore
    let clock: any BrokerClock

    public init(list: RevocationList, store: any BrokerStore, clock: any BrokerClock) {
        self.list = list
        self.store = store
        self.clock = clock
    }

    /// As long as an access token issued now (or an ID token presented as a hint) can be presented.
    static let accessTokenReach = Policy.longestAccessTokenLifetime + SigningKeyring.retiredKeyGrace
    /// Longer than any refresh token lives (a policy allows at most a year).
    static let refreshTokenReach: TimeInterval = 366 * 86_400

    /// One access token (RFC 7009, a logout with an access token): listed until it expires.
    public func accessToken(jti: String, expiresAt: Date) async throws {
        let now = clock.now
        try await list.revoke(RevocationRecord(kind: .token, value: jti, revokedAt: now, expiresAt: max(expiresAt, now)))
    }

    /// A refresh-token family (a logout, RFC 7009, an ended session): its access tokens (they carry it
    /// as `fid`) on the list first, so that they stop on every node before anything else, then its
    /// refresh tokens in the store. Answers how many refresh tokens were live.
    @discardableResult
    public func family(_ familyID: String) async throws -> Int {
        try await family(familyID, reach: Self.accessTokenReach)
    }

    /// A family that may still gain a token after this (a code being redeemed at this instant, a
    /// reused code), or whose reason to be refused may be forgotten (a purged session): listed for as long as a refresh token of it could live, so that one written after
    /// the store's revocation is refused whenever it is presented.
    @discardableResult
    public func familyForGood(_ familyID: String) async throws -> Int {
        try await family(familyID, reach: Self.refreshTokenReach)
    }

    private func family(_ familyID: String, reach: TimeInterval) async throws -> Int {
        let now = clock.now
        try await list.revoke(RevocationRecord(kind: .family, value: familyID, revokedAt: now, expiresAt: now.addingTimeInterval(reach)))
        return try await store.revokeRefreshTokenFamily(familyID: familyID, now: now)
    }

    /// What an account holds at one app (consent taken back): the store first, since it finds the
    /// families, then their access tokens; a family a code is being redeemed into at this instant is
    /// revoked for good. Answers the families revoked.
    public func account(_ accountID: String, at appID: String) async throws -> [String] {
        let revoked = try await store.revokeRefreshTokens(accountID: accountID, appID: appID, now: clock.now)
        for family in revoked.families {
            let now = clock.now
            try await list.revoke(RevocationRecord(kind: .family, value: family, revokedAt: now, expiresAt: now.addingTimeInterval(Self.accessTokenReach)))
        }
        for family in revoked.redeemedCodeFamilies { try await familyForGood(family) }
        return revoked.families + revoked.redeemedCodeFamilies
    }

    /// Everything a subject holds (a password reset, a deregistration): its refresh tokens in the
    /// store, then every access token issued to it up to now. Answers how many refresh tokens were live.
    @discardableResult
    public func subject(_ subject: String) async throws -> Int {
        let now = clock.now
        let revoked = try await store.revokeRefreshTokens(accountID: subject, now: now)
        try await list.revoke(RevocationRecord(kind: .subject, value: subject, revokedAt: now, expiresAt: now.addingTimeInterval(Self.accessTokenReach)))
        return revoked
    }

    /// Everything a disabled account holds: its refresh tokens in the store, then every access token
    /// issued to it up to `reach` seconds from now (a sign-in that read the account just before it was
    /// disabled issues its token a moment later). Answers how many refresh tokens were live.
    @discardableResult
    public func disabledSubject(_ subject: String, reach: TimeInterval) async throws -> Int {
        let now = clock.now
        let revoked = try await store.revokeRefreshTokens(accountID: subject, now: now)
        let coveredUntil = now.addingTimeInterval(reach)
        try await list.revoke(
            RevocationRecord(kind: .subject, value: subject, revokedAt: coveredUntil, expiresAt: coveredUntil.addingTimeInterval(Self.accessTokenReach)))
        return revoked
    }

    /// Device sign-in keys (a removed device, a reinstall): every access token issued through them
    /// stops, on every node. The keys themselves are removed by the caller, in the store.
    public func signInKeys(_ keyIDs: [String]) async throws {
        let now = clock.now
        for keyID in keyIDs {
            try await list.revoke(RevocationRecord(kind: .signInKey, value: keyID, revokedAt: now, expiresAt: now.addingTimeInterval(Self.accessTokenReach)))
        }
    }

    /// Everything an app holds (deleted or disabled): refresh tokens revoked, unredeemed codes and open
    /// flows deleted in the store, then every token issued up to a moment from now listed until the
    /// longest token lifetime has passed. "A moment from now": other nodes may still read the app as
    /// enabled from their app cache for up to `AppCache.lifetime`, and a token they issue meanwhile
    /// must be covered too.
    public func client(_ appID: String) async throws {
        let now = clock.now
        _ = try await store.revokeGrants(appID: appID, now: now)
        let coveredUntil = now.addingTimeInterval(AppCache.lifetime + 1)
        try await list.revoke(
            RevocationRecord(kind: .client, value: appID, revokedAt: coveredUntil, expiresAt: coveredUntil.addingTimeInterval(Self.refreshTokenReach))
        )
    }

    /// A signing key believed compromised: on the list first, so that from here every node refuses
    /// what it signed before the key is gone; then replaced (if it signs) and no longer published.
    /// Answers the replacements.
    public func signingKey(_ kid: String, in keyring: SigningKeyring) async throws -> [SigningKeyRecord] {
        let now = clock.now
        try await list.revoke(RevocationRecord(kind: .signingKey, value: kid, revokedAt: now, expiresAt: now.addingTimeInterval(Self.accessTokenReach)))
        return try await keyring.revoke(kid: kid)
    }
}
