import ArgumentParser
import Foundation
import GatehouseCore

/// `gatehouse sessions`: see and end the browser single sign-on sessions of an account.
struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions", abstract: "See and end the browser sign-in sessions of an account.", subcommands: [List.self, End.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an account's open sessions.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The account id (GET /admin/v1/users).") var account: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let sessions = try await AppsCommand.run { try await broker.admin.sessions(accountID: account) }
            print("SESSION\tSIGNED IN\tLAST SEEN\tEXPIRES\tPROVIDERS\tFACTORS\tAPPS")
            for session in sessions {
                print(
                    "\(session.id)\t\(session.authTime.formatted(.iso8601))\t\(session.lastSeenAt.formatted(.iso8601))\t\(session.expiresAt.formatted(.iso8601))\t"
                        + "\(session.providers.joined(separator: ","))\t\(session.factors.joined(separator: ",").nonEmpty ?? "-")\t"
                        + (session.appIDs.joined(separator: ",").nonEmpty ?? "-")
                )
            }
        }
    }

    struct End: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End one session (--session) or all of them (--all): on every node at once; the apps that got tokens in them are told (back-channel logout)."
        )
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The account id.") var account: String
        @Option(name: .long, help: "The session id, as `sessions list` shows it.") var session: String?
        @Flag(name: .long, help: "End every open session of the account.") var all = false

        func validate() throws {
            guard (session != nil) != all else { throw ValidationError("Name one session with --session ID, or end them all with --all.") }
        }

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let ended = try await AppsCommand.run {
                try await broker.admin.endSessions(accountID: account, sessionID: session, by: AppsCommand.identity, wait: true)
            }
            print("ended \(ended) session\(ended == 1 ? "" : "s")")
        }
    }
}

extension String {
    /// Nil for the empty string, for columns that show "-" instead.
    var nonEmpty: String? { isEmpty ? nil : self }
}
