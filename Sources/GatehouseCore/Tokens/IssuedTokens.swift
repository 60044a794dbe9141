/// What a finished flow hands the client: an access token, a refresh token for stateful sign-ins,
/// and the granted scope.
public struct IssuedTokens: Sendable, Hashable, Codable {
    public var accessToken: String
    public var tokenType: String
    public var expiresIn: Int
    public var refreshToken: String?
    public var idToken: String?
    public var scope: String
    /// A DPoP nonce for the client's next proof (sent as the `DPoP-Nonce` header, not in the body).
    public var dpopNonce: String?
    /// What a token exchange issued (RFC 8693 section 2.2.1 `issued_token_type`); nil for other grants.
    public var issuedTokenType: String?

    public init(accessToken: String, tokenType: String = "Bearer", expiresIn: Int, refreshToken: String? = nil, idToken: String? = nil, scope: String) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
    }

    /// The token response as JSON members (RFC 6749 section 5.1).
    public var json: [String: JSONValue] {
        var members: [String: JSONValue] = [
            "access_token": .string(accessToken), "token_type": .string(tokenType), "expires_in": .number(Double(expiresIn)), "scope": .string(scope),
        ]
        if let refreshToken { members["refresh_token"] = .string(refreshToken) }
        if let idToken { members["id_token"] = .string(idToken) }
        if let issuedTokenType { members["issued_token_type"] = .string(issuedTokenType) }
        return members
    }
}
