import Foundation

/// The scopes a person allowed an app that asks for consent (`Policy.consentRequired`), remembered
/// per account and app until the person (or the account's deletion) revokes them. Kept in the
/// core's own slice of plugin storage, so every node reads the same answer.
public struct ConsentBook: Sendable {
    /// A consent as stored and as the person's list shows it.
    public struct Grant: Sendable, Hashable, Codable {
        public var appID: String
        public var scopes: [String]
        public var grantedAt: Date
    }

    let store: any PluginDataStore
    let clock: any BrokerClock

    /// A name no plugin instance can have (instance ids have no colons).
    static let namespace = "gatehouse:consent"

    public init(store: any PluginDataStore, clock: any BrokerClock) {
        self.store = store
        self.clock = clock
    }

    static func key(accountID: String, appID: String) -> String { "\(accountID)/\(appID)" }

    /// Whether the person allowed the app every one of `scopes` already.
    public func covers(accountID: String, appID: String, scopes: [String]) async throws -> Bool {
        guard let record = try await store.pluginRecord(namespace: Self.namespace, key: Self.key(accountID: accountID, appID: appID), now: clock.now),
            let grant = try? JSONDecoder().decode(Grant.self, from: record.value)
        else { return false }
        return Set(scopes).isSubset(of: grant.scopes)
    }

    /// Remembers that the person allowed `scopes` (added to what they allowed before).
    public func record(accountID: String, appID: String, scopes: [String]) async throws {
        let key = Self.key(accountID: accountID, appID: appID)
        // Two answers at once: the loser reads the winner's grant and adds to it.
        for _ in 0..<3 {
            let now = clock.now
            if let record = try await store.pluginRecord(namespace: Self.namespace, key: key, now: now) {
                let previous = (try? JSONDecoder().decode(Grant.self, from: record.value))?.scopes ?? []
                let grant = Grant(appID: appID, scopes: previous + scopes.filter { !previous.contains($0) }, grantedAt: now)
                if try await store.replacePluginRecord(
                    namespace: Self.namespace, key: key, value: JSONEncoder().encode(grant), expiresAt: nil, expectedVersion: record.version)
                {
                    return
                }
            } else if try await store.insertPluginRecord(
                namespace: Self.namespace, key: key, value: JSONEncoder().encode(Grant(appID: appID, scopes: scopes, grantedAt: now)), expiresAt: nil, now: now
            ) {
                return
            }
        }
        throw BrokerError(.flowConflict, .conflict, "The consent was changed concurrently; try again.")
    }

    /// The apps the person allowed, with their scopes.
    public func grants(accountID: String) async throws -> [Grant] {
        try await store.pluginRecords(namespace: Self.namespace, keyPrefix: "\(accountID)/", now: clock.now).compactMap {
            try? JSONDecoder().decode(Grant.self, from: $0.value)
        }
    }

    /// Forgets the consent for one app; false when there was none.
    @discardableResult
    public func revoke(accountID: String, appID: String) async throws -> Bool {
        try await store.deletePluginRecord(namespace: Self.namespace, key: Self.key(accountID: accountID, appID: appID))
    }

    /// Forgets every consent given to the app (it was deleted: an app made later with its id asks again).
    public func revokeAll(appID: String) async throws {
        for record in try await store.pluginRecords(namespace: Self.namespace, keyPrefix: "", now: clock.now) where record.key.hasSuffix("/\(appID)") {
            _ = try await store.deletePluginRecord(namespace: Self.namespace, key: record.key)
        }
    }

    /// Forgets every consent of the account (it was deleted).
    public func revokeAll(accountID: String) async throws {
        for grant in try await grants(accountID: accountID) { try await revoke(accountID: accountID, appID: grant.appID) }
    }
}
