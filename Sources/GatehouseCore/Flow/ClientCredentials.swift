/// What a client presented to prove it is the app it claims to be (HTTP Basic or form/JSON fields).
public struct ClientCredentials: Sendable, Hashable {
    public var clientID: String?
    public var secret: String

    public init(clientID: String?, secret: String) {
        self.clientID = clientID
        self.secret = secret
    }
}

extension App {
    /// Refuses a confidential app that did not present its secret, or presented another app's id.
    /// Public apps need no secret.
    public func authenticate(_ credentials: ClientCredentials?) throws(BrokerError) {
        let refused = BrokerError(.invalidClient, .unauthenticated, "Client authentication failed.")
        if let claimed = credentials?.clientID, claimed != id { throw refused }
        guard let digest = secretDigest else { return }
        guard let credentials, SecretDigest.matches(credentials.secret, digest: digest) else { throw refused }
    }
}
