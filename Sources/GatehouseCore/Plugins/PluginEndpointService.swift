import Foundation

/// Runs the endpoints plugins declare (`/v1/plugins/<instance>/<path>`, or a root path an instance
/// claims): finds the declaration, proves the caller it names (an app's client credentials, a
/// person's access token, an admin token, or anyone for a path that carries its own credential),
/// holds the app to its policy, checks the fields, and hands the call to the plugin. Calls that
/// change something (any method but `GET`) are audited as `plugin.endpoint_called`.
public struct PluginEndpointService: Sendable {
    let store: any BrokerStore
    let oauth: OAuthService
    let plugins: PluginInstances
    let adminGate: AdminGate
    let clock: any BrokerClock

    public init(store: any BrokerStore, oauth: OAuthService, plugins: PluginInstances, adminGate: AdminGate, clock: any BrokerClock) {
        self.store = store
        self.oauth = oauth
        self.plugins = plugins
        self.adminGate = adminGate
        self.clock = clock
    }

    /// The credentials a request brought, read by the server without knowing which one the endpoint
    /// needs: each caller kind reads its own.
    public struct Credentials: Sendable {
        /// HTTP Basic, or `client_id` and `client_secret` from the body.
        public var client: ClientCredentials?
        /// The `Authorization` header's access token (Bearer or DPoP), when it parsed as one.
        public var accessToken: PresentedToken?
        /// The `Authorization: Bearer` value, for an admin token.
        public var bearer: String?

        public init(client: ClientCredentials? = nil, accessToken: PresentedToken? = nil, bearer: String? = nil) {
            self.client = client
            self.accessToken = accessToken
            self.bearer = bearer
        }
    }

    /// The endpoint `method path` of `instance`; `not_found` when the instance offers none.
    public func endpoint(instance: String, method: String, path: String) throws -> PluginEndpoint {
        guard let endpoint = plugins.endpoints[instance]?.first(where: { !$0.root && $0.method.rawValue == method && $0.path == path })
        else { throw BrokerError(.notFound, .notFound, "No endpoint \(method) /v1/plugins/\(instance)/\(path).") }
        return endpoint
    }

    /// Every root endpoint the instances claim, once per method and path (the server routes each),
    /// with the caller and format they share.
    public var rootEndpoints: [PluginEndpoint] {
        var seen: Set<String> = []
        return plugins.endpoints.keys.sorted().flatMap { plugins.endpoints[$0, default: []].filter(\.root) }.filter {
            seen.insert("\($0.method.rawValue) \($0.path)").inserted
        }
    }

    /// Proves the caller, checks the fields and answers the plugin's answer.
    public func call(
        instance: String, method: String, path: String, fields: [String: JSONValue], credentials: Credentials, clientIP: String?
    ) async throws -> PluginEndpointAnswer {
        let endpoint = try endpoint(instance: instance, method: method, path: path)
        return try await call(endpoint, of: instance, fields: fields, parameters: [:], credentials: credentials, clientIP: clientIP)
    }

