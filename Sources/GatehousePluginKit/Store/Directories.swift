import Foundation

/// Reading accounts and their identities: what plugins get (`PluginEnvironment.accounts`), since
/// accounts change only through the flow engine and the core's services.
public protocol AccountDirectory: Sendable {
    /// The account, if it exists.
    func account(id: String) async throws -> Account?
    /// The link of a provider's subject, if any.
    func identityLink(providerID: String, subject: String) async throws -> IdentityLink?
    /// Every identity linked to the account.
    func identityLinks(accountID: String) async throws -> [IdentityLink]
    /// The accounts (ids, sorted) with an identity link whose provider vouched for `email`
    /// (`email_verified`), compared without regard to case.
    func accountIDs(withVerifiedEmail email: String) async throws -> [String]
}

/// Reading apps, for plugins (`PluginEnvironment.apps`).
public protocol AppDirectory: Sendable {
    /// The app, if it exists.
    func app(id: String) async throws -> App?
}
