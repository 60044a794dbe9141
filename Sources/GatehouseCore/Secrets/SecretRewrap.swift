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

    /// What a run changed, what is still not under the current key afterwards (values written under
    /// an old key meanwhile, or lost to a concurrent write), and the values that could not be opened.
    public struct Report: Sendable, Equatable {
        public var signingKeys = 0
        public var pluginSecrets = 0
        public var remaining = 0
        public var unreadable: [String] = []
    }

    /// Seals what is in clear; with `everything`, also re-seals values under previous keys and then
    /// counts what is still not under the current key. A value that does not open is reported and
    /// skipped, never fatal to the rest.
    @discardableResult
    public func run(everything: Bool) async throws -> Report {
        var report = Report()
        do {
            try await rewrap(everything: everything, into: &report)
        } catch {
            // What was re-encrypted before the failure must not linger in the files either.
            if report.signingKeys + report.pluginSecrets > 0 { try? await store.scrubReplacedData() }
            throw error
        }
        // The replaced versions must not linger in the database's files.
        if report.signingKeys + report.pluginSecrets > 0 { try await store.scrubReplacedData() }
        return report
    }

    private func rewrap(everything: Bool, into report: inout Report) async throws {
        for record in try await store.signingKeys() {
            let inClear = !SecretSealer.isSealed(record.privateKeyPEM)
            guard inClear || (everything && sealer.needsRewrap(record.privateKeyPEM)) else { continue }
            let context = SigningKeyring.sealingContext(kid: record.kid)
            do {
                let plain = inClear ? record.privateKeyPEM : try sealer.openText(record.privateKeyPEM, context: context)
                if try await store.replaceSigningKeyMaterial(kid: record.kid, expected: record.privateKeyPEM, replacement: try sealer.seal(plain, context: context)) {
                    report.signingKeys += 1
                }
            } catch let error as SecretSealerError {
                report.unreadable.append("signing key \(record.kid): \(error)")
            }
        }
        if everything {
            for (namespace, record) in try await store.pluginRecords(valuePrefix: Data(SecretSealer.prefix.utf8), now: clock.now) {
                let stored = String(decoding: record.value, as: UTF8.self)
                guard sealer.needsRewrap(stored) else { continue }
                let context = PluginStorage.sealingContext(namespace: namespace, key: record.key)
                do {
                    let resealed = try sealer.seal(try sealer.open(stored, context: context), context: context)
                    if try await store.replacePluginRecord(
                        namespace: namespace, key: record.key, value: Data(resealed.utf8), expiresAt: record.expiresAt, expectedVersion: record.version
                    ) {
                        report.pluginSecrets += 1
                    }
                } catch let error as SecretSealerError {
                    report.unreadable.append("\(namespace) \(record.key): \(error)")
                }
            }
            report.remaining =
                try await store.signingKeys().filter { sealer.needsRewrap($0.privateKeyPEM) }.count
                + (try await store.pluginRecords(valuePrefix: Data(SecretSealer.prefix.utf8), now: clock.now))
                .filter { sealer.needsRewrap(String(decoding: $0.record.value, as: UTF8.self)) }.count
        }
    }
}
