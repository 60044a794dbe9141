import GatehouseCore
import Hummingbird
import NIOCore

/// The request body limits, chosen per route group: no endpoint needs more than a few hundred KiB,
/// and a body over its limit answers 413 with the endpoint's error shape, never a 500.
enum BodyLimit {
    /// OAuth and browser forms: parameters, codes and assertions only.
    static let form = 64 * 1024
    /// JSON APIs (flows carry custom registration data; the admin API carries policies).
    static let json = 256 * 1024
}

/// Sets the body limit of the routes it is added to, through Hummingbird's request context, and
/// answers a body that outgrows it (Hummingbird's `NIOTooManyBytesError`) as 413 `invalid_request`.
/// The router has one for every route; the flow and admin API groups raise theirs.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let bytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.maxUploadSize = bytes
        do {
            return try await next(request, context)
        } catch is NIOTooManyBytesError {
            throw BrokerError.bodyTooLarge(limit: bytes)
        }
    }
}
