import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport
import HummingbirdBcrypt

/// Where activations and invitations live (the instance's plugin storage, so on every node and
/// database), with the activation PIN's hash: bcrypt over an HMAC of the PIN under the instance's
/// sealed pepper, so that a copy of the database alone is not enough to try PINs offline.
struct ActivationBook: Sendable {
    let config: ActivationPlugin.Config
    let environment: PluginEnvironment

    var storage: PluginStorage { environment.storage }
    var now: Date { environment.clock.now }

    /// Activations stay listed this long after they expire (for the admin's and the audit's sake).
    static let retention: TimeInterval = 30 * 86_400

    func activation(_ id: String) async throws -> PluginStorage.Versioned<ActivationRecord>? {
        try await storage.get(ActivationRecord.self, key: ActivationRecord.key(id))
    }

    func insert(_ record: ActivationRecord) async throws -> Bool {
        try await storage.insert(record, key: ActivationRecord.key(record.id), expiresAt: record.expiresAt.addingTimeInterval(Self.retention))
    }

    /// Changes an activation by compare-and-swap, trying again when another node changed it first;
    /// `change` answers nil to leave it as it is (and `update` answers nil).
    func update(_ id: String, _ change: (ActivationRecord) throws -> ActivationRecord?) async throws -> ActivationRecord? {
        var changed: ActivationRecord?
        try await storage.update(ActivationRecord.self, key: ActivationRecord.key(id), conflict: "The activation was changed at the same time elsewhere; try again.") {
            current in
            changed = try current.flatMap(change)
            guard let changed else { return .keep }
            return .store(changed, expiresAt: changed.expiresAt.addingTimeInterval(Self.retention))
        }
        return changed
    }

    func activations() async throws -> [ActivationRecord] {
        try await storage.all(ActivationRecord.self, keyPrefix: ActivationRecord.keyPrefix).map(\.value)
    }

    func invitation(token: String) async throws -> PluginStorage.Versioned<InvitationRecord>? {
        try await storage.get(InvitationRecord.self, key: InvitationRecord.key(tokenDigest: SecretDigest.sha256Hex(token)))
    }

    func invitations() async throws -> [InvitationRecord] {
        try await storage.all(InvitationRecord.self, keyPrefix: InvitationRecord.keyPrefix).map(\.value)
    }

    func replace(_ invitation: InvitationRecord, version: Int) async throws -> Bool {
        try await storage.replace(
            invitation, key: InvitationRecord.key(tokenDigest: invitation.tokenDigest), version: version,
            expiresAt: invitation.expiresAt.addingTimeInterval(Self.retention)
        )
    }

    // MARK: - The activation PIN

    func hash(_ pin: String, activationID: String) async throws -> String {
        let keyed = try await self.keyed(pin, activationID: activationID)
        return try await BlockingWork.run { [config] in Bcrypt.hash(keyed, cost: UInt8(config.hashCost)) }
    }

    func verify(_ pin: String, activationID: String, hash: String) async throws -> Bool {
        let keyed = try await self.keyed(pin, activationID: activationID)
        return try await BlockingWork.run { Bcrypt.verify(keyed, hash: hash) }
    }

    /// HMAC-SHA256(pepper, activation ‖ PIN), hex: what bcrypt hashes (64 bytes, under bcrypt's 72).
    private func keyed(_ pin: String, activationID: String) async throws -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(activationID):\(pin)".utf8), using: try await environment.storage.instanceKey("pepper"))
        return SecretDigest.hex(mac)
    }

    /// A PIN the app's policy accepts, from the system's CSPRNG: digits, as long as the policy's
    /// minimum (at least 6).
    static func generatePIN(policy: PINRules) -> String {
        let length = max(policy.minLength, min(6, policy.maxLength))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let pin = String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
            if (try? policy.check(pin)) != nil { return pin }
        }
        // A deny-list that refuses a thousand random PINs in a row is a broken policy.
        return String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
    }
}
