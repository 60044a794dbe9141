import Foundation
import GatehousePluginKit

/// Each app's attestation secrets (Play Integrity keys, the Play service account, the DeviceCheck
/// key), kept in the plugin's storage encrypted under the key-encryption key. Only their names and
/// who set them when are ever shown.
struct AttestationSecrets: Sendable {
    enum Name: String, Sendable, CaseIterable {
        case playDecryptionKey = "play-integrity-decryption-key"
        case playVerificationKey = "play-integrity-verification-key"
        case playServiceAccount = "play-integrity-service-account"
        case deviceCheckKey = "devicecheck-private-key"
    }

    struct Info: Codable, Sendable {
        var name: String
        var setAt: Date
        var setBy: String
    }

    let storage: PluginStorage
    let clock: any BrokerClock

    static func valueKey(_ name: Name, app: String) -> String { "secret-value/\(app)/\(name.rawValue)" }
    static func infoKey(_ name: Name, app: String) -> String { "secret-info/\(app)/\(name.rawValue)" }

    /// Sets (or replaces) a secret.
    func set(_ name: Name, value: Data, app: String, by admin: String) async throws {
        let key = Self.valueKey(name, app: app)
        if let current = try await storage.secret(key: key) {
            guard try await storage.replaceWithSecret(value, key: key, version: current.version) else {
                throw BrokerError(.conflict, .conflict, "The secret changed meanwhile; try again.")
            }
        } else {
            guard try await storage.insertSecret(value, key: key) else { throw BrokerError(.conflict, .conflict, "The secret changed meanwhile; try again.") }
        }
        let info = Info(name: name.rawValue, setAt: clock.now, setBy: admin)
        if let current = try await storage.get(Info.self, key: Self.infoKey(name, app: app)) {
            _ = try await storage.replace(info, key: Self.infoKey(name, app: app), version: current.version)
        } else {
            _ = try await storage.insert(info, key: Self.infoKey(name, app: app))
        }
    }

    /// The secret, or a refusal that tells the operator what to set.
    func require(_ name: Name, app: String) async throws -> Data {
        guard let secret = try await storage.secret(key: Self.valueKey(name, app: app)) else {
            throw BrokerError(.providerUnavailable, .unavailable, "This app's \(name.rawValue) is not set: an administrator sets it with the secrets resource.")
                .publicly(because: "secret_missing")
        }
        return secret.value
    }

    func list(app: String) async throws -> [Info] {
        try await storage.all(Info.self, keyPrefix: "secret-info/\(app)/").map(\.value)
    }

    /// Removes a secret; false when there was none.
    func remove(_ name: Name, app: String) async throws -> Bool {
        let removed = try await storage.delete(key: Self.valueKey(name, app: app))
        try await storage.delete(key: Self.infoKey(name, app: app))
        return removed
    }

    func removeAll(app: String) async throws {
        for name in Name.allCases { _ = try await remove(name, app: app) }
    }
}
