import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseStore

#if canImport(Glibc)
import Glibc
#endif

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "Manage the users of a password provider (type local), and disable or enable any account.",
        subcommands: [Add.self, List.self, Remove.self, Disable.self, Enable.self]
    )

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable an account: every sign-in and grant is refused, and its sessions and tokens end at once, on every node."
        )
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The account id (GET /admin/v1/users).") var account: String
        @Option(name: .long, help: "Why, for the audit log.") var reason: String?

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let user = try await AppsCommand.run { try await broker.admin.disableUser(id: account, reason: reason, by: AppsCommand.identity) }
            print("disabled \(user.username) (\(user.id))")
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled account again; tokens revoked when it was disabled stay revoked.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The account id.") var account: String
        @Option(name: .long, help: "Why, for the audit log.") var reason: String?

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let user = try await AppsCommand.run { try await broker.admin.enableUser(id: account, reason: reason, by: AppsCommand.identity) }
            print("enabled \(user.username) (\(user.id))")
        }
    }

    /// `--provider`, and the lookup of that provider in the config.
    struct ProviderOptions: ParsableArguments {
        @OptionGroup var options: ConfigOptions

        @Option(name: .long, help: "Provider instance id (default: the only provider of type local).")
        var provider: String?

        func open() async throws -> (broker: Broker, provider: any PasswordKeeping) {
            let broker = try await Bootstrap.openBroker(options)
            let candidates = broker.config.providers.filter { provider == nil ? $0.type == "local" : $0.id == provider }
            guard candidates.count == 1, let declaration = candidates.first else {
                if let provider { throw ValidationError("No provider with id '\(provider)' in the config.") }
                throw ValidationError("The config has \(candidates.count) providers of type local; name one with --provider.")
            }
            guard let managing = broker.plugins.passwordKeepers[declaration.id] else {
                throw ValidationError("The provider '\(declaration.id)' (type \(declaration.type)) does not keep passwords, so it has no users to manage here.")
            }
            return (broker, managing)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user. The password is read from standard input (asked for twice on a terminal), never from the command line."
        )

        @OptionGroup var providerOptions: ProviderOptions
        @Argument(help: "The new user's username.") var username: String
        @Option(name: .long, help: "App whose password policy applies (default: the strictest minimum length among apps using the provider).")
        var app: String?

        func run() async throws {
            let (broker, provider) = try await providerOptions.open()
            let password = try PasswordInput.read()
            let policy = try await policy(broker: broker, providerID: provider.id)
            do {
                let subject = try await provider.addUser(username: username, password: password, policy: policy)
                try await broker.store.appendAudit(
                    AuditEvent(time: broker.clock.now, type: "user.added", providerID: provider.id, details: ["username": username, "via": "cli"])
                )
                print("added \(username) to \(provider.id) (subject \(subject))")
            } catch let error as BrokerError {
                throw ValidationError("\(error.code): \(error.message)")
            }
        }

        private func policy(broker: Broker, providerID: String) async throws -> PasswordPolicy {
            let apps = try await broker.store.apps()
            if let app {
                guard let chosen = apps.first(where: { $0.id == app }) else { throw ValidationError("No app '\(app)'.") }
                return chosen.policy.passwordPolicy
            }
            let users = apps.filter { $0.policy.identityProviders.contains(providerID) }.map(\.policy.passwordPolicy)
            return users.max { $0.minLength < $1.minLength } ?? PasswordPolicy()
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the users of the provider.")
        @OptionGroup var providerOptions: ProviderOptions

        func run() async throws {
            let (_, provider) = try await providerOptions.open()
            let users = try await provider.listUsers()
            print("USERNAME\tSUBJECT\tCREATED")
            for user in users {
                print("\(user.username)\t\(user.subject)\t\(user.createdAt.formatted(.iso8601))")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a user's password and identity link; the account goes too, with every token it holds, when no other identity is linked."
        )
        @OptionGroup var providerOptions: ProviderOptions
        @Argument(help: "The username to remove.") var username: String

        func run() async throws {
            let (broker, provider) = try await providerOptions.open()
            guard try await broker.admin.removePasswordUser(providerID: provider.id, username: username, by: AppsCommand.identity) else {
                throw ValidationError("No user '\(username)' in \(provider.id).")
            }
            print("removed \(username) from \(provider.id)")
        }
    }
}

/// Reads a password without it appearing on the command line or in shell history.
enum PasswordInput {
    /// Reads a password; on a terminal asks for it (twice when `confirm`), else reads one line.
    static func read(confirm: Bool = true) throws -> String {
        if isatty(STDIN_FILENO) == 1 {
            let first = prompt("Password: ")
            guard !confirm || prompt("Repeat password: ") == first else { throw ValidationError("The passwords do not match.") }
            return first
        }
        guard let line = Swift.readLine(strippingNewline: true), !line.isEmpty else {
            throw ValidationError("Give the password on standard input, e.g. `printf '%s\\n' \"$PASSWORD\" | gatehouse users add alice`.")
        }
        return line
    }

    private static func prompt(_ text: String) -> String {
        guard let pointer = getpass(text) else { return "" }
        return String(cString: pointer)
    }
}
