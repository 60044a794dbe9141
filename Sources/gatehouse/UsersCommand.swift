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
        subcommands: [Add.self, List.self, Remove.self, ResetPassword.self, Disable.self, Enable.self, Search.self]
    )

    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Search a provider's people (ldap, Active Directory, local) by part of a username, name or email address, signed in or not yet."
        )
        @OptionGroup var options: ConfigOptions
        @Option(name: .long, help: "The provider instance id (its providers[].id).") var provider: String
        @Option(name: .long, help: "At most this many (1 to 50).") var limit = 20
        @Argument(help: "Part of a username, name or email address.") var text: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let result = try await AppsCommand.run { try await broker.admin.searchDirectory(providerID: provider, text: text, limit: limit, by: AppsCommand.identity) }
            print("USERNAME\tNAME\tEMAIL\tACCOUNT")
            for person in result.people {
                print("\(person.username)\t\(person.name ?? "")\t\(person.email ?? "")\t\(person.accountID ?? "(not signed in yet)")")
            }
            if result.truncated { print("(more than \(limit) match: type more of the name)") }
        }
    }

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
            abstract: "Add a user and their account. The password is read from standard input (asked for twice on a terminal), never from the command line."
        )

        @OptionGroup var providerOptions: ProviderOptions
        @Argument(help: "The new user's username.") var username: String
        @Option(name: .long, help: "App whose password policy applies (default: the strictest minimum length among apps using the provider).")
        var app: String?
        @Flag(name: .long, help: "Generate the password (printed once) instead of reading it.") var generate = false
        @Flag(name: .long, help: "The person must choose a new password at their first sign-in.") var temporary = false

        func run() async throws {
            let (broker, provider) = try await providerOptions.open()
            let password = generate ? nil : try PasswordInput.read()
            let (user, generated) = try await AppsCommand.run {
                try await broker.admin.createPasswordUser(
                    providerID: provider.id, username: username, choice: .init(password: password, mustChange: temporary), app: app, by: AppsCommand.identity,
                    via: "cli")
            }
            print("added \(username) to \(provider.id) (account \(user.id), subject \(user.identities.first?.subject ?? ""))")
            if let generated { print("password: \(generated)\(temporary ? " (to be changed at the first sign-in)" : "")") }
        }
    }

    struct ResetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-password",
            abstract: "Set a new password for an account; its sessions end and its tokens are revoked. Read from standard input, or generated."
        )
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The account id (GET /admin/v1/users).") var account: String
        @Option(name: .long, help: "The provider, when the account has passwords at several.") var provider: String?
        @Flag(name: .long, help: "Generate the password (printed once) instead of reading it.") var generate = false
        @Flag(name: .long, help: "The person must choose a new password at their next sign-in.") var temporary = false

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let password = generate ? nil : try PasswordInput.read()
            let generated = try await AppsCommand.run {
                try await broker.admin.resetPassword(
                    accountID: account, providerID: provider, choice: .init(password: password, mustChange: temporary), by: AppsCommand.identity, via: "cli")
            }
            print("password reset for \(account); its sessions ended and its tokens were revoked")
            if let generated { print("password: \(generated)\(temporary ? " (to be changed at the next sign-in)" : "")") }
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
