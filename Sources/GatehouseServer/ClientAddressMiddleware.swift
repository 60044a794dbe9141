import GatehouseCore
import Hummingbird

/// Behind a reverse proxy every request comes from the proxy's address, which would make per-IP
/// limits hit everyone at once. When the peer is one of `server.trustedProxies`, the client is the
/// right-most `X-Forwarded-For` entry that is not itself a trusted proxy. Anything else ignores the
/// header, so clients cannot choose their own address.
struct ClientAddressMiddleware: RouterMiddleware {
    let trusted: Set<String>

    func handle(_ request: Request, context: GatehouseRequestContext, next: (Request, GatehouseRequestContext) async throws -> Response) async throws -> Response {
        guard !trusted.isEmpty, let peer = context.remoteAddress?.ipAddress, trusted.contains(peer),
            let header = request.headers[values: .init("X-Forwarded-For")!].last
        else { return try await next(request, context) }
        let hops = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let client = hops.last(where: { !trusted.contains($0) }) ?? hops.first else { return try await next(request, context) }
        var context = context
        context.forwardedFor = client
        return try await next(request, context)
    }
}
