import Hummingbird
import Logging
import Foundation

/// Logs one line per request: method, the matched route pattern (never the concrete path, which
/// may hold a flow id, a bearer capability), status and duration. Bodies and headers are never
/// logged: they carry passwords and tokens.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        context.logger.info(
            "request",
            metadata: [
                "method": .string(request.method.rawValue),
                "route": .string(context.endpointPath ?? "(unmatched)"),
                "status": .stringConvertible(response.status.code),
                "ms": .string(String(format: "%.1f", milliseconds)),
            ]
        )
        return response
    }
}
