import ArgumentParser
import Foundation
import GatehouseCore

struct FSSOCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsso", abstract: "Manage the issuer keys of fsso-jwt providers.", subcommands: [Keys.self]
    )

    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register, list and remove issuer keys.", subcommands: [Add.self, List.self, Remove.self])
    }

    /// `--provider`: the fsso-jwt instance (default: the only one).
    struct ProviderOption: ParsableArguments {
        @OptionGroup var options: ConfigOptions
        @Option(help: "The fsso-jwt provider id (default: the only provider of type fsso-jwt).") var provider: String?

        func resolve(_ broker: Broker) throws -> String {
            if let provider { return provider }
            let candidates = broker.config.providers.filter { $0.type == "fsso-jwt" }.map(\.id)
            guard candidates.count == 1 else { throw ValidationError("The config has \(candidates.count) fsso-jwt providers; name one with --provider.") }
            return candidates[0]
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an issuer's RSA public key (PKCS#1 or SPKI PEM, at least 2048 bits).",
            discussion: "Example: gatehouse fsso keys add --issuer acme --kid k1 --pem public.pem"
        )
        @OptionGroup var providerOption: ProviderOption
        @Option(help: "The tokens' iss.") var issuer: String
        @Option(help: "The tokens' kid.") var kid: String
        @Option(help: "File with the public key PEM.") var pem: String

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: pem) else { throw ValidationError("Cannot read '\(pem)'.") }
            let broker = try await Bootstrap.openBroker(providerOption.options)
            let provider = try providerOption.resolve(broker)
            try await AppsCommand.run {
                try await broker.admin.addProviderKey(providerID: provider, issuer: issuer, kid: kid, pem: String(decoding: data, as: UTF8.self), by: AppsCommand.identity)
            }
            print("registered key \(kid) of \(issuer) with \(provider)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every key: from config, registered, and test keys.")
        @OptionGroup var providerOption: ProviderOption

        func run() async throws {
            let broker = try await Bootstrap.openBroker(providerOption.options)
            let provider = try providerOption.resolve(broker)
            print("ISSUER\tKID\tSOURCE\tCREATED\tBY\tREVOKED")
            for key in try await AppsCommand.run({ try await broker.admin.providerKeys(providerID: provider) }) {
                print(KeyRow(key).text)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a registered issuer key (keys from the config file are changed there).")
        @OptionGroup var providerOption: ProviderOption
        @Option(help: "The tokens' iss.") var issuer: String
        @Option(help: "The tokens' kid.") var kid: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(providerOption.options)
            let provider = try providerOption.resolve(broker)
            try await AppsCommand.run { try await broker.admin.removeProviderKey(providerID: provider, issuer: issuer, kid: kid, by: AppsCommand.identity) }
            print("removed key \(kid) of \(issuer)")
        }
    }
}

struct TestKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-keys", abstract: "Per-app test registration keys for integration tests (fsso-jwt).", subcommands: [Generate.self, List.self, Revoke.self]
    )

    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a test key for an app and print its private key once (it is not stored).")
        @OptionGroup var options: ConfigOptions
        @Option(help: "The app.") var app: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let generated = try await AppsCommand.run { try await broker.admin.generateTestKey(appID: app, by: AppsCommand.identity) }
            var standardError = FileHandle.standardError
            print("test key \(generated.key.kid) for \(app): sign JWTs with iss=\(generated.key.issuer) kid=\(generated.key.kid) (RS256)", to: &standardError)
            print("the private key below is shown once and is not stored:", to: &standardError)
            print(generated.privateKeyPEM)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's test keys.")
        @OptionGroup var options: ConfigOptions
        @Option(help: "The app.") var app: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            print("ISSUER\tKID\tSOURCE\tCREATED\tBY\tREVOKED")
            for key in try await AppsCommand.run({ try await broker.admin.testKeys(appID: app) }) { print(KeyRow(key).text) }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a test key; tokens signed with it stop working at once.")
        @OptionGroup var options: ConfigOptions
        @Option(help: "The app.") var app: String
        @Argument(help: "The test key's kid.") var kid: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            try await AppsCommand.run { try await broker.admin.revokeTestKey(appID: app, kid: kid, by: AppsCommand.identity) }
            print("revoked \(kid)")
        }
    }
}

/// One line of a key table.
struct KeyRow {
    let text: String
    init(_ key: AssertionKey) {
        let created = key.createdAt?.formatted(.iso8601) ?? "-"
        let revoked = key.revokedAt?.formatted(.iso8601) ?? "-"
        text = "\(key.issuer)\t\(key.kid)\t\(key.source.rawValue)\t\(created)\t\(key.createdBy ?? "-")\t\(revoked)"
    }
}
