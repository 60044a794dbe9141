import Crypto
import Foundation

/// A plugin instance's private slice of the store. Values are Codable and may expire; updates use
/// optimistic concurrency so two nodes never lose each other's writes. Secrets (keys a plugin makes
/// for itself, upstream tokens) go through `insertSecret` / `secret`: sealed under the broker's
/// key-encryption key, so a copy of the database alone does not reveal them.
public struct PluginStorage: Sendable {
    /// The namespace: the plugin instance's id.
    public let namespace: String
    private let typeName: String?
    private let backend: any PluginStorageBackend

    /// Storage under `namespace`, kept by `backend` (the broker's store and key); `typeName` names the
    /// plugin type whose instances share `shared`.
    package init(namespace: String, typeName: String? = nil, backend: any PluginStorageBackend) {
        self.namespace = namespace
        self.typeName = typeName
        self.backend = backend
    }

    /// The slice every instance of this plugin's type shares: for records that must hold across
    /// instances (a replay cache of tokens from an issuer two instances both trust). Its namespace has
    /// a colon, which no instance id can; a plugin reaches only its own type's slice.
    public var shared: PluginStorage {
        PluginStorage(namespace: "type:" + (typeName ?? namespace), typeName: typeName, backend: backend)
    }

    /// The associated data of a sealed record: its namespace and key.
    package static func sealingContext(namespace: String, key: String) -> String { "plugin_data:\(namespace):\(key)" }

    /// Stores a secret, sealed, under a key that must not exist yet; false when it does.
    public func insertSecret(_ secret: Data, key: String, expiresAt: Date? = nil) async throws -> Bool {
        let sealed = try backend.seal(secret, context: Self.sealingContext(namespace: namespace, key: key))
        return try await backend.insert(namespace: namespace, key: key, value: Data(sealed.utf8), expiresAt: expiresAt)
    }

    /// Replaces a value read at `version` with a sealed secret; false when someone else changed it since.
    public func replaceWithSecret(_ secret: Data, key: String, version: Int, expiresAt: Date? = nil) async throws -> Bool {
        let sealed = try backend.seal(secret, context: Self.sealingContext(namespace: namespace, key: key))
        return try await backend.replace(namespace: namespace, key: key, value: Data(sealed.utf8), expiresAt: expiresAt, version: version)
    }

    /// A secret stored with `insertSecret`; nil when there is none. A record under that key that is
    /// not sealed (stored in clear by an older version) throws `SecretSealerError.notSealed`, so the
    /// plugin can read it its old way and seal it with `replaceWithSecret`.
    public func secret(key: String) async throws -> Versioned<Data>? {
        guard let record = try await backend.record(namespace: namespace, key: key) else { return nil }
        let opened = try backend.open(String(decoding: record.value, as: UTF8.self), context: Self.sealingContext(namespace: namespace, key: key))
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
        guard let record = try await backend.record(namespace: namespace, key: key) else { return nil }
        return Versioned(value: try JSONDecoder().decode(Value.self, from: record.value), version: record.version)
    }

    /// Stores a value under a key that must not exist yet; false when it does.
    public func insert(_ value: some Encodable, key: String, expiresAt: Date? = nil) async throws -> Bool {
        try await backend.insert(namespace: namespace, key: key, value: JSONEncoder().encode(value), expiresAt: expiresAt)
    }

    /// Replaces a value read at `version`; false when someone else changed it since.
    public func replace(_ value: some Encodable, key: String, version: Int, expiresAt: Date? = nil) async throws -> Bool {
        try await backend.replace(namespace: namespace, key: key, value: JSONEncoder().encode(value), expiresAt: expiresAt, version: version)
    }

    /// Deletes the value under `key`; false when there was none.
    @discardableResult
    public func delete(key: String) async throws -> Bool {
        try await backend.delete(namespace: namespace, key: key, version: nil)
    }

    /// Deletes a value read at `version`; false when someone else changed or deleted it since.
    public func delete(key: String, version: Int) async throws -> Bool {
        try await backend.delete(namespace: namespace, key: key, version: version)
    }

    /// Every live value whose key starts with `keyPrefix`, in key order.
    public func all<Value: Decodable & Sendable>(_ type: Value.Type, keyPrefix: String = "") async throws -> [(key: String, value: Value)] {
        try await backend.records(namespace: namespace, keyPrefix: keyPrefix).map {
            (key: $0.key, value: try JSONDecoder().decode(Value.self, from: $0.value))
        }
    }
}

/// What keeps plugin records and seals their secrets: the broker's store and key-encryption key.
/// Package access: the broker implements it, no plugin sees it (a plugin reaches only its own
/// namespace, through `PluginStorage`).
package protocol PluginStorageBackend: Sendable {
    /// A live record's value and version.
    func record(namespace: String, key: String) async throws -> (value: Data, version: Int)?
    /// Adds a record; false when the key exists.
    func insert(namespace: String, key: String, value: Data, expiresAt: Date?) async throws -> Bool
    /// Replaces a record still at `version`; false otherwise.
    func replace(namespace: String, key: String, value: Data, expiresAt: Date?, version: Int) async throws -> Bool
    /// Deletes a record (only at `version` when given); false when there was none to delete.
    func delete(namespace: String, key: String, version: Int?) async throws -> Bool
    /// Live records whose key starts with `keyPrefix`, in key order.
    func records(namespace: String, keyPrefix: String) async throws -> [(key: String, value: Data)]
    /// Seals a secret for the record `context` names.
    func seal(_ secret: Data, context: String) throws -> String
    /// Opens a sealed secret; `SecretSealerError` when it is not sealed or does not open.
    func open(_ sealed: String, context: String) throws -> Data
}
