/// OpenID Provider metadata (OIDC Discovery 1.0 section 3, RFC 8414): exactly what the broker supports.
public struct DiscoveryDocument: Sendable, Codable, Equatable {
    public var issuer: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var userinfoEndpoint: String
    public var jwksURI: String
    public var revocationEndpoint: String
    public var introspectionEndpoint: String
    /// RP-Initiated Logout 1.0 section 2.1.
    public var endSessionEndpoint: String
    /// RFC 8628 section 4: where devices ask for a device code and a user code.
    public var deviceAuthorizationEndpoint: String
    /// RFC 9126 section 5: where clients push authorization requests; whether every client must
    /// (never broker-wide: per app, `requirePushedAuthorizationRequests`).
    public var pushedAuthorizationRequestEndpoint: String
    public var requirePushedAuthorizationRequests = false
    /// RFC 9101: request objects by value (`request`), signed with these algorithms.
    public var requestObjectSigningAlgValuesSupported = RequestObject.algorithms
    /// Back-Channel Logout 1.0 section 2.1: logout tokens are sent, and they carry `sid`.
    public var backchannelLogoutSupported = true
    public var backchannelLogoutSessionSupported = true
    public var acrValuesSupported = AuthenticationLevel.allCases.map(\.rawValue)
    public var responseTypesSupported = ["code"]
    public var responseModesSupported = ["query"]
    public var grantTypesSupported = [
        "authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer", OAuthService.deviceCodeGrant,
        OAuthService.tokenExchangeGrant,
    ]
    public var subjectTypesSupported = ["public"]
    public var idTokenSigningAlgValuesSupported: [String]
    public var tokenEndpointAuthMethodsSupported = ["client_secret_basic", "client_secret_post", "none"]
    public var revocationEndpointAuthMethodsSupported = ["client_secret_basic", "client_secret_post", "none"]
    public var introspectionEndpointAuthMethodsSupported = ["client_secret_basic", "client_secret_post"]
    public var codeChallengeMethodsSupported = ["S256"]
    public var scopesSupported = ["openid", "profile", "email", "groups", "offline_access"]
    public var claimsSupported = [
        "iss", "sub", "aud", "azp", "exp", "iat", "auth_time", "nonce", "at_hash", "amr", "idp", "sid", "acr", "preferred_username", "name", "given_name",
        "family_name", "email", "email_verified", "groups",
    ]
    public var promptValuesSupported = ["login", "consent", "select_account", "none"]
    /// The languages the pages speak (OpenID Connect Discovery 1.0 section 3), for `ui_locales`.
    public var uiLocalesSupported = TextTranslations.languages
    public var claimsParameterSupported = false
    public var requestParameterSupported = true
    public var requestURIParameterSupported = false
    public var authorizationResponseIssParameterSupported = true
    /// RFC 9449 section 5.1: the algorithms DPoP proofs may use.
    public var dpopSigningAlgValuesSupported: [String]

    public init(issuer: String, signingAlgorithms: [String], dpopAlgorithms: [String] = DPoPVerifier.algorithms) {
        self.dpopSigningAlgValuesSupported = dpopAlgorithms
        self.issuer = issuer
        self.authorizationEndpoint = issuer + "/oauth2/authorize"
        self.tokenEndpoint = issuer + "/oauth2/token"
        self.userinfoEndpoint = issuer + "/oauth2/userinfo"
        self.jwksURI = issuer + "/oauth2/jwks"
        self.revocationEndpoint = issuer + "/oauth2/revoke"
        self.introspectionEndpoint = issuer + "/oauth2/introspect"
        self.endSessionEndpoint = issuer + "/oauth2/logout"
        self.deviceAuthorizationEndpoint = issuer + "/oauth2/device_authorization"
        self.pushedAuthorizationRequestEndpoint = issuer + "/oauth2/par"
        self.idTokenSigningAlgValuesSupported = signingAlgorithms
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case jwksURI = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case requestObjectSigningAlgValuesSupported = "request_object_signing_alg_values_supported"
        case backchannelLogoutSupported = "backchannel_logout_supported"
        case backchannelLogoutSessionSupported = "backchannel_logout_session_supported"
        case acrValuesSupported = "acr_values_supported"
        case responseTypesSupported = "response_types_supported"
        case responseModesSupported = "response_modes_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case revocationEndpointAuthMethodsSupported = "revocation_endpoint_auth_methods_supported"
        case introspectionEndpointAuthMethodsSupported = "introspection_endpoint_auth_methods_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case scopesSupported = "scopes_supported"
        case claimsSupported = "claims_supported"
        case uiLocalesSupported = "ui_locales_supported"
        case promptValuesSupported = "prompt_values_supported"
        case claimsParameterSupported = "claims_parameter_supported"
        case requestParameterSupported = "request_parameter_supported"
        case requestURIParameterSupported = "request_uri_parameter_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
    }
}
