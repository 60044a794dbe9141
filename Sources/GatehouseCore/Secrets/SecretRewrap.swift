import Foundation

/// Brings every stored secret under the current key-encryption key: signing keys stored in clear by
/// an older version (done at every start, so a clear-text database is upgraded in place), and, for
/// `gatehouse keys rewrap`, every value sealed under a previous key too. Each row is replaced only if
/// it still holds what was read, so nodes running at the same time lose nothing.
public struct SecretRewrap: Sendable {
    let store: any BrokerStore
    let sealer: SecretSealer
    let clock: any BrokerClock

    public init(store: any BrokerStore, sealer: SecretSealer, clock: any BrokerClock) {
        self.store = store
        self.sealer = sealer
        self.clock = clock
    }

    /// What a run changed, and what is still not under the current key afterwards.
    public struct Report: Sendable, Equatable {
        public var signingKeys = 0
        public var pluginSecrets = 0
        public var remaining = 0
    }

    /// Seals what is in clear; with `everything`, also re-seals values under previous keys.
    @discardableResult
    public func run(everything: Bool) async throws -> Report {
        var report = Report()
        for record in try await store.signingKeys() {
            let inClear = !SecretSealer.isSealed(record.privateKeyPEM)
            guard inClear || (everything && sealer.needsRewrap(record.privateKeyPEM)) else {
                if sealer.needsRewrap(record.privateKeyPEM) { report.remaining += 1 }
                continue
            }
            let context = SigningKeyring.sealingContext(kid: record.kid)
            let plain = inClear ? record.privateKeyPEM : try sealer.openText(record.privateKeyPEM, context: context)
            if try await store.replaceSigningKeyMaterial(kid: record.kid, expected: record.privateKeyPEM, replacement: try sealer.seal(plain, context: context)) {
                report.signingKeys += 1
            }
        }
        for (namespace, record) in try await store.pluginRecords(valuePrefix: Data(SecretSealer.prefix.utf8), now: clock.now) {
            let stored = String(decoding: record.value, as: UTF8.self)
            guard sealer.needsRewrap(stored) else { continue }
            guard everything else {
                report.remaining += 1
                continue
            }
            let context = PluginStorage.sealingContext(namespace: namespace, key: record.key)
            let resealed = try sealer.seal(try sealer.open(stored, context: context), context: context)
            if try await store.replacePluginRecord(
                namespace: namespace, key: record.key, value: Data(resealed.utf8), expiresAt: record.expiresAt, expectedVersion: record.version
            ) {
                report.pluginSecrets += 1
            }
        }
        // The replaced versions must not linger in the database's files.
        if report.signingKeys + report.pluginSecrets > 0 { try await store.scrubReplacedData() }
        return report
    }
}
