import ArgumentParser
import Foundation
import GatehouseCore

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Manage the token-signing keys and the key-encryption key.",
        subcommands: [Rotate.self, Revoke.self, List.self, Rewrap.self, GenerateKEK.self]
    )

    struct Rewrap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Re-encrypt every stored secret under the current key-encryption key (keys.encryptionKey); values under keys.previousEncryptionKeys are read with those. Safe while brokers run."
        )
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let sealer = broker.keyring.sealer
            let report = try await SecretRewrap(store: broker.store, sealer: sealer, clock: broker.clock).run(everything: true)
            try await broker.store.appendAudit(
                AuditEvent(
                    time: broker.clock.now, type: "keys.rewrapped",
                    details: ["kek": sealer.current.id, "signingKeys": String(report.signingKeys), "pluginSecrets": String(report.pluginSecrets), "via": "cli"]
                )
            )
            print("re-encrypted under \(sealer.current.id): \(report.signingKeys) signing key(s), \(report.pluginSecrets) plugin secret(s)")
            var standardError = FileHandle.standardError
            for value in report.unreadable { print("error: cannot open \(value)", to: &standardError) }
            guard report.remaining == 0, report.unreadable.isEmpty else {
                print(
                    "error: \(report.remaining) stored secret(s) are still not under \(sealer.current.id) (a broker still seals with an older key, or wrote meanwhile): make every broker use the new key as encryptionKey, then run rewrap again",
                    to: &standardError
                )
                throw ExitCode(1)
            }
            print("every stored secret is under \(sealer.current.id); the previous keys can leave the config once every broker runs with this one")
        }
    }

    struct GenerateKEK: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate-kek", abstract: "Print a new key-encryption key (base64 of 32 random bytes) for keys.encryptionKey or a key file."
        )

        func run() async throws {
            print(KeyEncryptionKey.generateText())
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Add new signing keys: published at once, signing 90 seconds later (when every node publishes them and every client's cached JWKS has been refreshed). The old keys stay published until every token they signed has expired (24 h)."
        )
        @OptionGroup var options: ConfigOptions
        @Flag(help: "Sign with the new keys at once (a key believed compromised); nodes that have not re-read the keys yet (up to 5 s) do not publish them.")
        var immediately = false

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            for key in try await broker.admin.rotateSigningKeys(immediately: immediately, by: AppsCommand.identity, via: "cli") {
                let from = key.activatesAt.map { ISO8601DateFormatter().string(from: $0) } ?? "now"
                print("new \(key.algorithm.rawValue) key \(key.kid): published now, signs from \(from)")
            }
            print("running brokers publish the new keys within \(Int(SigningKeyring.reloadInterval)) seconds")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Take a signing key believed compromised out of service: replaced at once if it signs, no longer published, and every token it signed refused on every broker."
        )
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The key's kid, as `gatehouse keys list` shows it.") var kid: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let replacements = try await broker.admin.revokeSigningKey(kid: kid, by: AppsCommand.identity, via: "cli")
            for key in replacements { print("new \(key.algorithm.rawValue) key \(key.kid): signs now") }
            print(
                "revoked \(kid): every token it signed is refused on every broker within \(Int(RevocationList.refreshInterval)) second(s); brokers stop publishing it within \(Int(SigningKeyring.reloadInterval)) seconds"
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the signing keys and their state.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let (config, _) = try Bootstrap.loadConfig(options)
            let store = try await Bootstrap.openStore(config, logger: try Bootstrap.logger(level: "warning"))
            let now = Date()
            func from(_ record: SigningKeyRecord) -> Date { record.activatesAt ?? record.createdAt }
            let records = try await store.signingKeys().sorted { from($0) > from($1) }
            let active = SigningSchedule(records).activeKids(at: now)
            print("KID\tALG\tCREATED\tSTATE")
            for record in records {
                let state: String
                if active[record.algorithm] == record.kid {
                    state =
                        record.algorithm == config.tokens.signingAlgorithm
                        ? "active (access tokens, ID tokens of apps asking for it)" : "active (ID tokens of apps asking for it)"
                } else if from(record) > now {
                    state = "published, signs from \(from(record).formatted(.iso8601))"
                } else if let retired = record.retiredAt {
                    let until = retired.addingTimeInterval(SigningKeyring.retiredKeyGrace)
                    state = until > now ? "retired, published until \(until.formatted(.iso8601))" : "expired"
                } else {
                    state = "published (superseded)"
                }
                print("\(record.kid)\t\(record.algorithm.rawValue)\t\(record.createdAt.formatted(.iso8601))\t\(state)")
            }
        }
    }
}
