import ArgumentParser
import GatehouseCore

/// The `gatehouse` command line: run the broker and do the common operator jobs.
@main
struct GatehouseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "Gatehouse, a plugin-based authentication broker.",
        version: GatehouseVersion.current,
        subcommands: [
            ServeCommand.self, CheckConfigCommand.self, MigrateCommand.self, UsersCommand.self, AppsCommand.self, AuditCommand.self, LockoutsCommand.self,
            ResourcesCommand.self,
            ProvidersCommand.self, DevicesCommand.self, SessionsCommand.self, AdminsCommand.self, ScimClientsCommand.self,
            KeysCommand.self, StorageCommand.self, VersionCommand.self, HealthcheckCommand.self,
            DefaultConfigCommand.self, BenchmarkPasswordHashCommand.self,
        ]
    )

    /// ArgumentParser's own `main`, after one thing only `serve` needs done before any task runs:
    /// moving Swift concurrency onto the event loops. Done later, the runtime would already have
    /// started its own worker threads (which, as a user without the right to raise their priority,
    /// log "Failed to set thread priority" once each).
    static func main() async {
        if CommandLine.arguments.dropFirst().first == ServeCommand.configuration.commandName {
            ConcurrencyOnEventLoops.installOnce()
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// The release this binary was built from.
enum GatehouseVersion {
    static let current = "0.2.0"
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "version", abstract: "Print the Gatehouse version.")
    func run() { print("gatehouse \(GatehouseVersion.current)") }
}

struct DefaultConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "default-config", abstract: "Print the embedded default configuration (a starting point for your own)."
    )
    func run() { print(DefaultConfig.yaml) }
}

/// `--config`, shared by every command that reads the configuration.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "Config file (default: $GATEHOUSE_CONFIG, else config/gatehouse.yaml if present, else the embedded default).")
    var config: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"
}
