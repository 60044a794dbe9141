import Foundation
import GatehouseCore
import Logging

extension PluginEnvironment {
    /// An environment for testing one plugin instance on its own, without a broker: storage and
    /// lockouts in `store` (a `TemporaryStore`'s), secrets sealed with the test key, no mail and no
    /// outbound HTTP unless given.
    public static func forTests(
        instance: String, type: String? = nil, store: any BrokerStore, clock: any BrokerClock = TestClock(), logger: Logger = Logger(label: "test"),
        http: any OutboundHTTP = NoOutboundHTTP(), mailer: any Mailer = NoMailer()
    ) -> PluginEnvironment {
        PluginEnvironment(
            clock: clock, logger: logger, storage: PluginStorage(namespace: instance, typeName: type, store: store, clock: clock, sealer: .forTests),
            lockouts: LockoutBook(namespace: instance, store: store, audit: store, clock: clock), http: http, mailer: mailer,
            devices: DeviceDirectory(store), accounts: AccountDirectory(store), apps: AppDirectory(store), audit: AuditLog(store, providerID: instance, clock: clock)
        )
    }
}
