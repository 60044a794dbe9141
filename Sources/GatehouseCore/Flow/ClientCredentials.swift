/// What a client presented to prove it is the app it claims to be, read from one request by the one
/// method it used (RFC 6749 section 2.3.1): HTTP Basic (`client_secret_basic`), `client_secret` in
/// the body (`client_secret_post`), or only a `client_id` (`none`, public apps).
public struct ClientCredentials: Sendable, Hashable {
    /// The app the client names; nil when the request names it otherwise (a flow's own app).
    public var clientID: String?
    /// Nil for a client that only names itself (a public app).
    public var secret: String?

    public init(clientID: String?, secret: String?) {
        self.clientID = clientID
        self.secret = secret
    }

    /// Reads what a request carried: HTTP Basic credentials and/or `client_id` / `client_secret`
    /// body fields. A client uses one method per request: both a Basic header and a body secret is
    /// `invalid_request`; a body `client_id` that names another app than the Basic one is `invalid_client`.
    /// Nil when the request carried nothing.
    public static func presented(basic: ClientCredentials?, bodyClientID: String?, bodySecret: String?) throws(BrokerError) -> ClientCredentials? {
        if let basic {
            if bodySecret != nil { throw BrokerError(.invalidRequest, .badRequest, "Use one client authentication method, not two.") }
            if let bodyClientID, bodyClientID != basic.clientID { throw ClientAuthenticator.refused }
            return basic
        }
        guard bodyClientID != nil || bodySecret != nil else { return nil }
        return ClientCredentials(clientID: bodyClientID, secret: bodySecret)
    }
}
