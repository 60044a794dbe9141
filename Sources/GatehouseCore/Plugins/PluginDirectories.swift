import Foundation

extension AccountDirectory {
    /// The reads plugins may make of the broker's accounts, forwarded to `store` (and nothing else of it).
    public init(_ store: any AccountStore) {
        self.init(
            account: { try await store.account(id: $0) }, identityLink: { try await store.identityLink(providerID: $0, subject: $1) },
            identityLinks: { try await store.identityLinks(accountID: $0) }, accountIDsWithVerifiedEmail: { try await store.accountIDs(withVerifiedEmail: $0) }
        )
    }
}

extension AppDirectory {
    /// What plugins may read of the broker's apps: each app's view, forwarded from `store`. A
    /// disabled app is no app to a plugin (it may neither start flows nor get tokens).
    public init(_ store: any AppStore) {
        self.init(app: { id in
            guard let app = try await store.app(id: id), !app.disabled else { return nil }
            return app.view
        })
    }
}
