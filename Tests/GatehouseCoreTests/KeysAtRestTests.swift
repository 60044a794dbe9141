import Foundation
@testable import GatehouseCore
import GatehouseTesting
import Testing

/// Secrets at rest: every secret the broker stores is sealed under the key-encryption key, a clear
/// database is sealed in place at the first start, `keys rewrap` moves everything to a new key, and
/// the key itself comes only from where the config says (never from the database).
extension GatehouseCoreTests {
    static func sealer(_ byte: UInt8, previous: [UInt8] = []) -> SecretSealer {
        SecretSealer(
            current: try! KeyEncryptionKey(bytes: Data(repeating: byte, count: 32)),
            previous: previous.map { try! KeyEncryptionKey(bytes: Data(repeating: $0, count: 32)) }
        )
    }

    static func broker(sealer: SecretSealer, temporary: TemporaryStore) async throws -> TestBroker {
        try await TestBroker.make(
            yaml: TestRegistry.yaml, registry: TestRegistry.registry, environment: ["CONFIDENTIAL_SECRET": TestRegistry.confidentialSecret],
            temporary: temporary, sealer: sealer
        )
    }

    /// Every byte of the database file and its write-ahead log, as text.
    static func databaseText(_ temporary: TemporaryStore) -> String {
        ["", "-wal"].compactMap { FileManager.default.contents(atPath: temporary.path + $0) }.map { String(decoding: $0, as: UTF8.self) }.joined()
    }

    @Test func signingKeysAndPluginSecretsAreStoredSealed() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let test = try await Self.broker(sealer: Self.sealer(1), temporary: temporary)
        let storage = PluginStorage(namespace: "vault", store: test.store, clock: test.clock, sealer: Self.sealer(1))
        #expect(try await storage.insertSecret(Data("upstream-refresh-token-123".utf8), key: "token"))
        #expect(try await storage.secret(key: "token")?.value == Data("upstream-refresh-token-123".utf8))

        let records = try await test.store.signingKeys()
        #expect(records.count == SigningAlgorithm.allCases.count)
        #expect(records.allSatisfy { SecretSealer.keyID(of: $0.privateKeyPEM) == Self.sealer(1).current.id })
        let everything = Self.databaseText(temporary)
        #expect(!everything.contains("PRIVATE KEY"))
        #expect(!everything.contains("upstream-refresh-token-123"))
        // The keys still sign.
        let signed = try await test.broker.keyring.sign(
            AccessTokenClaims(
                issuer: "i", subject: "s", audience: "c", issuedAt: test.clock.now, expiresAt: test.clock.now.addingTimeInterval(60), scope: "openid", stateless: false,
                authTime: nil, amr: nil, identityProvider: nil
            )
        )
        #expect(try await test.broker.keyring.verify(signed).sub.value == "s")

