import Foundation

/// A plugin instance's private slice of the store. Values are Codable and may expire; updates use
/// optimistic concurrency so two nodes never lose each other's writes.
public struct PluginStorage: Sendable {
    public let namespace: String
    private let store: any PluginDataStore
    private let clock: any BrokerClock

    public init(namespace: String, store: any PluginDataStore, clock: any BrokerClock) {
        self.namespace = namespace
        self.store = store
        self.clock = clock
    }

    /// A stored value with the version to pass to `replace`.
    public struct Versioned<Value: Sendable>: Sendable {
        public var value: Value
        public var version: Int
    }

    public func get<Value: Decodable & Sendable>(_ type: Value.Type, key: String) async throws -> Versioned<Value>? {
        guard let record = try await store.pluginRecord(namespace: namespace, key: key, now: clock.now) else { return nil }
        return Versioned(value: try JSONDecoder().decode(Value.self, from: record.value), version: record.version)
    }

    /// Stores a value under a key that must not exist yet; false when it does.
    public func insert(_ value: some Encodable, key: String, expiresAt: Date? = nil) async throws -> Bool {
        try await store.insertPluginRecord(namespace: namespace, key: key, value: JSONEncoder().encode(value), expiresAt: expiresAt, now: clock.now)
    }

    /// Replaces a value read at `version`; false when someone else changed it since.
    public func replace(_ value: some Encodable, key: String, version: Int, expiresAt: Date? = nil) async throws -> Bool {
        try await store.replacePluginRecord(namespace: namespace, key: key, value: JSONEncoder().encode(value), expiresAt: expiresAt, expectedVersion: version)
    }

    @discardableResult
    public func delete(key: String) async throws -> Bool {
        try await store.deletePluginRecord(namespace: namespace, key: key)
    }

    /// Deletes a value read at `version`; false when someone else changed or deleted it since.
    public func delete(key: String, version: Int) async throws -> Bool {
        try await store.deletePluginRecord(namespace: namespace, key: key, expectedVersion: version)
    }

    /// Every live value whose key starts with `keyPrefix`, in key order.
    public func all<Value: Decodable & Sendable>(_ type: Value.Type, keyPrefix: String = "") async throws -> [(key: String, value: Value)] {
        try await store.pluginRecords(namespace: namespace, keyPrefix: keyPrefix, now: clock.now).map {
            (key: $0.key, value: try JSONDecoder().decode(Value.self, from: $0.value))
        }
    }
}
