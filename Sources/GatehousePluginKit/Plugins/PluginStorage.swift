import Crypto
import Foundation

/// A plugin instance's private slice of the store. Values are Codable and may expire; updates use
/// optimistic concurrency so two nodes never lose each other's writes. Secrets (keys a plugin makes
/// for itself, upstream tokens) go through `insertSecret` / `secret`: sealed under the broker's
/// key-encryption key, so a copy of the database alone does not reveal them.
public struct PluginStorage: Sendable {
    /// The namespace: the plugin instance's id.
    public let namespace: String
    private let store: any PluginDataStore
    private let clock: any BrokerClock
    private let sealer: SecretSealer

    /// Storage under `namespace`, secrets sealed with `sealer`.
    public init(namespace: String, store: any PluginDataStore, clock: any BrokerClock, sealer: SecretSealer) {
        self.namespace = namespace
        self.store = store
        self.clock = clock
        self.sealer = sealer
    }

    /// The slice every instance of the plugin type `typeName` shares: for records that must hold
    /// across instances (a replay cache of tokens from an issuer two instances both trust). Its
    /// namespace has a colon, which no instance id can.
    public func shared(byType typeName: String) -> PluginStorage {
        PluginStorage(namespace: "type:" + typeName, store: store, clock: clock, sealer: sealer)
    }

    /// The associated data of a sealed record: its namespace and key.
    package static func sealingContext(namespace: String, key: String) -> String { "plugin_data:\(namespace):\(key)" }

    /// Stores a secret, sealed, under a key that must not exist yet; false when it does.
    public func insertSecret(_ secret: Data, key: String, expiresAt: Date? = nil) async throws -> Bool {
        let sealed = try sealer.seal(secret, context: Self.sealingContext(namespace: namespace, key: key))
        return try await store.insertPluginRecord(namespace: namespace, key: key, value: Data(sealed.utf8), expiresAt: expiresAt, now: clock.now)
    }

    /// Replaces a value read at `version` with a sealed secret; false when someone else changed it since.
    public func replaceWithSecret(_ secret: Data, key: String, version: Int, expiresAt: Date? = nil) async throws -> Bool {
        let sealed = try sealer.seal(secret, context: Self.sealingContext(namespace: namespace, key: key))
        return try await store.replacePluginRecord(namespace: namespace, key: key, value: Data(sealed.utf8), expiresAt: expiresAt, expectedVersion: version)
    }

    /// A secret stored with `insertSecret`; nil when there is none. A record under that key that is
    /// not sealed (stored in clear by an older version) throws `SecretSealerError.notSealed`, so the
    /// plugin can read it its old way and seal it with `replaceWithSecret`.
    public func secret(key: String) async throws -> Versioned<Data>? {
        guard let record = try await store.pluginRecord(namespace: namespace, key: key, now: clock.now) else { return nil }
        guard SecretSealer.isSealed(record.value) else { throw SecretSealerError.notSealed }
        let opened = try sealer.open(String(decoding: record.value, as: UTF8.self), context: Self.sealingContext(namespace: namespace, key: key))
        return Versioned(value: opened, version: record.version)
    }

    /// A random 256-bit key of this instance (an HMAC pepper), made by the first node that asks and
    /// kept sealed, so that every node uses the same one.
    public func instanceKey(_ key: String) async throws -> SymmetricKey {
        if let stored = try await secret(key: key) { return SymmetricKey(data: stored.value) }
        _ = try await insertSecret(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }, key: key)
        guard let stored = try await secret(key: key) else { throw BrokerError.internalFailure("The instance key '\(key)' could not be stored.") }
        return SymmetricKey(data: stored.value)
    }

    /// A stored value with the version to pass to `replace`.
    public struct Versioned<Value: Sendable>: Sendable {
        /// The value.
        public var value: Value
        /// Its version, to pass to `replace`.
        public var version: Int
        /// False for a record `updateSecret` found but could not read as a secret.
        var present = true

        init(value: Value, version: Int, present: Bool = true) {
            self.value = value
            self.version = version
            self.present = present
        }
    }

    /// The value under `key`, with its version; nil when none (or expired).
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
    /// Deletes the value under `key`; false when there was none.
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