        // Another key-encryption key opens nothing: the broker refuses to start and says which key it needs.
        do {
            _ = try await Self.broker(sealer: Self.sealer(2), temporary: try TemporaryStore.reopen(temporary))
            Issue.record("a broker started with the wrong key-encryption key")
        } catch let error as BrokerError {
            #expect(error.message.contains(Self.sealer(1).current.id))
        }
    }

    @Test func aSealedValueDoesNotOpenInAnotherRowOrWhenAltered() throws {
        let sealer = Self.sealer(3)
        let sealed = try sealer.seal("secret", context: "signing_keys:a")
        #expect(try sealer.openText(sealed, context: "signing_keys:a") == "secret")
        #expect(throws: SecretSealerError.self) { try sealer.open(sealed, context: "signing_keys:b") }
        var altered = Array(sealed)
        altered[altered.count - 3] = altered[altered.count - 3] == "A" ? "B" : "A"
        #expect(throws: SecretSealerError.self) { try sealer.open(String(altered), context: "signing_keys:a") }
        #expect(throws: SecretSealerError.self) { try sealer.open("-----BEGIN PRIVATE KEY-----", context: "signing_keys:a") }
    }

    @Test func aClearTextDatabaseIsSealedInPlaceAtTheFirstStart() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        // A database as an older version left it: the signing key's PEM in clear.
        let clear = try SigningKeyring.generate(.es256, now: Date(timeIntervalSince1970: 1_700_000_000))
        try await temporary.store.insertSigningKey(clear)
        let test = try await Self.broker(sealer: Self.sealer(4), temporary: temporary)
        let stored = try #require(try await test.store.signingKeys().first { $0.kid == clear.kid })
        #expect(SecretSealer.keyID(of: stored.privateKeyPEM) == Self.sealer(4).current.id)
        #expect(!Self.databaseText(temporary).contains("PRIVATE KEY"))
        // The same key still signs and is still published.
        #expect(test.broker.keyring.keySet().keys.contains { $0.kid == clear.kid })
        #expect(try Self.sealer(4).openText(stored.privateKeyPEM, context: SigningKeyring.sealingContext(kid: clear.kid)) == clear.privateKeyPEM)
        // A key planted in clear after the start is refused, not used.
        try await temporary.store.insertSigningKey(try SigningKeyring.generate(.rs256, now: Date(timeIntervalSince1970: 1_800_000_000)))
        await #expect(throws: BrokerError.self) { try await test.broker.keyring.reload() }
    }

    @Test func rewrapMovesEverySecretToTheNewKeySoTheOldOneCanGo() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let old = try await Self.broker(sealer: Self.sealer(5), temporary: temporary)
        let oldStorage = PluginStorage(namespace: "vault", store: old.store, clock: old.clock, sealer: Self.sealer(5))
        #expect(try await oldStorage.insertSecret(Data("s3cret".utf8), key: "token"))

        // Both keys configured (the new one current): everything still opens, and rewrap re-seals it.
        let both = Self.sealer(6, previous: [5])
        let during = try await Self.broker(sealer: both, temporary: try TemporaryStore.reopen(temporary))
        let report = try await SecretRewrap(store: during.store, sealer: both, clock: during.clock).run(everything: true)
        #expect(report.signingKeys == SigningAlgorithm.allCases.count && report.pluginSecrets == 1)
        #expect(try await SecretRewrap(store: during.store, sealer: both, clock: during.clock).run(everything: true) == SecretRewrap.Report())

        // The old key is gone from the config: nothing needs it.
        let after = try await Self.broker(sealer: Self.sealer(6), temporary: try TemporaryStore.reopen(temporary))
        let newStorage = PluginStorage(namespace: "vault", store: after.store, clock: after.clock, sealer: Self.sealer(6))
        #expect(try await newStorage.secret(key: "token")?.value == Data("s3cret".utf8))
        #expect(try await after.store.signingKeys().allSatisfy { SecretSealer.keyID(of: $0.privateKeyPEM) == Self.sealer(6).current.id })
    }

    @Test func theKeyEncryptionKeyComesFromTheConfigOrAnOwnerOnlyFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-kek-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        func config(_ yaml: String, environment: [String: String] = [:]) throws -> BrokerConfig {
            try ConfigLoader(registry: TestRegistry.registry).load(
                yaml: "storage:\n  sqlite: {path: \(folder.path)/gatehouse.sqlite}\n" + yaml, environment: environment
            )
        }
        func issues(_ config: BrokerConfig) -> [String] {
            do {
                _ = try KeyEncryptionSetup.sealer(for: config)
                return []
            } catch {
                return error.issues.map(\.description)
            }
        }
        // Production without a key: refused, naming the key to set.
        #expect(issues(try config("")).first?.hasPrefix("keys.encryptionKey: is required outside development") == true)
        // A key from the environment, and a wrong one with its path.
        #expect(issues(try config("", environment: ["GATEHOUSE_KEK": KeyEncryptionKey.generateText()])).isEmpty)
        #expect(self.issues("keys: {encryptionKey: c2hvcnQ=}").first?.hasPrefix("keys.encryptionKey: must be 32 bytes") == true)
        // Development creates an owner-only key file beside the database, then reads it.
        let development = try config("environment: development\n")
        let first = try KeyEncryptionSetup.sealer(for: development)
        let file = KeyEncryptionSetup.developmentKeyFile(for: development)
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
        #expect(try KeyEncryptionSetup.sealer(for: development).current.id == first.current.id)
        // A key file others may read is refused.
        let shared = folder.appendingPathComponent("shared.kek").path
        FileManager.default.createFile(atPath: shared, contents: Data(KeyEncryptionKey.generateText().utf8), attributes: [.posixPermissions: 0o644])
        #expect(issues(try config("keys: {encryptionKeyFile: \(shared)}")).first?.contains("may be read by its group or others (mode 644)") == true)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: shared)
        #expect(issues(try config("keys: {encryptionKeyFile: \(shared)}")).isEmpty)
        // A symbolic link (how Kubernetes mounts secrets) is checked as the file it names.
        let link = folder.appendingPathComponent("link.kek").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: shared)
        #expect(issues(try config("keys: {encryptionKeyFile: \(link)}")).isEmpty)
        // Something that is not a regular file is refused.
        #expect(issues(try config("keys: {encryptionKeyFile: \(folder.path)}")).first?.contains("is not a regular file") == true)
    }
}

extension GatehouseCoreTests {
    @Test func failureCountsGroupAnAddressAsOneHostHoldsIt() {
        let bucket = FailedAuthenticationLimit.addressBucket
        #expect(bucket("203.0.113.9") == "203.0.113.9")
        #expect(bucket("203.0.113.9:51234") == "203.0.113.9")
        #expect(bucket("::ffff:203.0.113.9") == "203.0.113.9", "an IPv4 client on a dual-stack listener")
        #expect(bucket("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(bucket("2001:db8:1:2:ffff:eeee:dddd:cccc") == "2001:db8:1:2::/64", "one /64, one count")
        #expect(bucket("[2001:db8:1:2::9]:443") == "2001:db8:1:2::/64")
        #expect(bucket("2001:db8:1:3::1") != bucket("2001:db8:1:2::1"))
    }
}
