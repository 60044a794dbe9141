import Foundation
import GatehousePluginKit

/// The broker's side of every `PluginStorage`: records in its store, secrets sealed under its
/// key-encryption key, time from its clock.
struct StoredPluginRecords: PluginStorageBackend {
    let store: any PluginDataStore
    let clock: any BrokerClock
    let sealer: SecretSealer

    func record(namespace: String, key: String) async throws -> (value: Data, version: Int)? {
        try await store.pluginRecord(namespace: namespace, key: key, now: clock.now).map { ($0.value, $0.version) }
    }

    func insert(namespace: String, key: String, value: Data, expiresAt: Date?) async throws -> Bool {
        try await store.insertPluginRecord(namespace: namespace, key: key, value: value, expiresAt: expiresAt, now: clock.now)
    }

    func replace(namespace: String, key: String, value: Data, expiresAt: Date?, version: Int) async throws -> Bool {
        try await store.replacePluginRecord(namespace: namespace, key: key, value: value, expiresAt: expiresAt, expectedVersion: version)
    }

    func delete(namespace: String, key: String, version: Int?) async throws -> Bool {
        guard let version else { return try await store.deletePluginRecord(namespace: namespace, key: key) }
        return try await store.deletePluginRecord(namespace: namespace, key: key, expectedVersion: version)
    }

    func records(namespace: String, keyPrefix: String) async throws -> [(key: String, value: Data)] {
        try await store.pluginRecords(namespace: namespace, keyPrefix: keyPrefix, now: clock.now).map { ($0.key, $0.value) }
    }

    func seal(_ secret: Data, context: String) throws -> String { try sealer.seal(secret, context: context) }

    func open(_ sealed: String, context: String) throws -> Data { try sealer.open(sealed, context: context) }
}

extension PluginStorage {
    /// Storage under `namespace` in the broker's store, secrets sealed with `sealer`; `typeName`: the
    /// plugin type whose instances share `shared`.
    public init(namespace: String, typeName: String? = nil, store: any PluginDataStore, clock: any BrokerClock, sealer: SecretSealer) {
        self.init(namespace: namespace, typeName: typeName, backend: StoredPluginRecords(store: store, clock: clock, sealer: sealer))
    }
}
