import Foundation

/// Accounts an administrator made (`users add`, the console, the admin API) before the person ever
/// signed in. Their first sign-in counts as the account's creation for the plugins that ask
/// (`FlowContext.accountCreated`: an email second factor enrols the person's address then, as it would
/// for an account made at that sign-in); the mark goes when that sign-in completes. Kept in the core's
/// own slice of plugin storage, so every node sees it.
struct FirstSignInMarks: Sendable {
    let store: any BrokerStore
    let clock: any BrokerClock

    /// A namespace no plugin instance can have (instance ids have no colons).
    static let namespace = "gatehouse:first-sign-in"

    func mark(_ accountID: String) async throws {
        _ = try await store.insertPluginRecord(namespace: Self.namespace, key: accountID, value: Data(), expiresAt: nil, now: clock.now)
    }

    func isMarked(_ accountID: String) async throws -> Bool {
        try await store.pluginRecord(namespace: Self.namespace, key: accountID, now: clock.now) != nil
    }

    func clear(_ accountID: String) async throws {
        _ = try await store.deletePluginRecord(namespace: Self.namespace, key: accountID)
    }
}
