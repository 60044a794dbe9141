import HTTPTypes
import Hummingbird

/// Headers every answer carries: nothing the broker says is to be cached unless a route says so
/// (token responses must not be, RFC 6749 section 5.1), sniffed or framed; and the request id, so a
/// client's report can be matched with the server's log.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.referrerPolicy] = "no-referrer"
        response.headers[HTTPField.Name("X-Request-Id")!] = context.id
        return response
    }
}

extension HTTPField.Name {
    static var xContentTypeOptions: Self { .init("X-Content-Type-Options")! }
    static var xFrameOptions: Self { .init("X-Frame-Options")! }
    static var referrerPolicy: Self { .init("Referrer-Policy")! }
    static var pragma: Self { .init("Pragma")! }
}
