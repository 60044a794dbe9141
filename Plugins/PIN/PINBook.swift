import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport
import HummingbirdBcrypt

/// Where PINs live: per account, a bcrypt hash of an HMAC of the PIN under a key of the instance
/// (sealed in the store), so that a copy of the database alone is not enough to try PINs offline.
/// Wrong PINs are counted per account and per device in the core's lockout book.
struct PINBook: Sendable {
    let config: PINPlugin.Config
    let environment: PluginEnvironment

    struct Record: Codable, Sendable {
        var hash: String
        var createdAt: Date
        var changedAt: Date
    }

    static func key(_ accountID: String) -> String { "pin:\(accountID)" }

    func record(for accountID: String) async throws -> PluginStorage.Versioned<Record>? {
        try await environment.storage.get(Record.self, key: Self.key(accountID))
    }

    /// Stores a new PIN for the account; an existing one is replaced only when `replacing`.
    func store(_ pin: String, for accountID: String, replacing: Bool) async throws {
        let keyed = try await self.keyed(pin, accountID: accountID)
        let hash = try await BlockingWork.run { [config] in Bcrypt.hash(keyed, cost: UInt8(config.hashCost)) }
        let now = environment.clock.now
        try await environment.storage.update(Record.self, key: Self.key(accountID), conflict: "The PIN was changed at the same time elsewhere; try again.") { existing in
            guard let existing else { return .store(Record(hash: hash, createdAt: now, changedAt: now)) }
            guard replacing else { throw BrokerError(.conflict, .conflict, "A PIN was set for this account meanwhile; sign in with it.").endingFlow() }
            return .store(Record(hash: hash, createdAt: existing.createdAt, changedAt: now))
        }
    }

    /// Checks a PIN with the lockouts: the account and the device are refused while locked, each
    /// guess counts before it is evaluated (on both), a wrong one answers `invalid_pin` (or
    /// `locked_out` when it reached the limit: the account's lock, else the device's), a right one
    /// clears the failures.
    func check(_ pin: String, accountID: String, deviceID: String?) async throws {
        let keys = [(local: "account:\(accountID)", what: "This account's PIN")] + (deviceID.map { [(local: "device:\($0)", what: "This device's PIN")] } ?? [])
        // One wrong PIN sets at most one lock, so that one unlock lifts what it set: when the account
        // locks, that lock covers this device's guesses at it, and the device's count of them is
        // forgotten rather than locking the device as well. (Kept, the count would lock a one-account
        // phone at the next guess, a second lock for one person's mistakes. The device count still
        // catches guesses spread over several accounts below each one's limit; an account that
        // reaches its limit locks, and grows to permanent, on its own.)
        try await environment.lockouts.guess(keys, rule: config.lockout, oneLockPerGuess: true) { () async throws -> LockoutBook.Guess<Void> in
            guard let stored = try await record(for: accountID) else { return .void(BrokerError(.invalidPIN, .badRequest, "This account has no PIN yet.")) }
            let keyed = try await self.keyed(pin, accountID: accountID)
            let matches = try await BlockingWork.run { Bcrypt.verify(keyed, hash: stored.value.hash) }
            return matches ? .right(()) : .wrong(BrokerError(.invalidPIN, .failedAttempt, "That PIN is not right."))
        }
    }

    /// Refuses while the account or the device is locked (before the PIN is even asked for).
    func refuseIfLocked(accountID: String, deviceID: String?) async throws {
        try await environment.lockouts.refuseIfLocked("account:\(accountID)", what: "This account's PIN")
        if let deviceID { try await environment.lockouts.refuseIfLocked("device:\(deviceID)", what: "This device's PIN") }
    }

    /// A right answer elsewhere (a reset proven by another factor) forgets the wrong PINs; the
    /// lockout history stays, and a permanent lock only an administrator lifts.
    func clearFailures(accountID: String, deviceID: String?) async throws {
        try await environment.lockouts.recordSuccess("account:\(accountID)")
        if let deviceID { try await environment.lockouts.recordSuccess("device:\(deviceID)") }
    }

    func forget(accountID: String) async throws {
        try await environment.storage.delete(key: Self.key(accountID))
    }

    /// HMAC-SHA256(pepper, account ‖ PIN), hex: what bcrypt hashes (64 bytes, under bcrypt's 72).
    private func keyed(_ pin: String, accountID: String) async throws -> String {
        let pepper = try await environment.storage.instanceKey("pepper")
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(accountID):\(pin)".utf8), using: pepper)
        return SecretDigest.hex(mac)
    }
}
