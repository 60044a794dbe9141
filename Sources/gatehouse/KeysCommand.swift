import ArgumentParser
import Foundation
import GatehouseCore

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Manage the token-signing keys.", subcommands: [Rotate.self, List.self]
    )

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
