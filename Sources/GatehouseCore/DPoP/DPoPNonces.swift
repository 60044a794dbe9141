import Crypto
import Foundation
import Synchronization

/// Server-provided DPoP nonces (RFC 9449 section 8) that every node accepts without a shared table:
/// a nonce is a five-minute time step and an HMAC of it under a key kept (sealed) in the store. The
/// current and the previous step are accepted, so a nonce lives five to ten minutes.
public final class DPoPNonces: Sendable {
    /// The length of one step.
    public static let step: TimeInterval = 300

    private let storage: PluginStorage
    private let clock: any BrokerClock
    private let key = Mutex<SymmetricKey?>(nil)

    public init(storage: PluginStorage, clock: any BrokerClock) {
        self.storage = storage
        self.clock = clock
    }

    /// The nonce to hand out now.
    public func current() async throws -> String {
        try await nonce(for: Self.stepNumber(clock.now))
    }

    /// Whether `nonce` is the current or the previous step's.
    public func isValid(_ nonce: String) async throws -> Bool {
        let now = Self.stepNumber(clock.now)
        for step in [now, now - 1] where SecretDigest.constantTimeEquals(try await self.nonce(for: step), nonce) { return true }
        return false
    }

    static func stepNumber(_ date: Date) -> UInt64 { UInt64(max(0, date.timeIntervalSince1970) / step) }

    private func nonce(for step: UInt64) async throws -> String {
        let key = try await loadKey()
        var bigEndian = step.bigEndian
        let counter = Data(bytes: &bigEndian, count: 8)
        let mac = Data(HMAC<SHA256>.authenticationCode(for: counter, using: key)).prefix(16)
        return Base64URL.encode(counter + mac)
    }

    /// The key, made by the first node that needs it; every other node reads that one.
    private func loadKey() async throws -> SymmetricKey {
        if let known = key.withLock({ $0 }) { return known }
        let loaded = try await storage.instanceKey("nonce-key")
        key.withLock { $0 = loaded }
        return loaded
    }
}
