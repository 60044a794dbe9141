import ArgumentParser
import Foundation
import GatehouseCore

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Manage the token-signing keys and the key-encryption key.", subcommands: [Rotate.self, List.self, Rewrap.self, GenerateKEK.self]
    )

    struct Rewrap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-encrypt every stored secret under the current key-encryption key (keys.encryptionKey); values under keys.previousEncryptionKeys are read with those. Safe while brokers run."
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
            abstract: "Add a new signing key and make it the active one. The old keys stay published until every token they signed has expired (24 h)."
        )
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            for key in try await broker.keyring.rotate() {
                try await broker.store.appendAudit(AuditEvent(time: broker.clock.now, type: "key.rotated", details: ["kid": key.kid, "alg": key.algorithm.rawValue, "via": "cli"]))
                print("new active \(key.algorithm.rawValue) key \(key.kid)")
            }
            print("running brokers pick the new keys up within 15 seconds")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the signing keys and their state.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let (config, _) = try Bootstrap.loadConfig(options)
            let store = try Bootstrap.openStore(config)
            let now = Date()
            let records = try await store.signingKeys().sorted { $0.createdAt > $1.createdAt }
            // The newest unretired key of each algorithm signs; records are sorted newest first.
            var active: [SigningAlgorithm: String] = [:]
            for record in records where record.retiredAt == nil && active[record.algorithm] == nil { active[record.algorithm] = record.kid }
            print("KID\tALG\tCREATED\tSTATE")
            for record in records {
                let state: String
                if active[record.algorithm] == record.kid {
                    state = record.algorithm == config.tokens.signingAlgorithm ? "active (access tokens, ID tokens of apps asking for it)" : "active (ID tokens of apps asking for it)"
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
