import GatehouseCore
import Hummingbird
import NIOCore

/// The request body limits, chosen per route group: no endpoint needs more than a few hundred KiB,
/// and a body over its limit answers 413 with the endpoint's error shape, never a 500.
enum BodyLimit {
    /// OAuth and browser forms: parameters, codes and assertions only.
    static let form = 64 * 1024
    /// JSON APIs (flows carry custom registration data; the admin API carries policies), and the
    /// upstream callback's form posts (a SAML response).
    static let json = 256 * 1024
    /// How long a client may take to send a whole body: a client trickling one byte a second must
    /// not hold a connection (and a task) for hours.
    static let readTimeout: Duration = .seconds(10)
}

/// Sets the body limit of the routes it is added to, through Hummingbird's request context, and
/// answers a body that outgrows it (Hummingbird's `NIOTooManyBytesError`) as 413 `invalid_request`.
/// The router has one for every route; the flow and admin API groups raise theirs. The outermost one
/// also reads the body before any route does, within `BodyLimit.readTimeout` (408 otherwise).
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let bytes: Int
    /// Whether this middleware reads the body (under the deadline) for the routes after it.
    var readsBody = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.maxUploadSize = bytes
        var request = request
        do {
            if readsBody, request.head.method != .get, request.head.method != .head {
                // The largest limit of any route: the group's own middleware enforces its smaller one.
                let body = try await Self.collect(request.body, upTo: max(bytes, BodyLimit.json), on: context.eventLoop)
                request.body = RequestBody(buffer: body)
            }
            return try await next(request, context)
        } catch is NIOTooManyBytesError {
            throw BrokerError.bodyTooLarge(limit: bytes)
        }
    }

    /// Collects a body, or gives up when it takes longer than `BodyLimit.readTimeout`. The deadline is
    /// a task scheduled on the connection's event loop, not a `Task.sleep`: on every POST, the Dispatch
    /// timer behind a sleep (armed, then cancelled) cost more than the rest of this middleware.
    static func collect(_ body: RequestBody, upTo limit: Int, on eventLoop: any EventLoop) async throws -> ByteBuffer {
        let deadline = eventLoop.scheduleTask(in: .seconds(BodyLimit.readTimeout.components.seconds)) {}
        return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await body.collect(upTo: limit) }
            group.addTask {
                try await withTaskCancellationHandler {
                    try await deadline.futureResult.get()
                } onCancel: {
                    deadline.cancel()
                }
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let body = first else {
                throw BrokerError.bodyTooSlow(seconds: Int(BodyLimit.readTimeout.components.seconds))
            }
            return body
        }
    }
}
