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
    /// The device code of the device authorization grant (RFC 8628).
    public var deviceCode: String?
    /// The parameters of token exchange (RFC 8693 section 2.1).
    public var exchange: TokenExchangeParameters
    public var client: ClientCredentials?
    /// The client's address, for the failed-authentication limits.
    public var clientIP: String?
    /// The request's DPoP proof, if any (RFC 9449): it binds the tokens to the proof's key.
    public var dpop: DPoPPresentation?

    /// Reads the form; the client's credentials follow `ClientCredentials.presented`'s one-method rule.
    /// `repeated`: every value of the parameters that may repeat (`TokenExchangeParameters.repeatable`).
    public init(
        form: [String: String], repeated: [String: [String]] = [:], basic: ClientCredentials?, clientIP: String? = nil, dpop: DPoPPresentation? = nil
    ) throws(BrokerError) {
        self.clientIP = clientIP
        self.dpop = dpop
        self.grantType = form["grant_type"]
        self.code = form["code"]
        self.redirectURI = form["redirect_uri"]
        self.codeVerifier = form["code_verifier"]
        self.refreshToken = form["refresh_token"]
        self.scopes = form["scope"].map { $0.split(separator: " ").map(String.init) }
        self.assertion = form["assertion"]
        self.deviceCode = form["device_code"]
        self.exchange = TokenExchangeParameters(form: form, repeated: repeated)
        self.client = try ClientCredentials.presented(basic: basic, bodyClientID: form["client_id"], bodySecret: form["client_secret"])
    }
}

/// The parameters of a token-exchange request (RFC 8693 section 2.1), as the form carried them.
public struct TokenExchangeParameters: Sendable {
    public var subjectToken: String?
    public var subjectTokenType: String?
    public var actorToken: String?
    public var actorTokenType: String?
    public var requestedTokenType: String?
    /// `audience`: logical names of the targets (app ids).
    public var audiences: [String]
    /// `resource`: absolute URIs of the targets (RFC 8707).
    public var resources: [String]

    /// The parameters that may be given more than once (RFC 8693 section 2.1, RFC 8707 section 2):
    /// one token is issued for all of the targets.
    public static let repeatable: Set<String> = ["audience", "resource"]

    public init(form: [String: String], repeated: [String: [String]] = [:]) {
        subjectToken = form["subject_token"]
        subjectTokenType = form["subject_token_type"]
        actorToken = form["actor_token"]
        actorTokenType = form["actor_token_type"]
        requestedTokenType = form["requested_token_type"]
        audiences = repeated["audience"] ?? form["audience"].map { [$0] } ?? []
        resources = repeated["resource"] ?? form["resource"].map { [$0] } ?? []
    }
}
