import GatehouseCore
import Hummingbird

/// Behind a reverse proxy every request comes from the proxy's address, which would make per-IP
/// limits hit everyone at once. When the peer is one of `server.trustedProxies`, the client is the
/// right-most `X-Forwarded-For` entry that is not itself a trusted proxy. Anything else ignores the
/// header, so clients cannot choose their own address.
struct ClientAddressMiddleware: RouterMiddleware {
    let trusted: Set<String>

    func handle(_ request: Request, context: GatehouseRequestContext, next: (Request, GatehouseRequestContext) async throws -> Response) async throws -> Response {
        guard let client = Self.client(peer: context.remoteAddress?.ipAddress, forwardedFor: request.headers[values: .init("X-Forwarded-For")!], trusted: trusted)
        else { return try await next(request, context) }
        var context = context
        context.forwardedFor = client
        return try await next(request, context)
    }

    /// The client a trusted proxy names, or nil to use the peer itself. Every `X-Forwarded-For`
    /// header counts (proxies may append their own); the right-most untrusted hop is the client.
    static func client(peer: String?, forwardedFor headers: [String], trusted: Set<String>) -> String? {
        guard let peer, trusted.contains(peer), !headers.isEmpty else { return nil }
        let hops = headers.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return hops.last { !trusted.contains($0) } ?? hops.first
    }
}
