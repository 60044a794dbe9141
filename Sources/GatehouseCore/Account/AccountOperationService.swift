import Foundation

/// Runs account operations for the holder of an access token.
public struct AccountOperationService: Sendable {
    let store: any BrokerStore
    let oauth: OAuthService
    let plugins: PluginInstances
    let clock: any BrokerClock

    public init(store: any BrokerStore, oauth: OAuthService, plugins: PluginInstances, clock: any BrokerClock) {
        self.store = store
        self.oauth = oauth
        self.plugins = plugins
        self.clock = clock
    }

    public func perform(plugin pluginID: String, operation name: String, fields: [String: JSONValue], accessToken: PresentedToken, clientIP: String?) async throws
        -> JSONValue
    {
        guard let operation = plugins.accountOperations[pluginID]?.first(where: { $0.name == name })
        else { throw BrokerError(.notFound, .notFound, "'\(pluginID)' offers no operation '\(name)'.") }
        let caller = try await SignedInCaller.proven(by: accessToken, for: pluginID, oauth: oauth, store: store)
        let (app, account) = (caller.app, caller.account)
        let answer = ChallengeResponse(fields)
        try ChallengeDescription(type: "\(pluginID).\(name)", summary: operation.summary, inputs: operation.inputs).validate(answer)
        let result = try await operation.run(
            answer,
            AccountOperationContext(
                account: account, app: app.view, signInKey: caller.signInKey, clientIP: clientIP, authenticatedAt: caller.authenticatedAt, methods: caller.methods
            )
        )
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: "account.operation", appID: app.id, accountID: account.id, providerID: pluginID, details: ["operation": name]
            )
        )
        return result
    }
}
