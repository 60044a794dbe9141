import GatehouseCore
import Logging

/// The config mistakes a broker would refuse to start with, as `check-config` prints them: the
/// config's own, and those the plugins find when they are built. Empty when the config is good.
public func configIssues(_ yaml: String, registry: PluginRegistry, environment: [String: String] = [:]) -> [String] {
    do {
        let config = try ConfigLoader(registry: registry).load(yaml: yaml, environment: environment)
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        var logger = Logger(label: "gatehouse.test")
        logger.logLevel = .critical
        _ = try Broker.makePlugins(config: config, registry: registry, store: temporary.store, clock: TestClock(), logger: logger, sealer: .forTests)
        return []
    } catch let error as ConfigIssues {
        return error.issues.map(\.description)
    } catch {
        return ["\(error)"]
    }
}
