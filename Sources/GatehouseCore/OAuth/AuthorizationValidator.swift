/// Checks an authorization request (RFC 6749 section 4.1.1, OIDC Core 3.1.2.1, RFC 7636) in the
/// order the RFC requires: first the client and the exact redirect URI (refused on a page), then
/// everything else (refused by redirecting to the app).
public struct AuthorizationValidator: Sendable {
    public let apps: any AppStore
    public let issuer: String
    /// Where pushed requests wait for their browser (RFC 9126).
    public let pushed: PushedAuthorizations
    /// Authenticates clients at the pushed-request endpoint as at the token endpoint.
    let clients: ClientAuthenticator?
    let clock: any BrokerClock

    public init(apps: any AppStore, issuer: String, pushed: PushedAuthorizations, clients: ClientAuthenticator? = nil, clock: any BrokerClock) {
        self.apps = apps
        self.issuer = issuer
        self.pushed = pushed
        self.clients = clients
        self.clock = clock
    }

    /// A request at `/oauth2/authorize`: its own parameters, a request object (`request`, RFC 9101),
    /// or a pushed request (`request_uri`, RFC 9126), checked. An app that requires pushed requests
    /// takes only the last.
    public func validate(_ presented: [String: String]) async throws -> (app: App, request: AuthorizationRequest) {
        guard let clientID = presented["client_id"], !clientID.isEmpty else {
            throw AuthorizationRefusal.page(BrokerError(.invalidRequest, .badRequest, "The request has no client_id."))
        }
        guard let app = try await apps.app(id: clientID), !app.disabled else {
            throw AuthorizationRefusal.page(BrokerError(.invalidClient, .badRequest, "The application '\(clientID)' is not known."))
        }
        var parameters = presented
        var wasPushed = false
        if presented["request_uri"] != nil, presented["request"] != nil {
            // OIDC Core section 6: when one is used, the other must not be.
            throw AuthorizationRefusal.page(BrokerError(.invalidRequest, .badRequest, "request and request_uri cannot be used together."))
        }
        if let reference = presented["request_uri"] {
            // RFC 9126 section 4: the pushed parameters are the request; nothing outside them counts.
            do {
                parameters = try await pushed.take(reference, clientID: clientID)
            } catch let error as BrokerError {
                throw AuthorizationRefusal.page(error)
            }
            wasPushed = true
        } else if let object = presented["request"] {
            // RFC 9101 section 6.3: the request object's parameters, and only those.
            do {
                parameters = try RequestObject.parameters(of: object, app: app, issuer: issuer, now: clock.now)
            } catch {
                // RFC 9101 section 7: the error goes back to the app when the request names a redirect
                // URI registered for it (the object's own cannot be trusted); else on a page.
                guard let redirectURI = presented["redirect_uri"], app.redirectURIs.contains(redirectURI), !RedirectURIRule.isUnsafeToRedirectTo(redirectURI) else {
                    throw AuthorizationRefusal.page(error)
                }
                throw AuthorizationRefusal.redirect(
                    error,
                    to: OAuthRedirect.url(
                        redirectURI, parameters: [("error", error.code.rawValue), ("error_description", error.message), ("state", presented["state"]), ("iss", issuer)]
                    )
                )
            }
        }
        return (app, try check(parameters, app: app, pushed: wasPushed))
    }

    /// RFC 9126 section 2: a client pushes its request (its own parameters, or a request object) and
    /// gets a `request_uri` for the browser. The client authenticates as at the token endpoint; the
    /// request is checked now as at `/oauth2/authorize`, and its refusals answer here, as JSON.
    public func push(_ form: [String: String], client: ClientCredentials?, clientIP: String?) async throws -> (requestURI: String, expiresIn: Int) {
        guard let clients else { throw BrokerError.internalFailure("Pushed requests are not set up.") }
        let app = try await clients.authenticate(client, clientIP: clientIP)
        guard form["request_uri"] == nil else { throw BrokerError(.invalidRequest, .badRequest, "request_uri may not be pushed.") }
        // Each push stores a row for a while: an address (a public client authenticates by naming
        // itself) pushes at most as many per minute as it may start flows.
        let now = clock.now
        if let refusal = try await clients.failures.store.perMinuteRefusal(
            "par", clientIP: clientIP, limit: app.policy.lockout.maxFlowStartsPerIPPerMinute, now: now,
            message: "Too many pushed requests from this address; wait a moment."
        ) {
            throw refusal
        }
        // Only the parameters an authorization request has are kept, each of bounded length.
        var parameters = form.filter { Self.authorizationParameters.contains($0.key) }
        if let object = form["request"] {
            parameters = try RequestObject.parameters(of: object, app: app, issuer: issuer, now: now).filter { Self.authorizationParameters.contains($0.key) }
        }
        if let long = parameters.first(where: { $0.value.utf8.count > 4096 }) {
            throw BrokerError(.invalidRequest, .badRequest, "\(long.key) is too long.")
        }
        if let named = parameters["client_id"], named != app.id {
            throw BrokerError(.invalidRequest, .badRequest, "client_id does not name the authenticated client.")
        }
        parameters["client_id"] = app.id
        do {
            _ = try check(parameters, app: app, pushed: true)
        } catch AuthorizationRefusal.page(let error) {
            throw error
        } catch AuthorizationRefusal.redirect(let error, _) {
            throw error
        }
        return (try await pushed.keep(parameters, clientID: app.id), PushedAuthorizations.lifetime)
    }

    /// The parameters of an authorization request this broker reads: a pushed request keeps these only.
    static let authorizationParameters: Set = [
        "client_id", "response_type", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "response_mode", "prompt",
        "max_age", "login_hint", "acr_values", "ui_locales", "claims_locales", "id_token_hint",
    ]

    /// The checks of an authorization request's parameters, for `app`, in the RFC's order.
    func check(_ parameters: [String: String], app: App, pushed: Bool) throws(AuthorizationRefusal) -> AuthorizationRequest {
        let clientID = app.id
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
                BrokerError(
                    .invalidRequest, .badRequest,
                    "The registered redirect_uri is not allowed (\(RedirectURIRule.problem(redirectURI) ?? "unsafe")); an administrator must change it.")
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
            throw refuse(.invalidRequest, "A request object may not hold request or request_uri.")
        }
        if app.policy.requirePushedAuthorizationRequests, !pushed {
            throw refuse(.invalidRequest, "This application must push its authorization requests (/oauth2/par) and send the request_uri.")
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
        } catch let error as BrokerError {
            throw refuse(error.code, error.message)
        } catch {
            throw refuse(.invalidScope, "The scope is not allowed.")
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
        var checked = request
        checked.uiLocales = parameters["ui_locales"].map { String($0.prefix(200)) }
        return checked
    }
}
