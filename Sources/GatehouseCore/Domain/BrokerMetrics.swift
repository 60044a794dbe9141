import Metrics

/// The broker's own metrics (swift-metrics): sign-ins by provider and outcome, lockouts, open flows.
/// The factory is injected, so each broker (and each test) reports to its own registry.
public struct BrokerMetrics: Sendable {
    /// Where the broker's metrics go (swift-metrics).
    public let factory: any MetricsFactory
    let activeFlows: Gauge

    /// Metrics into `factory` (none by default).
    public init(factory: any MetricsFactory = NOOPMetricsHandler.instance) {
        self.factory = factory
        self.activeFlows = Gauge(label: "gatehouse_active_flows", factory: factory)
    }

    /// A finished sign-in attempt: `outcome` is `success` or the machine code of the refusal.
    public func signIn(provider: String, outcome: String) {
        Counter(label: "gatehouse_signins_total", dimensions: [("provider", provider), ("outcome", outcome)], factory: factory).increment()
    }

    /// An account or a client address was locked.
    public func lockout(scope: String) {
        Counter(label: "gatehouse_lockouts_total", dimensions: [("scope", scope)], factory: factory).increment()
    }

    /// A request refused because its account or address is locked or over its rate.
    public func refused(reason: String) {
        Counter(label: "gatehouse_refused_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    /// Sets the gauge of flows in progress.
    public func setActiveFlows(_ count: Int) {
        activeFlows.record(count)
    }
}
