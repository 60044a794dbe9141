import Foundation

/// Mints the tokens a finished flow yields: a signed access token always; for stateful sign-ins also an
/// opaque refresh token, of which only the digest is stored.
public struct TokenIssuer: Sendable {
    public let issuer: String
    public let keyring: SigningKeyring
    public let refreshTokens: any RefreshTokenStore
    public let clock: any BrokerClock

    public init(issuer: String, keyring: SigningKeyring, refreshTokens: any RefreshTokenStore, clock: any BrokerClock) {
        self.issuer = issuer
        self.keyring = keyring
        self.refreshTokens = refreshTokens
        self.clock = clock
    }

    /// What the tokens are for.
    public struct Grant: Sendable {
        public var app: App
        public var subject: String
        /// The account, for stateful grants; nil means stateless (no refresh token, nothing stored).
        public var accountID: String?
        public var scopes: [String]
        public var methods: [String]
        public var identityProvider: String?

        public init(app: App, subject: String, accountID: String?, scopes: [String], methods: [String], identityProvider: String?) {
            self.app = app
            self.subject = subject
            self.accountID = accountID
            self.scopes = scopes
            self.methods = methods
            self.identityProvider = identityProvider
        }
    }

    public func issue(_ grant: Grant) async throws -> IssuedTokens {
        let now = clock.now
        let lifetime = grant.app.policy.accessTokenLifetime
        let scope = grant.scopes.joined(separator: " ")
        let claims = AccessTokenClaims(
            issuer: issuer, subject: grant.subject, audience: grant.app.id, issuedAt: now,
            expiresAt: now.addingTimeInterval(lifetime.timeInterval), scope: scope, stateless: grant.accountID == nil,
            amr: grant.methods.isEmpty ? nil : grant.methods, identityProvider: grant.identityProvider
        )
        let accessToken = try await keyring.sign(claims)
        var refreshToken: String?
        if let accountID = grant.accountID {
            let token = RandomToken.make()
            try await refreshTokens.insertRefreshToken(
                RefreshTokenRecord(
                    digest: SecretDigest.sha256Hex(token), familyID: UUID().uuidString, accountID: accountID, appID: grant.app.id,
                    scopes: grant.scopes, issuedAt: now, expiresAt: now.addingTimeInterval(grant.app.policy.refreshTokenLifetime.timeInterval)
                )
            )
            refreshToken = token
        }
        return IssuedTokens(accessToken: accessToken, expiresIn: lifetime.value, refreshToken: refreshToken, scope: scope)
    }
}
