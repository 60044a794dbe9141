import Foundation

/// One value a plugin stored.
public struct PluginRecord: Sendable, Hashable {
    /// The key within its namespace.
    public var key: String
    /// The value as stored (JSON, or a sealed secret).
    public var value: Data
    /// Bumped on every write; a replace names the version it read.
    public var version: Int
    /// When it goes, if ever.
    public var expiresAt: Date?

    /// A record.
    public init(key: String, value: Data, version: Int, expiresAt: Date?) {
        self.key = key
        self.value = value
        self.version = version
        self.expiresAt = expiresAt
    }

    /// The version a new record starts at: random (1 to 2^40), never 0, so that a writer still holding
    /// the version of a record deleted since cannot replace the record inserted after it under the
    /// same key (a record's versions only count up from where it started).
    public static func firstVersion() -> Int { Int.random(in: 1...(1 << 40)) }
}

/// Key-value storage for plugins, partitioned by namespace (the plugin instance id).
public protocol PluginDataStore: Sendable {
    /// The live record under `key`, if any.
    func pluginRecord(namespace: String, key: String, now: Date) async throws -> PluginRecord?
    /// Every live record of every namespace whose value starts with `valuePrefix` (the sealed secrets,
    /// for `keys rewrap`).
    func pluginRecords(valuePrefix: Data, now: Date) async throws -> [(namespace: String, record: PluginRecord)]
    /// Inserts unless a live record with that key exists; false when it does.
    func insertPluginRecord(namespace: String, key: String, value: Data, expiresAt: Date?, now: Date) async throws -> Bool
    /// Replaces the record if its version is still `expectedVersion`; false otherwise.
    func replacePluginRecord(namespace: String, key: String, value: Data, expiresAt: Date?, expectedVersion: Int) async throws -> Bool
    /// Deletes the record; false when there was none.
    func deletePluginRecord(namespace: String, key: String) async throws -> Bool
    /// Deletes the record if its version is still `expectedVersion`; false otherwise.
    func deletePluginRecord(namespace: String, key: String, expectedVersion: Int) async throws -> Bool
    /// The live records of a namespace whose keys start with `keyPrefix`, in key order.
    func pluginRecords(namespace: String, keyPrefix: String, now: Date) async throws -> [PluginRecord]
    /// Deletes expired records; answers how many.
    func deleteExpiredPluginRecords(now: Date) async throws -> Int
}
