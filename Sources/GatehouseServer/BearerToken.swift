import GatehouseCore
import HTTPTypes
import Hummingbird

/// Routes that act for the signed-in person take their access token from `Authorization: Bearer`.
enum BearerToken {
    /// Runs `body` with the request's bearer token; token errors answer as RFC 6750 says, with a
    /// `WWW-Authenticate: Bearer` challenge.
    static func with(_ request: Request, _ body: (String) async throws -> Response) async throws -> Response {
        do {
            guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
                throw BrokerError(.invalidToken, .unauthenticated, "A bearer access token is required.")
            }
            return try await body(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
        } catch let error as BrokerError where error.code == .invalidToken || error.code == .insufficientScope {
            var response = ErrorBody(error).response()
            response.headers[.wwwAuthenticate] = #"Bearer realm="gatehouse", error="\#(error.code.rawValue)""#
            return response
        }
    }
}
