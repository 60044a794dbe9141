import Foundation

/// The app's way to its Gatehouse broker: registration and sign-in flows, stateless registration,
/// the installation's device key and DPoP proofs, and the tokens' life (renewal, logout,
/// registration state, deregistration). It depends on no server code: its only link to the broker
/// is the HTTP API in docs/openapi.yaml.
public final class GatehouseClient: Sendable {
    public let configuration: GatehouseConfiguration
    let connection: BrokerConnection
    let tokenStore: any TokenStore
    let attestationProvider: (any AttestationProvider)?
    let renewal: TokenRenewal

    /// - Parameters:
    ///   - keys: where the installation's device key lives (`SecureEnclaveKeyStore` on Apple devices).
    ///   - tokens: where the tokens are kept (`KeychainTokenStore` on Apple platforms).
    ///   - attestation: makes device attestations when a registration asks for one.
    public init(
        configuration: GatehouseConfiguration, keys: any DeviceKeyStore = SoftwareKeyStore(), tokens: any TokenStore = InMemoryTokenStore(),
        attestation: (any AttestationProvider)? = nil, transport: any HTTPTransport = URLSessionTransport()
    ) {
        self.configuration = configuration
        self.connection = BrokerConnection(configuration: configuration, transport: transport, keys: keys)
        self.tokenStore = tokens
        self.attestationProvider = attestation
        self.renewal = TokenRenewal()
    }

    // MARK: - Flows

    /// Starts a sign-in with `provider` (an identity provider instance the app's policy allows).
    public func startSignIn(provider: String, scopes: [String]? = nil) async throws -> Flow {
        try await start(provider: provider, purpose: "authenticate", stateless: false, scopes: scopes, signedIn: false)
    }

    /// Starts a registration with `provider`. `addingToSignedInAccount` registers one more credential
    /// (a second device's key) for the account this client is signed in to (a sign-in less than 15
    /// minutes old).
    public func startRegistration(provider: String, scopes: [String]? = nil, addingToSignedInAccount: Bool = false) async throws -> Flow {
        try await start(provider: provider, purpose: "register", stateless: false, scopes: scopes, signedIn: addingToSignedInAccount)
    }

    /// Starts a stateless registration (docs/plugins/custom-api.md): the app's API vouches for the
    /// person, the broker keeps no account and issues an access token only. Refused with
    /// `GatehouseError.statelessDisabled` when the app's policy has stateless authentication off.
    public func startStatelessRegistration(provider: String, scopes: [String]? = nil) async throws -> Flow {
        try await start(provider: provider, purpose: "register", stateless: true, scopes: scopes, signedIn: false)
    }

    /// A sign-in driven by `delegate` to its end.
    public func signIn(provider: String, scopes: [String]? = nil, delegate: any FlowDelegate) async throws -> FlowOutcome {
        try await run(try await startSignIn(provider: provider, scopes: scopes), delegate: delegate)
    }

    /// A registration driven by `delegate` to its end.
    public func register(provider: String, scopes: [String]? = nil, delegate: any FlowDelegate) async throws -> FlowOutcome {
        try await run(try await startRegistration(provider: provider, scopes: scopes), delegate: delegate)
    }

    /// A stateless registration driven by `delegate` to its end.
    public func registerStateless(provider: String, scopes: [String]? = nil, delegate: any FlowDelegate) async throws -> FlowOutcome {
        try await run(try await startStatelessRegistration(provider: provider, scopes: scopes), delegate: delegate)
    }

    private func start(provider: String, purpose: String, stateless: Bool, scopes: [String]?, signedIn: Bool) async throws -> Flow {
        let pkce = Flow.makeCodeVerifier()
        var body: [String: JSON] = [
            "app": .string(configuration.app), "provider": .string(provider), "purpose": .string(purpose), "installation": .string(configuration.installation.id),
            "codeChallenge": .string(pkce.challenge), "codeChallengeMethod": "S256",
        ]
        if stateless { body["stateless"] = true }
        if let scopes = scopes ?? configuration.scopes { body["scope"] = .string(scopes.joined(separator: " ")) }
        if let returnURI = configuration.returnURI { body["returnURI"] = .string(returnURI) }
        var options = BrokerConnection.Options(dpop: configuration.bindTokens)
        if signedIn {
            let tokens = try await validTokens()
            options.accessToken = tokens.accessToken
            options.bound = tokens.isBound
        } else {
            options.clientAuthentication = true
        }
        // With a token in `Authorization`, a confidential client's secret goes in the body.
        if signedIn { body.merge(secretInBody) { first, _ in first } }
        let (json, _) = try await connection.json("POST", "/v1/flows", body: .object(body), options)
        guard let id = json["flow"]?.string else { throw GatehouseError.transport("the flow's start has no flow id") }
        return Flow(id: id, state: try await state(of: json), client: self, codeVerifier: pkce.verifier)
    }

