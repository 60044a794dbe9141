import Foundation
import GatehouseCore

extension TestBroker {
    /// Opens a single sign-on session for `account`, as a browser sign-in through `provider` would,
    /// for pages that go on from one (the account page's enrolments); answers its id.
    public func openBrowserSession(for account: Account, provider: String, factors: [String] = []) async throws -> String {
        let now = clock.now
        let session = BrowserSession(
            id: RandomToken.make(), cookieDigest: RandomToken.make(), accountID: account.id, providers: [provider], factors: factors,
            methods: [provider] + factors, subject: account.id, username: account.username, authTime: now, createdAt: now, lastSeenAt: now,
            expiresAt: now.addingTimeInterval(3600))
        try await broker.store.insertBrowserSession(session)
        return session.id
    }
}
