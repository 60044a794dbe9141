import ArgumentParser
import Foundation
import GatehouseCore

/// `gatehouse devices`: see and remove the devices of an account.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "See and remove the devices (and their sign-in keys) of an account.", subcommands: [List.self, Remove.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an account's devices, installations and sign-in keys.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The account id (gatehouse users list).") var account: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            let devices = try await AppsCommand.run { try await broker.devices.devices(accountID: account) }
            print("DEVICE\tALIAS\tPLATFORM\tMODEL\tINSTALLATIONS\tKEYS\tLAST USED")
            for record in devices {
                let device = record.device
                print(
                    "\(device.id)\t\(device.alias)\t\(device.platform.rawValue)\t\(device.model ?? "-")\t\(record.installations.count)\t\(record.keys.count)\t"
                        + (device.lastUsedAt?.formatted(.iso8601) ?? "-")
                )
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a device: its keys stop working and every token issued through them is revoked.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The account id.") var account: String
        @Argument(help: "The device id, as `devices list` shows it.") var device: String

        func run() async throws {
            let broker = try await Bootstrap.openBroker(options)
            try await AppsCommand.run { try await broker.devices.remove(device, accountID: account, by: AppsCommand.identity) }
            print("removed \(device)")
        }
    }
}
