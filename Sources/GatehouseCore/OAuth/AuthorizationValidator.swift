/// Checks an authorization request (RFC 6749 section 4.1.1, OIDC Core 3.1.2.1, RFC 7636) in the
/// order the RFC requires: first the client and the exact redirect URI (refused on a page), then
/// everything else (refused by redirecting to the app).
public struct AuthorizationValidator: Sendable {
    public let apps: any AppStore
    public let issuer: String

    public init(apps: any AppStore, issuer: String) {
        self.apps = apps
        self.issuer = issuer
    }

    public func validate(_ parameters: [String: String]) async throws -> (app: App, request: AuthorizationRequest) {
        guard let clientID = parameters["client_id"], !clientID.isEmpty else {
            throw AuthorizationRefusal.page(BrokerError(.invalidRequest, .badRequest, "The request has no client_id."))
        }
        guard let app = try await apps.app(id: clientID), !app.disabled else {
            throw AuthorizationRefusal.page(BrokerError(.invalidClient, .badRequest, "The application '\(clientID)' is not known."))
        }
        guard let redirectURI = parameters["redirect_uri"], !redirectURI.isEmpty else {
            throw AuthorizationRefusal.page(BrokerError(.invalidRequest, .badRequest, "The request has no redirect_uri."))
        }
        // Exact string comparison: no prefix, wildcard or normalisation (RFC 9700 section 2.1).
        guard app.redirectURIs.contains(redirectURI) else {
            throw AuthorizationRefusal.page(BrokerError(.invalidRequest, .badRequest, "The redirect_uri is not registered for this application."))
        }
        // An app stored before the rule existed may still list a script or data URI: never send a browser there.
        if RedirectURIRule.isUnsafeToRedirectTo(redirectURI) {
            throw AuthorizationRefusal.page(
                BrokerError(.invalidRequest, .badRequest, "The registered redirect_uri is not allowed (\(RedirectURIRule.problem(redirectURI) ?? "unsafe")); an administrator must change it.")
            )
        }
        let state = parameters["state"]
        func refuse(_ code: ErrorCode, _ message: String) -> AuthorizationRefusal {
            .redirect(
                BrokerError(code, .badRequest, message),
                to: OAuthRedirect.url(redirectURI, parameters: [("error", code.rawValue), ("error_description", message), ("state", state), ("iss", issuer)])
            )
        }
        if parameters["request"] != nil || parameters["request_uri"] != nil {
            throw refuse(.requestNotSupported, "Request objects are not supported.")
        }
        guard parameters["response_type"] == "code" else {
            throw refuse(.unsupportedResponseType, "Only response_type=code is supported.")
        }
        if let mode = parameters["response_mode"], mode != "query" {
            throw refuse(.invalidRequest, "Only response_mode=query is supported.")
        }
        guard let challenge = parameters["code_challenge"], !challenge.isEmpty else {
            throw refuse(.invalidRequest, "PKCE is required: send code_challenge with code_challenge_method=S256.")
        }
        guard parameters["code_challenge_method"] == "S256" else {
            throw refuse(.invalidRequest, "Only code_challenge_method=S256 is supported.")
        }
        guard PKCE.isValidChallenge(challenge) else {
            throw refuse(.invalidRequest, "code_challenge must be the base64url SHA-256 of the verifier (43 characters).")
        }
        if let state, state.utf8.count > 2048 { throw refuse(.invalidRequest, "state is too long.") }
        if let nonce = parameters["nonce"], nonce.utf8.count > 512 { throw refuse(.invalidRequest, "nonce is too long.") }
        let requested = (parameters["scope"] ?? "").split(separator: " ").map(String.init)
        let scopes: [String]
        do {
            scopes = try app.policy.grantScopes(requested.isEmpty ? nil : requested)
        } catch {
            throw refuse(error.code, error.message)
        }
        let prompt = (parameters["prompt"] ?? "").split(separator: " ").map(String.init)
        let known: Set = ["none", "login", "consent", "select_account"]
        if let unknown = prompt.first(where: { !known.contains($0) }) {
            throw refuse(.invalidRequest, "prompt=\(unknown) is not supported.")
        }
        if prompt.contains("none"), prompt.count > 1 {
            // OIDC Core section 3.1.2.1: none with any other value is an error.
            throw refuse(.invalidRequest, "prompt=none cannot be combined with other values.")
        }
        var maxAge: Int?
        if let text = parameters["max_age"], !text.isEmpty {
            guard let value = Int(text), value >= 0, text.allSatisfy(\.isASCII) else {
                throw refuse(.invalidRequest, "max_age must be a number of seconds (0 or more).")
            }
            maxAge = value
        }
        let acrValues = (parameters["acr_values"] ?? "").split(separator: " ").map(String.init)
        if app.policy.identityProviders.isEmpty {
            throw refuse(.unauthorizedClient, "This application may not use any identity provider.")
        }
        let request = AuthorizationRequest(
            clientID: clientID, redirectURI: redirectURI, scopes: scopes, state: state, nonce: parameters["nonce"], codeChallenge: challenge,
            prompt: prompt, loginHint: parameters["login_hint"].flatMap { $0.isEmpty ? nil : String($0.prefix(256)) }, maxAge: maxAge,
            acrValues: Array(acrValues.prefix(8))
        )
        return (app, request)
    }
}
