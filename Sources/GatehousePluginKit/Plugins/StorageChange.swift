import Foundation

/// What `PluginStorage.update` writes under a key, decided from the value it read there.
public enum StorageChange<Value: Sendable>: Sendable {
    /// Leave it as it is (nothing is written).
    case keep
    /// Store this value (the key is made when there was none), expiring at `expiresAt` when given.
    case store(Value, expiresAt: Date? = nil)
    /// Delete the value.
    case delete
}

extension PluginStorage {
    /// How many times `update` reads again after another node changed the value first.
    static let updateAttempts = 5

    /// Changes the value under `key` by compare-and-swap: reads it (nil when there is none), asks
    /// `change` what to write, and writes that only if nobody changed the value since; when someone
    /// did, reads again and asks again, a few times, then refuses with `conflict`. `change` may run
    /// more than once, so it only computes (it throws to give up). Answers the value stored afterwards
    /// (nil when there is none). `conflict`: what the refusal tells the person.
    @discardableResult
    public func update<Value: Codable & Sendable>(
        _ type: Value.Type, key: String, conflict: String = PluginStorage.defaultConflict, _ change: (Value?) async throws -> StorageChange<Value>
    ) async throws -> Value? {
        try await compareAndSwap(
            key: key, conflict: conflict, read: { try await get(Value.self, key: key) },
            write: { value, expiresAt, version in
                if let version { return try await replace(value, key: key, version: version, expiresAt: expiresAt) }
                return try await insert(value, key: key, expiresAt: expiresAt)
            }, change: change
        )
    }

    /// `update` for a secret kept sealed (`insertSecret`): the secret in clear goes to `change` and
    /// what it stores is sealed again. A value stored in clear by an older version reads as none.
    @discardableResult
    public func updateSecret(key: String, conflict: String = PluginStorage.defaultConflict, _ change: (Data?) async throws -> StorageChange<Data>) async throws -> Data? {
        try await compareAndSwap(
            key: key, conflict: conflict,
            read: {
                do { return try await secret(key: key) } catch SecretSealerError.notSealed {
                    return try await get(JSONValue.self, key: key).map { Versioned(value: Data(), version: $0.version, present: false) }
                }
            },
            write: { value, expiresAt, version in
                if let version { return try await replaceWithSecret(value, key: key, version: version, expiresAt: expiresAt) }
                return try await insertSecret(value, key: key, expiresAt: expiresAt)
            }, change: change
        )
    }

    /// What `update` answers when it keeps losing, unless told otherwise.
    public static let defaultConflict = "This changed at the same time elsewhere; try again."

    private func compareAndSwap<Value: Sendable>(
        key: String, conflict: String, read: () async throws -> Versioned<Value>?, write: (Value, Date?, Int?) async throws -> Bool,
        change: (Value?) async throws -> StorageChange<Value>
    ) async throws -> Value? {
        for _ in 0..<Self.updateAttempts {
            let current = try await read()
            let value = current?.present == false ? nil : current?.value
            switch try await change(value) {
            case .keep:
                return value
            case .store(let new, let expiresAt):
                if try await write(new, expiresAt, current?.version) { return new }
            case .delete:
                guard let current else { return nil }
                if try await delete(key: key, version: current.version) { return nil }
            }
        }
        throw BrokerError(.conflict, .conflict, conflict)
    }
}
