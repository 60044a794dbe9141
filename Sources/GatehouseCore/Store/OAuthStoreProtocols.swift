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
