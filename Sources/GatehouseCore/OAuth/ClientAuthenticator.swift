/// Authenticates the client at the token, revocation and introspection endpoints: `client_secret_basic`
/// or `client_secret_post` for confidential apps, `client_id` alone for public ones (RFC 6749 section
/// 2.3). Secrets are compared as SHA-256 digests in constant time.
public struct ClientAuthenticator: Sendable {
    public let apps: AppCache

    public init(apps: AppCache) { self.apps = apps }

    /// What the request carried: HTTP Basic credentials and/or form fields.
    public struct Presented: Sendable {
        public var basic: ClientCredentials?
        public var clientID: String?
        public var clientSecret: String?

        public init(basic: ClientCredentials?, clientID: String?, clientSecret: String?) {
            self.basic = basic
            self.clientID = clientID
            self.clientSecret = clientSecret
        }

    }

    public func authenticate(_ presented: Presented) async throws -> App {
        let refused = BrokerError(.invalidClient, .unauthenticated, "Client authentication failed.")
        if presented.basic != nil, presented.clientSecret != nil {
            throw BrokerError(.invalidRequest, .badRequest, "Use one client authentication method, not two.")
        }
        if let basic = presented.basic, let bodyID = presented.clientID, bodyID != basic.clientID {
            throw refused
        }
        guard let clientID = presented.basic?.clientID ?? presented.clientID, !clientID.isEmpty,
            let app = try await apps.app(id: clientID)
        else { throw refused }
        let secret = presented.basic?.secret ?? presented.clientSecret
        if let digest = app.secretDigest {
            guard let secret, SecretDigest.matches(secret, digest: digest) else { throw refused }
        } else if let secret, !secret.isEmpty {
            // A public client has no secret; one that sends a secret is misconfigured.
            throw refused
        }
        return app
    }
}
