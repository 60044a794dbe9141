import Foundation

/// Which accounts hold the `admin` role: the people admitted to the admin console. Kept in the core's
/// own slice of plugin storage (`gatehouse:admin-roles`), so every node reads the same answer at
/// once, and removed with the account.
public struct AdminRoleBook: Sendable {
    /// A role as stored: who granted it and when.
    public struct Grant: Sendable, Hashable, Codable {
        public var accountID: String
        public var role: String
        public var grantedBy: String
        public var grantedAt: Date
    }

    /// The one role there is: full administration of the broker.
    public static let admin = "admin"

    let store: any PluginDataStore
    let clock: any BrokerClock

    /// A name no plugin instance can have (instance ids have no colons).
    static let namespace = "gatehouse:admin-roles"
    /// Written once, by the first bootstrap, in a namespace of its own (no role operation can reach
    /// it): from then on the bootstrap token admits nobody.
    static let bootstrapNamespace = "gatehouse:admin-bootstrap"
    static let bootstrapMarker = "bootstrapped"

    public init(store: any PluginDataStore, clock: any BrokerClock) {
        self.store = store
        self.clock = clock
    }

    public func grant(of accountID: String) async throws -> Grant? {
        guard let record = try await store.pluginRecord(namespace: Self.namespace, key: accountID, now: clock.now) else { return nil }
        return try? JSONDecoder().decode(Grant.self, from: record.value)
    }

    public func isAdmin(_ accountID: String) async throws -> Bool { try await grant(of: accountID) != nil }

    /// Every account with the role.
    public func grants() async throws -> [Grant] {
        try await store.pluginRecords(namespace: Self.namespace, keyPrefix: "", now: clock.now).compactMap {
            try? JSONDecoder().decode(Grant.self, from: $0.value)
        }
    }

    /// Gives the account the role; false when it had it already.
    public func add(_ accountID: String, by grantor: String) async throws -> Bool {
        let grant = Grant(accountID: accountID, role: Self.admin, grantedBy: grantor, grantedAt: clock.now)
        return try await store.insertPluginRecord(namespace: Self.namespace, key: accountID, value: JSONEncoder().encode(grant), expiresAt: nil, now: clock.now)
    }

    /// Takes the role away; false when the account did not have it.
    public func remove(_ accountID: String) async throws -> Bool {
        try await store.deletePluginRecord(namespace: Self.namespace, key: accountID)
    }

    /// Claims the one-time bootstrap: true for the first caller ever, false for every later one (on
    /// any node), so the static admin token can make the first admin only.
    func claimBootstrap(for accountID: String) async throws -> Bool {
        try await store.insertPluginRecord(
            namespace: Self.bootstrapNamespace, key: Self.bootstrapMarker, value: Data(accountID.utf8), expiresAt: nil, now: clock.now
        )
    }

    func bootstrapClaimed() async throws -> Bool {
        try await store.pluginRecord(namespace: Self.bootstrapNamespace, key: Self.bootstrapMarker, now: clock.now) != nil
    }
}
