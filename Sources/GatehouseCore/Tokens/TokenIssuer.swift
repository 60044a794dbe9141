import Foundation

/// Mints the tokens a sign-in or grant yields: a signed access token always; an ID token when the
/// scopes include `openid` and a person signed in; for stateful sign-ins also an opaque refresh
/// token, of which only the digest is stored.
public struct TokenIssuer: Sendable {
    public let issuer: String
    public let keyring: SigningKeyring
    public let refreshTokens: any RefreshTokenStore
    public let clock: any BrokerClock
    /// Makes a rotation's new refresh token from the one it replaces, the same on every node (for
    /// `refreshReuseGrace`); nil: random ones (and no grace).
    public let successors: RefreshTokenSuccessors?

    public init(issuer: String, keyring: SigningKeyring, refreshTokens: any RefreshTokenStore, clock: any BrokerClock, successors: RefreshTokenSuccessors? = nil) {
        self.successors = successors
        self.issuer = issuer
        self.keyring = keyring
        self.refreshTokens = refreshTokens
        self.clock = clock
    }

    /// What the tokens are for.
    public struct Grant: Sendable {
        public var app: App
        public var subject: String
        /// The account, for stateful grants; nil means no refresh token and nothing stored.
        public var accountID: String?
        public var scopes: [String]
        public var methods: [String]
        public var identityProvider: String?
        /// When the person signed in; nil for a client acting for itself.
        public var authTime: Date?
        public var nonce: String?
        /// Continue this refresh-token family (rotation); nil starts a new one.
        public var refreshFamilyID: String?
        /// The digest of the refresh token this grant rotates: it is marked used in the same
        /// transaction that stores the new one.
        public var replacingRefreshToken: String?
        /// Claims for the ID token (and userinfo), already filtered by scope.
        public var profile: [String: JSONValue]
        /// True for a stateless sign-in: the `stateless` claim tells resource servers nothing is kept.
        public var stateless: Bool
        /// A `jti` chosen in advance (a code exchange records it before issuing); nil for a fresh one.
        public var accessTokenID: String?
        /// The scopes the new refresh token carries, when they differ from the access token's: a
        /// refresh that narrows the scope does not narrow the refresh token (RFC 6749 section 6).
        public var refreshTokenScopes: [String]?
        /// The sign-in key the person proved themselves with (device-key sign-ins).
        public var signInKeyID: String?
        /// The DPoP key the tokens are bound to: the access token carries `cnf.jkt`; the refresh token
        /// of a public client is bound too (RFC 9449 section 5).
        public var dpopJKT: String?
        /// The digest of the installation the sign-in named, carried by both tokens.
        public var installation: String?
        /// The browser session the sign-in belongs to: `sid` in the ID token; the refresh token is
        /// kept with it so that logout revokes it (unless it is `offline_access`).
        public var sessionID: String?
        /// `acr` for the ID token (`AuthenticationLevel`).
        public var acr: String?
        /// The refresh token to hand out instead of a random one (a rotation's successor).
        public var refreshTokenValue: String?
        /// Hand `refreshTokenValue` out again without storing anything: it is stored already (a retry
        /// within the app's `refreshReuseGrace`).
        public var reissuesRefreshToken = false

        public init(
            app: App, subject: String, accountID: String?, scopes: [String], methods: [String], identityProvider: String?, authTime: Date?,
            nonce: String? = nil, refreshFamilyID: String? = nil, replacingRefreshToken: String? = nil, profile: [String: JSONValue] = [:],
            stateless: Bool = false, accessTokenID: String? = nil, refreshTokenScopes: [String]? = nil, signInKeyID: String? = nil, dpopJKT: String? = nil,
            installation: String? = nil, sessionID: String? = nil, acr: String? = nil
        ) {
            self.installation = installation
            self.sessionID = sessionID
            self.acr = acr
            self.signInKeyID = signInKeyID
            self.dpopJKT = dpopJKT
            self.app = app
            self.subject = subject
            self.accountID = accountID
            self.scopes = scopes
            self.methods = methods
            self.identityProvider = identityProvider
            self.authTime = authTime
            self.nonce = nonce
            self.refreshFamilyID = refreshFamilyID
            self.replacingRefreshToken = replacingRefreshToken
            self.profile = profile
            self.stateless = stateless
            self.accessTokenID = accessTokenID
            self.refreshTokenScopes = refreshTokenScopes
        }
    }

    /// The refresh token a grant rotates was used by another request first.
    public struct RefreshTokenAlreadyUsed: Error {}

    public func issue(_ grant: Grant) async throws -> IssuedTokens {
        let now = clock.now
        let lifetime = grant.app.policy.accessTokenLifetime
        let expiresAt = now.addingTimeInterval(lifetime.timeInterval)
        let scope = grant.scopes.joined(separator: " ")
        let stateful = grant.accountID != nil && grant.authTime != nil
        let family = stateful ? grant.refreshFamilyID ?? UUID().uuidString.lowercased() : nil
        let claims = AccessTokenClaims(
            issuer: issuer, subject: grant.subject, audience: grant.app.id, issuedAt: now, expiresAt: expiresAt, scope: scope,
            stateless: grant.stateless, authTime: grant.authTime, amr: grant.methods.isEmpty ? nil : grant.methods, identityProvider: grant.identityProvider,
            id: grant.accessTokenID, dpopJKT: grant.dpopJKT, deviceKey: grant.signInKeyID, family: family, installation: grant.installation
        )
        let accessToken = try await keyring.sign(claims)

        var refreshToken: String?
        if grant.reissuesRefreshToken, grant.accountID != nil, let value = grant.refreshTokenValue {
            refreshToken = value
        } else if let accountID = grant.accountID, let authTime = grant.authTime, let family {
            let token = grant.refreshTokenValue ?? RandomToken.make()
            let record = RefreshTokenRecord(
                digest: SecretDigest.sha256Hex(token), familyID: family, accountID: accountID, appID: grant.app.id, scopes: grant.refreshTokenScopes ?? grant.scopes,
                issuedAt: now, expiresAt: now.addingTimeInterval(grant.app.policy.refreshTokenLifetime.timeInterval), authTime: authTime,
                methods: grant.methods, identityProvider: grant.identityProvider, signInKeyID: grant.signInKeyID,
                dpopJKT: grant.app.isConfidential ? nil : grant.dpopJKT, installation: grant.installation, sessionID: grant.sessionID
            )
            if let used = grant.replacingRefreshToken {
                guard try await refreshTokens.rotateRefreshToken(usedDigest: used, replacement: record, now: now) else {
                    throw RefreshTokenAlreadyUsed()
                }
            } else {
                try await refreshTokens.insertRefreshToken(record)
            }
            refreshToken = token
        }

        var idToken: String?
        if grant.scopes.contains("openid"), let authTime = grant.authTime {
            idToken = try await keyring.sign(
                IDTokenClaims(
                    issuer: issuer, subject: grant.subject, audience: grant.app.id, issuedAt: now, expiresAt: expiresAt, authTime: authTime,
                    nonce: grant.nonce, accessToken: accessToken, amr: grant.methods.isEmpty ? nil : grant.methods,
                    identityProvider: grant.identityProvider, profile: grant.profile, sessionID: grant.sessionID, acr: grant.acr
                ),
                algorithm: grant.app.policy.idTokenSigningAlg
            )
        }
        return IssuedTokens(
            accessToken: accessToken, tokenType: grant.dpopJKT == nil ? "Bearer" : "DPoP", expiresIn: lifetime.value, refreshToken: refreshToken, idToken: idToken,
            scope: scope
        )
    }
}
