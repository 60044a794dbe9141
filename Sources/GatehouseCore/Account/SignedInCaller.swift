import Foundation

/// The person an access token speaks for, at an app that may use a plugin instance: what account
/// operations and plugin endpoints both prove before a plugin acts for someone. A stateless token
/// has no account; the app must list the instance (the console's app never qualifies: it lists
/// every provider only to sign administrators in).
struct SignedInCaller: Sendable {
    let app: App
    let account: Account
    /// The device sign-in key the token was issued through, if any.
    let signInKey: SignInKey?
    /// When the person really signed in (the token's `auth_time`), and how (`amr`).
    var authenticatedAt: Date? = nil
    var methods: [String] = []

    static func proven(by token: PresentedToken, for instance: String, oauth: OAuthService, store: any BrokerStore) async throws -> SignedInCaller {
        let claims = try await oauth.authorize(token)
        guard !claims.stateless else { throw BrokerError.stateless(.accountCredentials) }
        guard let app = try await store.app(id: claims.clientID), !app.disabled else {
            throw BrokerError(.invalidToken, .unauthenticated, "The app this token was issued to no longer exists.")
        }
        guard let account = try await store.account(id: claims.sub.value) else { throw BrokerError(.invalidToken, .unauthenticated, "The account no longer exists.") }
        try account.refuseTokenIfDisabled()
        var signInKey: SignInKey?
        if let keyID = claims.deviceKey { signInKey = try await store.signInKey(id: keyID) }
        return SignedInCaller(
            app: try allowing(app, instance), account: account, signInKey: signInKey,
            authenticatedAt: claims.authTime.map { Date(timeIntervalSince1970: TimeInterval($0)) }, methods: claims.amr ?? []
        )
    }

    /// The app, if its policy lets it use the instance.
    static func allowing(_ app: App, _ instance: String) throws -> App {
        guard !ConsoleConfig.isBuiltIn(app.id), app.policy.identityProviders.contains(instance) || app.policy.authenticators.contains(instance) else {
            throw BrokerError(.providerNotAllowed, .forbidden, "This app may not use '\(instance)'.")
        }
        return app
    }
}
