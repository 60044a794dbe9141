/// A request to `/oauth2/token`, as the form carried it.
public struct TokenRequest: Sendable {
    public var grantType: String?
    public var code: String?
    public var redirectURI: String?
    public var codeVerifier: String?
    public var refreshToken: String?
    /// The `scope` parameter, split at spaces; nil when the request has none.
    public var scopes: [String]?
    /// The JWT of the JWT bearer grant (RFC 7523).
    public var assertion: String?
    public var client: ClientAuthenticator.Presented

    public init(form: [String: String], basic: ClientCredentials?) {
        self.grantType = form["grant_type"]
        self.code = form["code"]
        self.redirectURI = form["redirect_uri"]
        self.codeVerifier = form["code_verifier"]
        self.refreshToken = form["refresh_token"]
        self.scopes = form["scope"].map { $0.split(separator: " ").map(String.init) }
        self.assertion = form["assertion"]
        self.client = ClientAuthenticator.Presented(basic: basic, clientID: form["client_id"], clientSecret: form["client_secret"])
    }
}