    /// A confidential client's secret as the flow API takes it in a body.
    var secretInBody: [String: JSON] {
        configuration.clientSecret.map { ["client_secret": .string($0)] } ?? [:]
    }

    /// The state a flow answer describes; a completed flow's tokens are saved.
    func state(of json: JSON) async throws -> FlowState {
        switch json["status"]?.string {
        case "challenge":
            guard let challenge = json["challenge"] else { throw GatehouseError.transport("a challenge answer without its challenge") }
            return .challenge(Challenge(challenge))
        case "completed":
            guard let tokensJSON = json["tokens"] else { throw GatehouseError.transport("a completed flow without tokens") }
            let tokens = try Tokens(tokensJSON, receivedAt: Date(), account: json["account"])
            try await tokenStore.save(tokens)
            let account = Account(json["account"])
            return .completed(SignInResult(tokens: tokens, account: account, activation: json["activation"]))
        case "stopped":
            return .stopped(activation: json["activation"] ?? .null)
        default:
            throw GatehouseError.transport("a flow answer with status \(json["status"]?.string ?? "none")")
        }
    }

    // MARK: - Tokens

    /// The tokens kept from the last sign-in or renewal, whatever their age.
    public func tokens() async throws -> Tokens? {
        try await tokenStore.load()
    }

    /// An access token valid for at least `renewalMargin` more, renewed with the refresh token when
    /// it is not. Concurrent callers share one renewal: one refresh request on the wire.
    public func validAccessToken() async throws -> String {
        try await validTokens().accessToken
    }

    func validTokens() async throws -> Tokens {
        guard let tokens = try await tokenStore.load() else { throw GatehouseError.notSignedIn }
        if tokens.expiresAt.timeIntervalSinceNow > configuration.renewalMargin { return tokens }
        // Nothing renews a stateless sign-in's token: it serves until it expires.
        if tokens.refreshToken == nil, tokens.expiresAt > Date() { return tokens }
        return try await renew(onlyIfDue: true)
    }

    /// Renews the tokens now with the refresh token (one renewal at a time: a caller that arrives
    /// while one is under way gets its result). A refused renewal (`invalidGrant`) clears the tokens.
    @discardableResult
    public func renew() async throws -> Tokens {
        try await renew(onlyIfDue: false)
    }

    private func renew(onlyIfDue: Bool) async throws -> Tokens {
        try await renewal.run { [self] in
            guard let tokens = try await tokenStore.load() else { throw GatehouseError.notSignedIn }
            // A caller that found the token due just after another renewal ended finds it renewed.
            if onlyIfDue, tokens.expiresAt.timeIntervalSinceNow > configuration.renewalMargin { return tokens }
            guard let refreshToken = tokens.refreshToken else { throw GatehouseError.notSignedIn }
            do {
                // A bound refresh token needs a proof with its key whatever the configuration says now.
                let (json, _) = try await connection.form(
                    "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], .init(dpop: configuration.bindTokens || tokens.isBound)
                )
                let renewed = try Tokens(json, receivedAt: Date(), previous: tokens)
                // Only over the tokens it renewed: a sign-in that completed meanwhile keeps its own.
                if try await tokenStore.load()?.refreshToken == refreshToken { try await tokenStore.save(renewed) }
                return renewed
            } catch let error as GatehouseError {
                if case .invalidGrant = error, try await tokenStore.load()?.refreshToken == refreshToken { try? await tokenStore.clear() }
                throw error
            }
        }
    }

    /// Signs out: the broker revokes the refresh token's whole family (and the access tokens issued
    /// with it), then the tokens are forgotten here. The device key stays: the next sign-in uses it.
    /// The tokens are forgotten even when the broker cannot be reached or refuses; its error is
    /// thrown afterwards (the refresh token then lives on at the broker until it expires).
    public func logout() async throws {
        // A renewal under way finishes first, so the refresh token revoked is the current one; one
        // that starts meanwhile saves nothing once the tokens it renewed are gone.
        await renewal.waitUntilIdle()
        try await logoutNow()
    }

