import ArgumentParser
import Foundation
import GatehouseCore

/// `gatehouse admins`: who holds the admin role (the people the admin console admits), and giving
/// or taking it. Members of `admin.consoleGroups` are admitted without it.
struct AdminsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admins", abstract: "List, grant and revoke the admin role that admits people to the admin console.",
        subcommands: [List.self, Grant.self, Revoke.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the accounts with the admin role.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let admins = try await AppsCommand.run { try await broker.admin.admins() }
            print("ACCOUNT\tUSERNAME\tGRANTED BY\tGRANTED AT")
            for admin in admins {
                print("\(admin.accountID)\t\(admin.username ?? "-")\t\(admin.grantedBy)\t\(admin.grantedAt.formatted(.iso8601))")
            }
            let groups = broker.config.admin.consoleGroups
            if !groups.isEmpty { print("members of \(groups.joined(separator: ", ")) (admin.consoleGroups) are admitted too") }
        }
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give an account the admin role (it signs in to the console from its next request).")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "A username (when one account has it) or an account id.") var user: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let granted = try await AppsCommand.run {
                let id = try await broker.admin.accountID(named: user)
                return (id, try await broker.admin.grantAdmin(accountID: id, by: AppsCommand.identity))
            }
            print(granted.1 ? "\(user) (\(granted.0)) now has the admin role" : "\(user) (\(granted.0)) had the admin role already")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take the admin role away (the person's console sessions stop at their next request).")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "A username (when one account has it) or an account id.") var user: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let revoked = try await AppsCommand.run {
                let id = try await broker.admin.accountID(named: user)
                return (id, try await broker.admin.revokeAdmin(accountID: id, by: AppsCommand.identity))
            }
            guard revoked.1 else { throw ValidationError("\(user) (\(revoked.0)) has no admin role.") }
            print("\(user) (\(revoked.0)) no longer has the admin role")
        }
    }
}
