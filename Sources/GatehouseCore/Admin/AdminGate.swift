/// The admin API's door: checks a bearer admin token and counts failures per client address
/// (`FailedAuthenticationLimit`, with the config's top-level `lockout` limits, since the admin API
/// belongs to no app), so that guessing admin tokens ends in `429` long before it could succeed.
public struct AdminGate: Sendable {
    public let credentials: AdminCredentials
    let failures: FailedAuthenticationLimit
    let policy: LockoutPolicy

    public init(credentials: AdminCredentials, failures: FailedAuthenticationLimit, policy: LockoutPolicy = LockoutPolicy()) {
        self.credentials = credentials
        self.failures = failures
        self.policy = policy
    }

    /// The admin a bearer token belongs to. `admin_api_disabled` when no credential is configured,
    /// `invalid_token` for a missing or wrong token, `rate_limited` while the address is over its limit.
    public func authenticate(bearer token: String?, clientIP: String?) async throws -> AdminIdentity {
        guard !credentials.isEmpty else {
            throw BrokerError(.adminDisabled, .notFound, "The admin API is off: configure admin.tokens or GATEHOUSE_ADMIN_TOKEN.")
        }
        return try await failures.guarded(.admin, clientIP: clientIP, clientID: nil, policy: policy) {
            guard let token, let admin = credentials.authenticate(token) else {
                throw BrokerError(.invalidToken, .unauthenticated, "Admin credentials are required.")
            }
            return admin
        }
    }
}