    private func logoutNow() async throws {
        guard let tokens = try await tokenStore.load() else { return }
        do {
            if let refreshToken = tokens.refreshToken {
                var body: [String: JSON] = ["refresh_token": .string(refreshToken), "client_id": .string(configuration.app)]
                body.merge(secretInBody) { first, _ in first }
                _ = try await connection.json("POST", "/v1/logout", body: .object(body), .init())
            } else {
                _ = try await connection.json("POST", "/v1/logout", .init(accessToken: tokens.accessToken, bound: tokens.isBound))
            }
        } catch {
            try await tokenStore.clear()
            throw error
        }
        try await tokenStore.clear()
    }

    /// Where this installation stands with the broker (docs/devices.md, "Registration state").
    public func registrationState() async throws -> RegistrationState {
        let tokens = try await tokenStore.load()
        let (json, _) = try await connection.json(
            "GET", "/v1/registration-state", query: [("app", configuration.app), ("installation", configuration.installation.id)],
            .init(accessToken: tokens?.accessToken, bound: tokens?.isBound ?? false)
        )
        return RegistrationState(json)
    }

    /// Deregisters: the broker deletes the account with its devices, keys and PIN and revokes every
    /// token (a sign-in less than 15 minutes old is needed: else `GatehouseError.loginRequired`);
    /// then the tokens and the device key are forgotten here.
    public func deregister() async throws {
        let tokens = try await validTokens()
        _ = try await connection.json("DELETE", "/v1/account", .init(accessToken: tokens.accessToken, bound: tokens.isBound))
        try await tokenStore.clear()
        try await connection.keys.deleteKey(named: BrokerConnection.deviceKeyName)
    }

    /// The signed-in person's claims from the userinfo endpoint (what the scopes allow).
    public func userInfo() async throws -> Profile {
        let tokens = try await validTokens()
        let (json, _) = try await connection.json("GET", "/oauth2/userinfo", .init(accessToken: tokens.accessToken, bound: tokens.isBound))
        return Profile(json)
    }

    /// `request` with the access token (renewed first if needed) and, for bound tokens, a DPoP proof
    /// for it (with the nonce the request's server gave last): for the app's own API calls. `send(_:)`
    /// also answers the server's nonce request.
    public func authorize(_ request: HTTPRequest) async throws -> HTTPRequest {
        // A token (and its proof) never goes out in clear text, except to this machine.
        guard request.url.scheme?.lowercased() == "https" || Self.isLoopback(request.url) else {
            throw GatehouseError.transport("refusing to send a token over plain HTTP to \(request.url.host ?? "a server"): use https")
        }
        let tokens = try await validTokens()
        var authorized = request
        authorized.headers["Authorization"] = (tokens.isBound ? "DPoP " : "Bearer ") + tokens.accessToken
        if tokens.isBound {
            authorized.headers["DPoP"] = try await connection.proof(method: request.method, url: request.url, accessToken: tokens.accessToken)
        }
        return authorized
    }

    /// Sends `request` to the app's own API (a resource server) with the access token and its proof,
    /// and answers the server's response, whatever its status. A server that asks for a DPoP nonce
    /// (401 with `WWW-Authenticate: DPoP error="use_dpop_nonce"` and a `DPoP-Nonce`, RFC 9449 section 9)
    /// gets the request once more with a proof carrying that nonce; each server's nonce is kept for it alone.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var response = try await connection.send(try await authorize(request))
        await connection.remember(response, from: request.url)
        if response.status == 401, response.headers["dpop-nonce"] != nil,
            response.headers["www-authenticate"]?.contains("use_dpop_nonce") == true
        {
            response = try await connection.send(try await authorize(request))
            await connection.remember(response, from: request.url)
        }
        return response
    }

    /// localhost, ::1 or an IPv4 address in 127.0.0.0/8 (a literal address: a name such as
    /// `127.example.com` is not loopback).
    static func isLoopback(_ url: URL) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        return octets.count == 4 && octets.allSatisfy { $0 != nil } && octets[0] == 127
    }

    /// The installation's device key, if it has one (made at its first registration or proof).
    public func deviceKey() async throws -> (any DeviceKey)? {
        try await connection.keys.key(named: BrokerConnection.deviceKeyName)
    }
}
