import Foundation

/// Reading accounts and their identities: what plugins get (`PluginEnvironment.accounts`), since
/// accounts change only through the flow engine and the core's services. A value of its own that
/// forwards four reads, so that no plugin can reach the store behind it.
public struct AccountDirectory: Sendable {
    private let readAccount: @Sendable (String) async throws -> Account?
    private let readLink: @Sendable (String, String) async throws -> IdentityLink?
    private let readLinks: @Sendable (String) async throws -> [IdentityLink]
    private let findVerified: @Sendable (String) async throws -> [String]

    /// A directory over the broker's reads (the broker builds it; tests too).
    public init(
        account: @escaping @Sendable (_ id: String) async throws -> Account?,
        identityLink: @escaping @Sendable (_ providerID: String, _ subject: String) async throws -> IdentityLink?,
        identityLinks: @escaping @Sendable (_ accountID: String) async throws -> [IdentityLink],
        accountIDsWithVerifiedEmail: @escaping @Sendable (_ email: String) async throws -> [String]
    ) {
        readAccount = account
        readLink = identityLink
        readLinks = identityLinks
        findVerified = accountIDsWithVerifiedEmail
    }

    /// The account, if it exists.
    public func account(id: String) async throws -> Account? { try await readAccount(id) }
    /// The link of a provider's subject, if any.
    public func identityLink(providerID: String, subject: String) async throws -> IdentityLink? { try await readLink(providerID, subject) }
    /// Every identity linked to the account.
    public func identityLinks(accountID: String) async throws -> [IdentityLink] { try await readLinks(accountID) }
    /// The accounts (ids, sorted) with an identity link whose provider vouched for `email`
    /// (`email_verified`), compared without regard to case.
    public func accountIDs(withVerifiedEmail email: String) async throws -> [String] { try await findVerified(email) }
}

/// Reading apps, for plugins (`PluginEnvironment.apps`): what a plugin sees of each (`AppView`). A
/// disabled app is not found.
public struct AppDirectory: Sendable {
    private let readApp: @Sendable (String) async throws -> AppView?

    /// A directory over the broker's read (the broker builds it; tests too).
    public init(app: @escaping @Sendable (_ id: String) async throws -> AppView?) { readApp = app }

    /// The app, if it exists and is enabled.
    public func app(id: String) async throws -> AppView? { try await readApp(id) }
}
