import Foundation
import GatehouseCore
import Hummingbird
import Metrics
import Synchronization

/// Counts requests by method, route pattern and status, and times them (swift-metrics; exported by
/// `/metrics` in the Prometheus text format).
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let handles: RouteMetrics

    init(factory: any MetricsFactory) {
        self.handles = RouteMetrics(factory: factory)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var status = 500
        defer {
            let metrics = handles.metrics(method: RouteMetrics.methodLabel(request.method), route: context.endpointPath ?? "unmatched", status: status)
            metrics.requests.increment()
            metrics.duration.recordInterval(since: started)
        }
        let response = try await next(request, context)
        status = Int(response.status.code)
        return response
    }
}

/// The counter and timer of each (method, route, status), made through the factory once and then
/// reused: making them per request looked each up in the Prometheus registry, under its lock, with
/// its labels compared, on every request.
final class RouteMetrics: Sendable {
    struct Key: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    struct Handles: Sendable {
        var requests: Counter
        var duration: Timer
    }

    private let factory: any MetricsFactory
    private let made = Mutex([Key: Handles]())

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// The method as a label: any method outside the standard ones is "other", so that clients
    /// cannot make a new time series (and table entry) per made-up method.
    static func methodLabel(_ method: HTTPRequest.Method) -> String {
        switch method {
        case .get, .head, .post, .put, .delete, .patch, .options: method.rawValue
        default: "other"
        }
    }

    func metrics(method: String, route: String, status: Int) -> Handles {
        let key = Key(method: method, route: route, status: status)
        if let handles = made.withLock({ $0[key] }) { return handles }
        let handles = Handles(
            requests: Counter(label: "gatehouse_http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory),
            duration: Timer(label: "gatehouse_http_request_duration_seconds", dimensions: [("method", method), ("route", route)], factory: factory)
        )
        // Routes are patterns, methods and statuses few: the table stays small. An attacker cannot
        // grow it past what the router knows (unmatched paths share one route name).
        made.withLock { $0[key] = handles }
        return handles
    }
}

extension Timer {
    func recordInterval(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}
