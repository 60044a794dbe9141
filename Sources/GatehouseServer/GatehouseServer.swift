import GatehouseCore
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// Builds the broker's HTTP application: the OpenID Provider (discovery, authorize pages, token,
/// introspection, revocation, userinfo, JWKS), the flow API, the account, provisional-identity and
/// admin APIs, health and metrics, behind the request-log, metrics, client-address, security-header
/// and error middleware. Run it inside a `ServiceGroup` for graceful shutdown.
public enum GatehouseServer {
    /// The routes. With `metrics` (the registry the broker's metrics factory writes to), `/metrics`
    /// serves it in the Prometheus text format.
    /// `theme`: the operator's sign-in page theme (`PageTheme.load`, at start).
    public static func makeRouter(broker: Broker, metrics: PrometheusCollectorRegistry? = nil, theme: PageTheme = PageTheme()) -> Router<GatehouseRequestContext> {
        let router = Router(context: GatehouseRequestContext.self)
        router.add(middleware: RequestLogMiddleware())
        router.add(middleware: MetricsMiddleware(factory: broker.engine.metrics.factory))
        router.add(middleware: ClientAddressMiddleware(trusted: Set(broker.config.server.trustedProxies)))
        router.add(middleware: SecurityHeadersMiddleware())
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: ScimFallbackMiddleware())
        router.add(middleware: BodyLimitMiddleware(bytes: BodyLimit.form, readsBody: true))
        if let metrics {
            router.get("metrics") { _, _ in
                var buffer = [UInt8]()
                buffer.reserveCapacity(16 * 1024)
                metrics.emit(into: &buffer)
                return Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer))
                )
            }
        }
        OperationsAPI(broker: broker).addRoutes(to: router)
        FlowAPI(broker: broker).addRoutes(to: router.group("v1").add(middleware: BodyLimitMiddleware(bytes: BodyLimit.json)))
        AccountAPI(broker: broker).addRoutes(to: router.group("v1/account").add(middleware: BodyLimitMiddleware(bytes: BodyLimit.json)))
        MobileAPI(broker: broker).addRoutes(to: router.group("v1").add(middleware: BodyLimitMiddleware(bytes: BodyLimit.json)))
        PluginEndpointAPI(broker: broker).addRoutes(to: router.group("v1/plugins").add(middleware: BodyLimitMiddleware(bytes: BodyLimit.json)))
        PluginRootRoutes(broker: broker, theme: theme).addRoutes(to: router)
        OAuthAPI(broker: broker).addRoutes(to: router)
        let pages = BrowserPages(broker: broker, theme: theme)
        pages.addRoutes(to: router)
        LogoutPages(broker: broker, renderer: pages.renderer).addRoutes(to: router)
        DevicePages(broker: broker, pages: pages).addRoutes(to: router)
        AdminAPI(broker: broker).addRoutes(to: router)
        ScimAPI(broker: broker).addRoutes(to: router)
        if let console = broker.console { ConsolePages(broker: broker, console: console).addRoutes(to: router) }
        if let accountPage = broker.accountPage { AccountPages(broker: broker, site: accountPage, flowPages: pages).addRoutes(to: router) }
        ProvisionalIdentityAPI(service: broker.provisionalIdentities, issuer: broker.config.server.issuer).addRoutes(to: router)
        return router
    }

    /// `onServerRunning` runs once the listening socket is open (`serve` tells systemd it is ready there).
    public static func makeApplication(
        broker: Broker, listen: ListenAddress, logger: Logger, metrics: PrometheusCollectorRegistry? = nil, theme: PageTheme = PageTheme(),
        onServerRunning: @escaping @Sendable () async -> Void = {}
    ) -> some ApplicationProtocol {
        Application(
            router: makeRouter(broker: broker, metrics: metrics, theme: theme),
            // A connection that sends no (complete) request head for this long is closed, so clients
            // that connect and send nothing, or a byte a second, cannot pile up; a body must arrive
            // within `BodyLimit.readTimeout`.
            server: .http1(configuration: .init(idleTimeout: .seconds(Int64(broker.config.server.idleTimeout.value)))),
            configuration: ApplicationConfiguration(address: .hostname(listen.host, port: listen.port), serverName: "Gatehouse"),
            services: [MaintenanceService(broker: broker), EventDeliveryService(broker: broker)],
            onServerRunning: { _ in await onServerRunning() },
            logger: logger
        )
    }
}

/// Every 5 seconds re-reads the signing keys, so a key rotated on another node is published here well
/// before it signs (`SigningKeyring.activationDelay`); every 15 seconds deletes what has expired
/// (flows, codes, tokens, revocations, old keys).
struct MaintenanceService: Service, CustomStringConvertible {
    let broker: Broker

    /// swift-service-lifecycle logs its services by their description: never the broker's insides
    /// (the config holds secrets).
    var description: String { "MaintenanceService" }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var tick = 0
            while !Task.isCancelled {
                if tick % 3 == 0 {
                    await purge()
                } else {
                    do {
                        try await broker.keyring.reloadIfStale()
                    } catch {
                        broker.logger.warning("could not re-read the signing keys", metadata: ["error": "\(error)"])
                    }
                }
                tick += 1
                try? await Task.sleep(for: .seconds(SigningKeyring.reloadInterval))
            }
        }
    }

    private func purge() async {
        do {
            let removed = try await broker.purgeExpired()
            if removed > 0 { broker.logger.debug("expired data removed", metadata: ["rows": "\(removed)"]) }
        } catch {
            broker.logger.warning("could not remove expired data", metadata: ["error": "\(error)"])
        }
    }
}

/// Every second sends what is due in the outbox (webhook events, back-channel logout tokens). Every
/// node runs it; leases in the store keep two nodes from sending one delivery at once.
struct EventDeliveryService: Service, CustomStringConvertible {
    let broker: Broker

    var description: String { "EventDeliveryService" }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await broker.oauth.events.runOnce()
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
