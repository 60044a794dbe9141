import GatehouseCore
import Hummingbird

/// Under `/scim/v2`, what the router has no route for is answered as SCIM errors are (RFC 7644
/// section 3.12): 405 for a method the discovery resources do not take, 404 for anything else.
struct ScimFallbackMiddleware<Context: RequestContext>: RouterMiddleware {
    static var discovery: [String] { ["/scim/v2/ServiceProviderConfig", "/scim/v2/ResourceTypes", "/scim/v2/Schemas"] }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path == "/scim/v2" || path.hasPrefix("/scim/v2/") else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where [404, 405].contains(error.status.code) {
            if request.method != .get, Self.discovery.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) {
                return ScimAPI.error(ScimError(405, nil, "\(path) is read with GET only."))
            }
            return ScimAPI.error(ScimError(404, nil, "There is no SCIM resource at \(path)."))
        }
    }
}
