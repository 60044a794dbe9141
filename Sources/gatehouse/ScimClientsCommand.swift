import ArgumentParser
import Foundation
import GatehouseCore

/// `gatehouse scim-clients`: the SCIM clients (Entra ID, Okta) that may provision accounts, each
/// with a bearer token shown once.
struct ScimClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scim-clients", abstract: "Issue, list and remove the bearer tokens of SCIM provisioning clients (scim.enabled must be on).",
        subcommands: [Add.self, List.self, Rotate.self, Remove.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue a client and print its bearer token (shown once; only its digest is stored).")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The client's id, e.g. entra.") var id: String
        @Option(name: .long, help: "A name for people.") var name: String?

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let (client, token) = try await AppsCommand.run {
                try await broker.scim.createClient(id: id, name: name, createdBy: "cli", auditDetails: ["via": "cli"])
            }
            print("SCIM client \(client.id) issued. Base URL: \(broker.scim.base)")
            print("Bearer token (shown once): \(token)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the SCIM clients.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            print("ID\tNAME\tCREATED\tBY")
            for client in try await broker.store.scimClients() {
                print("\(client.id)\t\(client.name)\t\(client.createdAt.formatted(.iso8601))\t\(client.createdBy)")
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a new token for a client and print it (shown once); the old token stops at once, the client's users and groups stay.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The client's id.") var id: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let token = try await AppsCommand.run { try await broker.scim.rotateClientToken(id: id, auditDetails: ["via": "cli"]) }
            print("Bearer token (shown once): \(token)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a client: its token stops at once; the users and groups it kept go, the accounts stay.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The client's id.") var id: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            try await AppsCommand.run { try await broker.scim.deleteClient(id: id, auditDetails: ["via": "cli"]) }
            print("removed SCIM client \(id)")
        }
    }
}
