import Foundation
import GatehouseCore
import Hummingbird
import Metrics

/// Counts requests by method, route pattern and status, and times them (swift-metrics; exported by
/// `/metrics` in the Prometheus text format).
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let factory: any MetricsFactory

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var status = 500
        defer {
            let route = context.endpointPath ?? "unmatched"
            let method = request.method.rawValue
            Counter(label: "gatehouse_http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory)
                .increment()
            Timer(label: "gatehouse_http_request_duration_seconds", dimensions: [("method", method), ("route", route)], factory: factory)
                .recordInterval(since: started)
        }
        let response = try await next(request, context)
        status = Int(response.status.code)
        return response
    }
}

extension Timer {
    func recordInterval(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}