    /// Calls the root endpoint `method path` (as declared, `:name` segments and all): each instance
    /// that claims it in turn (in id order; for an app's back end, only those its policy lists, in
    /// the policy's order), until one answers something else than `not_found`. Answers the answer and
    /// the instance that gave it; when every instance answered `not_found`, the last one's refusal.
    public func callRoot(
        method: String, path: String, fields: [String: JSONValue], parameters: [String: String], credentials: Credentials, clientIP: String?,
        language: String = "en"
    ) async throws -> (PluginEndpointAnswer, instance: String) {
        var claiming = plugins.endpoints.keys.sorted().compactMap { id -> (String, PluginEndpoint)? in
            guard let endpoint = plugins.endpoints[id]?.first(where: { $0.root && $0.method.rawValue == method && $0.path == path }) else { return nil }
            return (id, endpoint)
        }
        var refusal = BrokerError(.notFound, .notFound, "No endpoint \(method) /\(path).")
        guard let first = claiming.first else { throw refusal }
        var app: App?
        if first.1.caller == .appClient {
            // The app is proven once, and only the instances its policy lists answer it.
            let proven = try await confidentialApp(credentials, clientIP: clientIP)
            claiming = (proven.policy.identityProviders + proven.policy.authenticators).compactMap { id in claiming.first { $0.0 == id } }
            guard !claiming.isEmpty else { throw BrokerError(.providerNotAllowed, .forbidden, "This app's policy lists no provider that offers \(method) /\(path).") }
            app = proven
        }
        if let app, let (plugin, endpoint) = claiming.first {
            // An app's back end is answered by the first instance its policy lists, as a call under
            // that instance's prefix would be.
            return (
                try await call(
                    endpoint, of: plugin, fields: fields, parameters: parameters, credentials: credentials, clientIP: clientIP, app: app, language: language),
                plugin
            )
        }
        for (plugin, endpoint) in claiming {
            do {
                return (
                    try await call(endpoint, of: plugin, fields: fields, parameters: parameters, credentials: credentials, clientIP: clientIP, language: language),
                    plugin
                )
            } catch let error as BrokerError where error.kind == .notFound {
                // The next instance may know the path's resource (an invitation another one issued).
                refusal = error
            }
        }
        throw refusal
    }

    /// The confidential app whose back end presents `credentials`.
    private func confidentialApp(_ credentials: Credentials, clientIP: String?) async throws -> App {
        let app = try await oauth.clients.authenticate(credentials.client, clientIP: clientIP)
        guard app.isConfidential else {
            throw BrokerError(.unauthorizedClient, .forbidden, "Only a confidential app's back end may call this endpoint.")
        }
        return app
    }

    private func call(
        _ endpoint: PluginEndpoint, of instance: String, fields: [String: JSONValue], parameters: [String: String], credentials: Credentials,
        clientIP: String?, app provenApp: App? = nil, language: String = "en"
    ) async throws -> PluginEndpointAnswer {
        // A null field is an absent one; a link anyone may open (decorated by mail systems and
        // trackers) is answered without the fields it does not declare.
        var fields = fields.filter { $0.value != .null }
        if endpoint.caller == .anyone { fields = fields.filter { name, _ in endpoint.inputs.contains { $0.name == name } } }
        var call = PluginEndpointCall(endpoint: endpoint, fields: ChallengeResponse(fields), clientIP: clientIP)
        call.parameters = parameters
        call.language = language
        switch endpoint.caller {
        case .anyone:
            break
        case .admin:
            call.admin = try await adminGate.authenticate(bearer: credentials.bearer, clientIP: clientIP).name
        case .appClient:
            let app: App
            if let provenApp { app = provenApp } else { app = try await confidentialApp(credentials, clientIP: clientIP) }
            call.app = try SignedInCaller.allowing(app, instance).view
        case .accessToken:
            guard let token = credentials.accessToken else { throw BrokerError(.invalidToken, .unauthenticated, "An access token is required.") }
            let caller = try await SignedInCaller.proven(by: token, for: instance, oauth: oauth, store: store)
            (call.app, call.account, call.signInKey) = (caller.app.view, caller.account, caller.signInKey)
        }
        try ChallengeDescription(type: "\(instance).\(endpoint.path)", summary: endpoint.summary, inputs: endpoint.inputs).validate(call.fields)
        let answer = try await endpoint.handle(call)
        if endpoint.method != .get {
            var details = ["method": endpoint.method.rawValue, "path": endpoint.path, "caller": endpoint.caller.rawValue]
            if let admin = call.admin { details["admin"] = admin }
            if let clientIP { details["clientIP"] = clientIP }
            try await store.appendAudit(
                AuditEvent(time: clock.now, type: "plugin.endpoint_called", appID: call.app?.id, accountID: call.account?.id, providerID: instance, details: details)
            )
        }
        return answer
    }
}
