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

    public func perform(plugin pluginID: String, operation name: String, fields: [String: JSONValue], accessToken: PresentedToken, clientIP: String?) async throws -> JSONValue {
        let claims = try await oauth.authorize(accessToken)
        guard !claims.stateless else { throw BrokerError.stateless(.accountCredentials) }
        guard let provider = plugins.all[pluginID],
            let operation = provider.accountOperations.first(where: { $0.name == name })
        else { throw BrokerError(.notFound, .notFound, "'\(pluginID)' offers no operation '\(name)'.") }
        guard let app = try await store.app(id: claims.clientID), !app.disabled, app.id != ConsoleConfig.appID,
            app.policy.authenticators.contains(pluginID) || app.policy.identityProviders.contains(pluginID)
        else { throw BrokerError(.providerNotAllowed, .forbidden, "This app may not use '\(pluginID)'.") }
        guard let account = try await store.account(id: claims.sub.value) else { throw BrokerError(.invalidToken, .unauthenticated, "The account no longer exists.") }
        let answer = ChallengeResponse(fields)
        try ChallengeDescription(type: "\(pluginID).\(name)", summary: operation.summary, inputs: operation.inputs).validate(answer)
        var signInKey: SignInKey?
        if let keyID = claims.deviceKey { signInKey = try await store.signInKey(id: keyID) }
        let result = try await provider.perform(name, with: answer, in: AccountOperationContext(account: account, app: app, signInKey: signInKey, clientIP: clientIP))
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: "account.operation", appID: app.id, accountID: account.id, providerID: pluginID, details: ["operation": name]
            )
        )
        return result
    }
}
