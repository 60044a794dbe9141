import ArgumentParser
import Foundation
import GatehouseCore

/// `gatehouse providers`: the configured provider instances, and a step-by-step check of one against
/// its upstream (directory, API) that says exactly which step fails.
struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers", abstract: "List the configured providers, or check one against its upstream.",
        subcommands: [List.self, Check.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List provider instances with their type, role and health.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            for provider in await broker.admin.providers() {
                let health = provider.health.map { $0.healthy ? "healthy" : "UNHEALTHY: \($0.detail ?? "")" } ?? "-"
                print("\(provider.id)\t\(provider.type)\t\(provider.roles.joined(separator: ","))\t\(health)")
            }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Check a provider's config against its upstream: connect, TLS, service bind, search, and with --username the user's own sign-in.",
            discussion: "With --password-stdin the user's password is read from standard input and a real sign-in is tried; it is never logged."
        )
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The provider instance id, e.g. corp-ldap.") var provider: String
        @Option(name: .long, help: "A username to look up (and, with --password-stdin, to sign in).") var username: String?
        @Flag(name: .long, help: "Read the user's password from standard input.") var passwordStdin = false

        func validate() throws {
            if passwordStdin, username == nil { throw ValidationError("--password-stdin needs --username.") }
        }

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            guard broker.plugins.all[provider] != nil else {
                let known = broker.plugins.all.keys.sorted().joined(separator: ", ")
                throw ValidationError("No provider '\(provider)' in the config (configured: \(known)).")
            }
            guard broker.plugins.diagnosables[provider] != nil else {
                throw ValidationError("The provider '\(provider)' (type \(broker.plugins.typeNames[provider] ?? "?")) has no upstream to check.")
            }
            let password = passwordStdin ? try PasswordInput.read(confirm: false) : nil
            let steps = try await broker.admin.diagnoseProvider(provider, username: username, password: password, by: AppsCommand.identity)
            for step in steps {
                print("\(step.passed ? "ok  " : "FAIL") \(step.name): \(step.detail)")
            }
            guard steps.allSatisfy(\.passed) else {
                print("\(provider): the '\(steps.first { !$0.passed }?.name ?? "?")' step failed.")
                throw ExitCode(1)
            }
            print("\(provider): all \(steps.count) steps passed.")
        }
    }
}
