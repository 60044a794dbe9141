import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseStore

/// The admin CLI: the same `AdminService` as `/admin/v1`, on the database the config names. Changes
/// are audited as `cli:<user>`.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps", abstract: "Manage apps and their policies (like the admin API).",
        subcommands: [List.self, Show.self, Create.self, SetPolicy.self, Disable.self, Enable.self, Delete.self, ReturnToConfig.self]
    )

    static var identity: AdminIdentity {
        AdminIdentity(name: "cli:\(ProcessInfo.processInfo.environment["USER"] ?? ProcessInfo.processInfo.environment["LOGNAME"] ?? "unknown")")
    }

    /// Runs an admin call, turning refusals into a message with every field at fault.
    static func run<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as BrokerError {
            var standardError = FileHandle.standardError
            print("error: \(error.code): \(error.issues.isEmpty ? error.message : "invalid input:")", to: &standardError)
            for issue in error.issues { print("  \(issue)", to: &standardError) }
            throw ExitCode(1)
        }
    }

    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the apps.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            print("ID\tNAME\tCLIENT\tMANAGED BY\tSTATELESS\tPROVIDERS")
            for app in try await broker.admin.apps() {
                let client = app.confidential ? "confidential" : "public"
                let providers = app.policy.identityProviders.joined(separator: ",")
                print("\(app.id)\t\(app.name)\t\(client)\t\(app.managedBy.rawValue)\t\(app.policy.statelessAuthentication ? "on" : "off")\t\(providers)")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one app with its whole policy (JSON).")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The app id.") var id: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            try AppsCommand.printJSON(try await AppsCommand.run { try await broker.admin.app(id: id) })
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an app; a confidential app's secret is printed once.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The new app's id.") var id: String
        @Option(help: "Display name.") var name: String?
        @Flag(name: .customLong("public"), help: "A public client (native or browser app) without a secret.") var isPublic = false
        @Option(name: .customLong("redirect-uri"), help: "A redirect URI (repeatable).") var redirectURIs: [String] = []
        @Option(name: .customLong("provider"), help: "An identity provider the app may use (repeatable).") var providers: [String] = []
        @Flag(help: "Allow self-registration.") var selfRegistration = false
        @Flag(help: "Allow the client_credentials grant.") var clientCredentials = false

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            var policy: [String: JSONValue] = ["identityProviders": .array(providers.map(JSONValue.string))]
            if selfRegistration { policy["selfRegistration"] = true }
            if clientCredentials { policy["clientCredentialsGrant"] = true }
            var body: [String: JSONValue] = [
                "id": .string(id), "confidential": .bool(!isPublic), "redirectURIs": .array(redirectURIs.map(JSONValue.string)), "policy": .object(policy),
            ]
            if let name { body["name"] = .string(name) }
            let created = try await AppsCommand.run { try await broker.admin.createApp(.object(body), by: AppsCommand.identity) }
            print("created app \(created.app.id)")
            if let secret = created.secret {
                print("client secret (shown once, store it now): \(secret)")
            }
        }
    }

    struct SetPolicy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-policy",
            abstract: "Change an app's policy at run time; every running broker applies it on its next request.",
            discussion: "Example: gatehouse apps set-policy notes --stateless on"
        )
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The app id.") var id: String
        @Option(help: "Stateless authentication: on or off.") var stateless: Toggle?
        @Option(help: "Self-registration: on or off.") var selfRegistration: Toggle?
        @Option(help: "The client_credentials grant: on or off.") var clientCredentials: Toggle?
        @Option(help: "Allowed identity providers, comma-separated.") var providers: String?
        @Option(help: "Required second factor (an authenticator id), or none.") var secondFactor: String?
        @Option(help: "Access-token lifetime, e.g. 15m.") var accessTokenLifetime: String?
        @Option(help: "Refresh-token lifetime, e.g. 30d.") var refreshTokenLifetime: String?
        @Option(help: "Default scopes, space-separated.") var defaultScopes: String?
        @Option(help: "The algorithm of the app's ID tokens: RS256 (the default) or ES256.") var idTokenAlg: String?
        @Option(help: "Apps whose access tokens this app may introspect besides its own, comma-separated ('*' for all, 'none' for none).")
        var introspectTokensOf: String?
        @Option(help: "Any other change, as a JSON merge patch of the policy.") var json: String?

        enum Toggle: String, ExpressibleByArgument, CaseIterable {
            case on, off
            var value: JSONValue { .bool(self == .on) }
        }

        func run() async throws {
            var patch: [String: JSONValue] = [:]
            if let json {
                guard let data = json.data(using: .utf8), case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: data) else {
                    throw ValidationError("--json must be a JSON object, e.g. '{\"flowLifetime\": \"5m\"}'")
                }
                patch = members
            }
            if let stateless { patch["statelessAuthentication"] = stateless.value }
            if let selfRegistration { patch["selfRegistration"] = selfRegistration.value }
            if let clientCredentials { patch["clientCredentialsGrant"] = clientCredentials.value }
            if let providers { patch["identityProviders"] = .array(providers.split(separator: ",").map { .string(String($0)) }) }
            if let secondFactor { patch["secondFactor"] = secondFactor == "none" ? .null : .string(secondFactor) }
            if let accessTokenLifetime { patch["accessTokenLifetime"] = .string(accessTokenLifetime) }
            if let refreshTokenLifetime { patch["refreshTokenLifetime"] = .string(refreshTokenLifetime) }
            if let idTokenAlg { patch["idTokenSigningAlg"] = .string(idTokenAlg) }
            if let introspectTokensOf {
                patch["introspectTokensOf"] = .array(introspectTokensOf == "none" ? [] : introspectTokensOf.split(separator: ",").map { .string(String($0)) })
            }
            if let defaultScopes { patch["defaultScopes"] = .array(defaultScopes.split(separator: " ").map { .string(String($0)) }) }
            guard !patch.isEmpty else { throw ValidationError("Nothing to change: give at least one option (see --help).") }
            let broker = try await Bootstrap.openBroker(options)
            let app = try await AppsCommand.run { try await broker.admin.patchPolicy(id: id, patch: .object(patch), by: AppsCommand.identity) }
            print("policy of \(app.id) updated (version \(app.version)); stateless \(app.policy.statelessAuthentication ? "on" : "off")")
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable an app: it can no longer sign anyone in or get tokens, and every token it holds stops working at once."
        )
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The app id.") var id: String

        func run() async throws {
            try await AppsCommand.setDisabled(true, id: id, options: options)
            print("\(id) is disabled; its refresh tokens are revoked and its access tokens inactive on every node")
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled app again (tokens revoked when it was disabled stay revoked).")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The app id.") var id: String

        func run() async throws {
            try await AppsCommand.setDisabled(false, id: id, options: options)
            print("\(id) is enabled")
        }
    }

    /// `disable` and `enable`: the same admin change, the flag apart.
    static func setDisabled(_ disabled: Bool, id: String, options: ConfigOptions) async throws {
        let broker = try await Bootstrap.openBroker(options)
        _ = try await run { try await broker.admin.updateApp(id: id, changes: ["disabled": .bool(disabled)], by: identity) }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an app with its tokens, codes and open flows.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The app id.") var id: String
        @Flag(help: "Confirm the deletion (it cannot be undone).") var yes = false

        func run() async throws {
            guard yes else {
                var standardError = FileHandle.standardError
                print("error: deleting '\(id)' cannot be undone; run again with --yes (or use `gatehouse apps disable \(id)`)", to: &standardError)
                throw ExitCode(2)
            }
            let broker = try await Bootstrap.openBroker(options)
            try await AppsCommand.run { try await broker.admin.deleteApp(id: id, by: AppsCommand.identity) }
            print("\(id) is deleted; its tokens no longer work on any node")
        }
    }

    struct ReturnToConfig: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "return-to-config", abstract: "Hand an admin-managed app back to the config file: the next start applies its apps[] entry."
        )
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The app id.") var id: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            _ = try await AppsCommand.run { try await broker.admin.returnToConfig(id: id, by: AppsCommand.identity) }
            print("\(id) is managed by the config file again; restart the brokers to apply the file's entry")
        }
    }
}

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "audit", abstract: "Read the audit log.", subcommands: [Tail.self])

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the latest audit events, oldest first; --follow keeps printing new ones.")
        @OptionGroup var options: ConfigOptions
        @Option(help: "Only this event type, e.g. signin.failure.") var type: String?
        @Option(help: "Only this app.") var app: String?
        @Option(help: "Only this user (account id).") var user: String?
        @Option(help: "Only events at or after this RFC 3339 time.") var since: String?
        @Option(help: "How many events.") var limit = 20
        @Flag(help: "Keep watching for new events.") var follow = false

        func run() async throws {
            let (config, _) = try Bootstrap.loadConfig(options)
            let store = try await Bootstrap.openStore(config, logger: try Bootstrap.logger(level: "warning"))
            var from: Date?
            if let since {
                guard let parsed = try? Date(since, strategy: .iso8601) else { throw ValidationError("--since must be an RFC 3339 time, e.g. 2026-11-22T10:00:00Z") }
                from = parsed
            }
            var seen = Set<String>()
            repeat {
                let events = try await store.auditEvents(type: type, appID: app, accountID: user, since: from, limit: limit).reversed()
                for event in events where !seen.contains(event.id) {
                    seen.insert(event.id)
                    print(Self.line(event))
                    from = max(from ?? event.time, event.time)
                }
                if follow { try await Task.sleep(for: .seconds(1)) }
            } while follow
        }

        static func line(_ event: AuditEvent) -> String {
            var parts = [event.time.formatted(.iso8601), event.type]
            if let app = event.appID { parts.append("app=\(app)") }
            if let account = event.accountID { parts.append("user=\(account)") }
            if let provider = event.providerID { parts.append("provider=\(provider)") }
            if let outcome = event.outcome { parts.append("outcome=\(outcome)") }
            for key in event.details.keys.sorted() where key != "before" && key != "after" { parts.append("\(key)=\(event.details[key]!)") }
            return parts.joined(separator: " ")
        }
    }
}

struct LockoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lockouts", abstract: "See and lift lockouts of accounts and client addresses.", subcommands: [List.self, Unlock.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List what is locked now.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            print("KEY\tLOCKED UNTIL\tLOCKOUTS")
            for lockout in try await broker.admin.lockouts() {
                print("\(lockout.key)\t\(lockout.permanent ? "permanent" : lockout.lockedUntil.formatted(.iso8601))\t\(lockout.lockouts)")
            }
        }
    }

    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lift a lock, e.g. gatehouse lockouts unlock account:local:alice")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The key, as `lockouts list` shows it.") var key: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            try await AppsCommand.run { try await broker.admin.unlock(key: key, by: AppsCommand.identity) }
            print("unlocked \(key)")
        }
    }
}
