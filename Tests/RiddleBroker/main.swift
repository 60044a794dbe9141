import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import Logging
import RiddlePlugin
import ServiceLifecycle

// A broker with nothing but the test-only `riddle` plugin, for the headless-browser check that a
// challenge type the server has never heard of renders and completes (Tests/integration/run.sh).
// Usage: riddle-broker CONFIG.yaml
guard CommandLine.arguments.count == 2, let data = FileManager.default.contents(atPath: CommandLine.arguments[1]) else {
    FileHandle.standardError.write(Data("usage: riddle-broker CONFIG.yaml\n".utf8))
    exit(2)
}
var registry = PluginRegistry()
registry.register(RiddlePlugin.self)
registry.register(HandingRiddlePlugin.self)
let logger = Logger(label: "riddle-broker")
let config = try ConfigLoader(registry: registry).load(yaml: String(decoding: data, as: UTF8.self), environment: ProcessInfo.processInfo.environment)
let store = try SQLiteStore(path: config.storage.sqlitePath, durability: config.storage.durability)
let broker = try await Broker.start(config: config, registry: registry, store: store, logger: logger)
let app = GatehouseServer.makeApplication(broker: broker, listen: config.server.listen, logger: logger)
try await ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run()
