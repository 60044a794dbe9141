import Foundation

/// An authorization code as stored: only its digest, bound to the client, redirect URI and PKCE
/// challenge it was issued for, and to the sign-in it stands for.
public struct AuthorizationCodeRecord: Sendable, Hashable, Codable {
    public var digest: String
    public var appID: String
    public var redirectURI: String
    /// BASE64URL(SHA256(code_verifier)) (RFC 7636, S256 only).
    public var codeChallenge: String
    public var nonce: String?
    public var scopes: [String]
    public var accountID: String
    public var authTime: Date
    public var methods: [String]
    public var identityProvider: String?
    public var expiresAt: Date
    public var usedAt: Date?
    /// What the exchange issued, so that a reused code can revoke it.
    public var issuedFamilyID: String?
    public var issuedAccessTokenID: String?
    public var issuedAccessTokenExpiresAt: Date?
    /// The browser session the code was issued in: a code whose session ended meanwhile is refused.
    public var sessionID: String?

    public init(
        digest: String, appID: String, redirectURI: String, codeChallenge: String, nonce: String?, scopes: [String], accountID: String,
        authTime: Date, methods: [String], identityProvider: String?, expiresAt: Date, usedAt: Date? = nil, issuedFamilyID: String? = nil,
        issuedAccessTokenID: String? = nil, issuedAccessTokenExpiresAt: Date? = nil, sessionID: String? = nil
    ) {
        self.sessionID = sessionID
        self.digest = digest
        self.appID = appID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.nonce = nonce
        self.scopes = scopes
        self.accountID = accountID
        self.authTime = authTime
        self.methods = methods
        self.identityProvider = identityProvider
        self.expiresAt = expiresAt
        self.usedAt = usedAt
        self.issuedFamilyID = issuedFamilyID
        self.issuedAccessTokenID = issuedAccessTokenID
        self.issuedAccessTokenExpiresAt = issuedAccessTokenExpiresAt
    }
}

/// Authorization codes, single use.
public protocol AuthorizationCodeStore: Sendable {
    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws
    func authorizationCode(digest: String) async throws -> AuthorizationCodeRecord?
    /// In one write: marks the code used if it is unused, and records what its exchange is about to
    /// issue (so that a replay arriving at any moment afterwards can revoke it). False when the code
    /// was used before (or is gone).
    func redeemAuthorizationCode(digest: String, now: Date, familyID: String, accessTokenID: String, accessTokenExpiresAt: Date) async throws -> Bool
    func deleteExpiredAuthorizationCodes(before: Date) async throws -> Int
}

/// A revocation of access tokens (which are JWTs, verified without the store): one token by its
/// `jti`, or every token of a subject issued up to `revokedAt` (deregistration).
public struct RevocationRecord: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// One access token, by `jti`.
        case token
        /// Every access token of a subject issued up to `revokedAt`.
        case subject
        /// A refresh-token family, including tokens of it written after the revocation.
        case family
        /// Every access token issued to a client (an app deleted or disabled) up to `revokedAt`.
        case client
        /// Every access token issued through a sign-in key (its device was removed or replaced).
        case signInKey
        /// Every token signed by a signing key (`kid`), whenever it was signed: the key is believed
        /// compromised (`gatehouse keys revoke`).
        case signingKey
    }

    public var kind: Kind
    public var value: String
    public var revokedAt: Date
    /// After this no token the revocation covers is valid anyway; the record can go.
    public var expiresAt: Date

    public init(kind: Kind, value: String, revokedAt: Date, expiresAt: Date) {
        self.kind = kind
        self.value = value
        self.revokedAt = revokedAt
        self.expiresAt = expiresAt
    }
}

/// Revoked access tokens and subjects.
public protocol RevocationStore: Sendable {
    func insertRevocation(_ revocation: RevocationRecord) async throws
    /// Every revocation still in force at `now`.
    func activeRevocations(now: Date) async throws -> [RevocationRecord]
    func deleteExpiredRevocations(now: Date) async throws -> Int
}

/// A failure counter and lock for one key (an account at a provider, a client IP, a rate bucket).
public struct AttemptCounter: Sendable, Hashable {
    public var key: String
    public var failures: Int
    public var windowStart: Date
    public var lockedUntil: Date?
    /// How many times the key was locked; lockouts grow with it.
    public var lockouts: Int

    public init(key: String, failures: Int, windowStart: Date, lockedUntil: Date?, lockouts: Int) {
        self.key = key
        self.failures = failures
        self.windowStart = windowStart
        self.lockedUntil = lockedUntil
        self.lockouts = lockouts
    }
}

extension AttemptCounter {
    /// The rule of `AttemptCounterStore.reserveAttempt`, applied to the counter as read under the
    /// store's lock (each store writes the result back in the same transaction).
    public mutating func reserve(now: Date, window: TimeInterval, threshold: Int, lockDuration: (Int) -> TimeInterval) -> AttemptReservation {
        if let until = lockedUntil, until > now { return .locked(until: until) }
        if now.timeIntervalSince(windowStart) >= window {
            failures = 0
            windowStart = now
        }
        guard failures < threshold else { return .lockedNow(until: lock(now: now, lockDuration: lockDuration)) }
        failures += 1
        return .allowed
    }

    /// Locks the key from `now` for the duration its lockout history calls for; returns the end.
    public mutating func lock(now: Date, lockDuration: (Int) -> TimeInterval) -> Date {
        let until = now.addingTimeInterval(lockDuration(lockouts))
        lockedUntil = until
        lockouts += 1
        failures = 0
        windowStart = now
        return until
    }

    /// Whether `lockIfDue` locks it now: enough failures, and not locked already.
    public func isDueForLock(now: Date, threshold: Int) -> Bool {
        failures >= threshold && (lockedUntil ?? .distantPast) <= now
    }
}

/// The answer to `reserveAttempt`.
public enum AttemptReservation: Sendable, Equatable {
    case allowed
    /// Locked already, until then.
    case locked(until: Date)
    /// Locked by this very reservation (the limit was reached), until then.
    case lockedNow(until: Date)
}

/// Failure counters, locks and rate buckets shared by every node.
public protocol AttemptCounterStore: Sendable {
    func attemptCounter(key: String) async throws -> AttemptCounter?
    /// In one transaction, before an answer is evaluated: refuses if the key is locked; locks it when
    /// it already has `threshold` failures in the window; otherwise counts this attempt as a failure
    /// in advance (a right answer clears it). Parallel guesses therefore cannot all slip past the limit.
    func reserveAttempt(key: String, now: Date, window: TimeInterval, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval) async throws -> AttemptReservation
    /// After a wrong answer: locks the key if it has reached `threshold` failures. Returns the end of
    /// a lock made now, or nil.
    func lockIfDue(key: String, now: Date, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval) async throws -> Date?
    /// Forgets the failures of a key (after a success); its lockout history stays.
    func clearFailures(key: String) async throws
    /// Gives back one reserved attempt (an answer that turned out right, or was not an answer at all).
    func releaseAttempt(key: String) async throws
    /// Counts one event in a fixed window of `window` seconds; returns the count including this one
    /// and when the window ends.
    func countEvent(key: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowEnds: Date)
    /// Lifts a lock and forgets the key's lockout history (admin unlock: a fresh start, so a
    /// permanent lock does not come back at the next failure); false when the key was not locked.
    func unlock(key: String) async throws -> Bool
    /// Every key locked at `now`.
    func lockedCounters(now: Date) async throws -> [AttemptCounter]
    func deleteStaleCounters(before: Date) async throws -> Int
}
