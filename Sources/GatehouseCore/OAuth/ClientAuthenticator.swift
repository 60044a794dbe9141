/// The one client authentication of the broker, for the token, revocation and introspection
/// endpoints, the flow API and the provisional-identity API alike (RFC 6749 section 2.3): a
/// confidential app proves its secret (`client_secret_basic` or `client_secret_post`); a public app
/// names itself and must not present a secret. Secrets are compared as SHA-256 digests in constant time.
/// Failures are counted per client address and client id (`FailedAuthenticationLimit`): an address
/// over its limit is refused before any check; a client id over its limit has its failures answered
/// 429, never its right secret refused.
public struct ClientAuthenticator: Sendable {
    public let apps: AppCache
    public let failures: FailedAuthenticationLimit
    /// The limits of requests that name no known app (the config's top-level `lockout`).
    public let defaultLockout: LockoutPolicy

    public init(apps: AppCache, failures: FailedAuthenticationLimit, defaultLockout: LockoutPolicy = LockoutPolicy()) {
        self.apps = apps
        self.failures = failures
        self.defaultLockout = defaultLockout
    }

    /// Every refusal looks the same on the wire, so a caller learns nothing about which part failed.
    public static let refused = BrokerError(.invalidClient, .unauthenticated, "Client authentication failed.")

    /// The app the credentials name, once they prove it. An unknown client id counts against the
    /// address only (bogus ids must not grow the counter table).
    public func authenticate(_ credentials: ClientCredentials?, clientIP: String?) async throws -> App {
        let clientID = credentials?.clientID ?? ""
        let app = clientID.isEmpty ? nil : try await apps.app(id: clientID)
        return try await failures.guarded(.client, clientIP: clientIP, clientID: app?.id, policy: app?.policy.lockout ?? defaultLockout) {
            guard let app else { throw Self.refused }
            try Self.verify(credentials, for: app)
            return app
        }
    }

    /// Checks credentials presented for an app a flow names, under the same limits.
    public func verify(_ credentials: ClientCredentials?, for app: App, clientIP: String?) async throws {
        try await failures.guarded(.client, clientIP: clientIP, clientID: app.id, policy: app.policy.lockout) { try Self.verify(credentials, for: app) }
    }

    /// Runs an assertion check of an app under the same limits: a refused assertion counts like a
    /// failed authentication (each costs an RSA verification).
    public func guardedAssertion<T>(app: App, clientIP: String?, _ check: () async throws -> T) async throws -> T {
        try await failures.guarded(.client, clientIP: clientIP, clientID: app.id, policy: app.policy.lockout, check)
    }

    /// Checks credentials presented for an app the request already names (a flow's app): they may
    /// name no other app, a confidential app needs its secret, a public app may present none.
    public static func verify(_ credentials: ClientCredentials?, for app: App) throws(BrokerError) {
        if let claimed = credentials?.clientID, claimed != app.id { throw refused }
        let secret = credentials?.secret
        if let digest = app.secretDigest {
            guard let secret, SecretDigest.matches(secret, digest: digest) else { throw refused }
        } else if let secret, !secret.isEmpty {
            // A public client has no secret; one that sends a secret is misconfigured (or guessing).
            throw refused
        }
    }
}
