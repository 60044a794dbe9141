import Foundation

/// Runs the endpoints plugins declare (`/v1/plugins/<instance>/<path>`): finds the declaration,
/// proves the caller it names (an app's client credentials, a person's access token, an admin
/// token), holds the app to its policy, checks the fields, and hands the call to the plugin. Calls
/// that change something (any method but `GET`) are audited as `plugin.endpoint_called`.
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
        guard let plugin = plugins.all[instance],
            let endpoint = plugin.endpoints.first(where: { $0.method.rawValue == method && $0.path == path })
        else { throw BrokerError(.notFound, .notFound, "No endpoint \(method) /v1/plugins/\(instance)/\(path).") }
        return endpoint
    }

    /// Proves the caller, checks the fields and answers the plugin's answer.
    public func call(
        instance: String, method: String, path: String, fields: [String: JSONValue], credentials: Credentials, clientIP: String?
    ) async throws -> PluginEndpointAnswer {
        let endpoint = try endpoint(instance: instance, method: method, path: path)
        let plugin = plugins.all[instance]!
        var call = PluginEndpointCall(endpoint: endpoint, fields: ChallengeResponse(fields), clientIP: clientIP)
        switch endpoint.caller {
        case .admin:
            call.admin = try await adminGate.authenticate(bearer: credentials.bearer, clientIP: clientIP).name
        case .appClient:
            let app = try await oauth.clients.authenticate(credentials.client, clientIP: clientIP)
            guard app.isConfidential else {
                throw BrokerError(.unauthorizedClient, .forbidden, "Only a confidential app's back end may call this endpoint.")
            }
            call.app = try SignedInCaller.allowing(app, instance)
        case .accessToken:
            guard let token = credentials.accessToken else { throw BrokerError(.invalidToken, .unauthenticated, "An access token is required.") }
            let caller = try await SignedInCaller.proven(by: token, for: instance, oauth: oauth, store: store)
            (call.app, call.account, call.signInKey) = (caller.app, caller.account, caller.signInKey)
        }
        try ChallengeDescription(type: "\(instance).\(endpoint.path)", summary: endpoint.summary, inputs: endpoint.inputs).validate(call.fields)
        let answer = try await plugin.handle(call)
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
