import ArgumentParser
import Foundation
import GatehouseCore

/// `gatehouse resources`: what plugins let administrators manage (an issuer's keys, an app's test
/// keys...), generically, through the same core service as the admin API.
struct ResourcesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resources", abstract: "Manage what plugins offer administrators (`resources list` names them).",
        discussion: """
            Each plugin's page in docs/plugins/ names its resources. The forms:
              gatehouse resources list
              gatehouse resources show   --provider ID RESOURCE   |  --app APP RESOURCE
              gatehouse resources add    --provider ID RESOURCE NAME=VALUE NAME=@FILE ...
              gatehouse resources remove --provider ID RESOURCE KEY...
            A secret the plugin makes (a generated private key) is printed once on standard output.
            """,
        subcommands: [List.self, Show.self, Add.self, Remove.self]
    )

    /// `--provider ID` or `--app ID`: whose resource.
    struct Owner: ParsableArguments {
        @OptionGroup var options: ConfigOptions
        @Option(help: "The provider instance that offers the resource.") var provider: String?
        @Option(help: "The app whose resource it is (kept by one of its providers).") var app: String?
        @Argument(help: "The resource, as `gatehouse resources list` names it.") var resource: String

        func owner(_ broker: Broker) throws -> AdminService.ResourceOwner {
            switch (provider, app) {
            case (let provider?, nil): return .provider(provider)
            case (nil, let app?): return .app(app)
            case (nil, nil):
                // The only provider offering a provider-scoped resource of that name.
                let offering = broker.admin.offeredResources().filter { $0.resource.name == resource && $0.resource.scope == .provider }
                guard offering.count == 1 else {
                    throw ValidationError("Name the owner with --provider or --app (\(offering.count) providers offer '\(resource)').")
                }
                return .provider(offering[0].provider)
            default: throw ValidationError("Give --provider or --app, not both.")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the resources every plugin instance offers.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            print("PROVIDER\tTYPE\tRESOURCE\tOWNER\tSUMMARY")
            for offered in broker.admin.offeredResources() {
                let owner = offered.resource.scope == .provider ? "--provider \(offered.provider)" : "--app APP"
                print("\(offered.provider)\t\(offered.type)\t\(offered.resource.name)\t\(owner)\t\(offered.resource.summary)")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a resource's items as a table.")
        @OptionGroup var owner: Owner

        func run() async throws {
            let broker = try await Bootstrap.openBroker(owner.options)
            let target = try owner.owner(broker)
            let (declaration, items) = try await AppsCommand.run { try await broker.admin.resourceItems(owner.resource, of: target) }
            let columns = declaration.columns
            print(columns.map { $0.uppercased() }.joined(separator: "\t"))
            for item in items {
                guard case .object(let fields) = item else { continue }
                print(columns.map { fields[$0].map(Self.cell) ?? "-" }.joined(separator: "\t"))
            }
        }

        static func cell(_ value: JSONValue) -> String {
            switch value {
            case .null: "-"
            case .string(let text): text
            default: String(decoding: value.serialized(), as: UTF8.self)
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an item: NAME=VALUE fields, NAME=@FILE reads the value from a file. A secret made for you is printed once on standard output."
        )
        @OptionGroup var owner: Owner
        @Argument(help: "NAME=VALUE or NAME=@FILE.") var fields: [String] = []

        func run() async throws {
            var values: [String: JSONValue] = [:]
            for field in fields {
                guard let equals = field.firstIndex(of: "=") else { throw ValidationError("'\(field)' is not NAME=VALUE.") }
                let name = String(field[..<equals])
                var value = String(field[field.index(after: equals)...])
                if value.hasPrefix("@") {
                    let path = String(value.dropFirst())
                    guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("Cannot read '\(path)' (for \(name)).") }
                    value = String(decoding: data, as: UTF8.self)
                }
                values[name] = .string(value)
            }
            let broker = try await Bootstrap.openBroker(owner.options)
            let target = try owner.owner(broker)
            let change = try await AppsCommand.run {
                try await broker.admin.createResourceItem(owner.resource, of: target, fields: values, by: AppsCommand.identity)
            }
            var standardError = FileHandle.standardError
            if let secret = change.shownOnce {
                print("added to \(owner.resource): \(Self.summary(change.item)); the secret below is shown once and is not stored:", to: &standardError)
                print(secret)
            } else {
                print("added to \(owner.resource): \(Self.summary(change.item))")
            }
        }

        /// The item in one line of `name=value` pairs (nested objects flattened), without its secret.
        static func summary(_ item: JSONValue) -> String {
            guard case .object(let fields) = item else { return String(decoding: item.serialized(), as: UTF8.self) }
            var flat: [String: JSONValue] = [:]
            for (name, value) in fields {
                if case .object(let inner) = value { flat.merge(inner) { first, _ in first } } else { flat[name] = value }
            }
            return flat.filter { !$0.key.lowercased().contains("private") && $0.value != .null }.sorted { $0.key < $1.key }
                .map { "\($0.key)=\(Show.cell($0.value))" }.joined(separator: " ")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove (or revoke) an item, named by its key parts in order.")
        @OptionGroup var owner: Owner
        @Argument(help: "The item's key parts (e.g. ISSUER KID).") var key: [String]

        func run() async throws {
            let broker = try await Bootstrap.openBroker(owner.options)
            let target = try owner.owner(broker)
            _ = try await AppsCommand.run { try await broker.admin.deleteResourceItem(owner.resource, of: target, key: key, by: AppsCommand.identity) }
            print("removed \(key.joined(separator: " ")) from \(owner.resource)")
        }
    }
}
