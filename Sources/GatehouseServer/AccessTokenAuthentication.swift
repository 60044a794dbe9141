import GatehouseCore
import HTTPTypes
import Hummingbird

/// Routes that act for the signed-in person take their access token from `Authorization: Bearer`
/// (RFC 6750) or, for a DPoP-bound token, `Authorization: DPoP` with a `DPoP` proof (RFC 9449
/// section 7). Refusals answer 401 with the matching `WWW-Authenticate` challenge.
enum AccessTokenAuthentication {
    static let dpopHeader = HTTPField.Name("DPoP")!
    static let dpopNonceHeader = HTTPField.Name("DPoP-Nonce")!

    /// The request's DPoP proofs with its method and URL as the broker is reached at (the issuer,
    /// which may carry a path prefix, followed by the route's path); nil when it has none.
    static func dpop(_ request: Request, issuer: String) -> DPoPPresentation? {
        let proofs = request.headers[values: dpopHeader]
        guard !proofs.isEmpty else { return nil }
        return DPoPPresentation(proofs: proofs, method: request.method.rawValue, url: issuer + request.uri.path)
    }

    /// The access token the request presents, with its scheme and proof.
    static func presented(_ request: Request, issuer: String) throws(BrokerError) -> PresentedToken {
        guard let header = request.headers[.authorization] else { throw BrokerError(.invalidToken, .unauthenticated, "An access token is required.") }
        let lowered = header.lowercased()
        let scheme: PresentedToken.Scheme
        if lowered.hasPrefix("bearer ") {
            scheme = .bearer
        } else if lowered.hasPrefix("dpop ") {
            scheme = .dpop
        } else {
            throw BrokerError(.invalidToken, .unauthenticated, "An access token is required (Authorization: Bearer or DPoP).")
        }
        let token = header.drop { $0 != " " }.trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty else { throw BrokerError(.invalidToken, .unauthenticated, "The Authorization header carries no token.") }
        return PresentedToken(scheme: scheme, token: token, dpop: dpop(request, issuer: issuer))
    }

    /// Runs `body` with the request's token; token errors answer as RFC 6750 and RFC 9449 say.
    static func with(_ request: Request, issuer: String, _ body: (PresentedToken) async throws -> Response) async throws -> Response {
        do {
            return try await body(try presented(request, issuer: issuer))
        } catch let error as BrokerError
            where [.invalidToken, .insufficientScope, .insufficientUserAuthentication, .invalidDPoPProof, .useDPoPNonce].contains(error.code)
        {
            var response = ErrorBody(error).response(status: error.code == .insufficientScope ? .forbidden : .unauthorized)
            // A step-up refusal says how recent the sign-in must be (RFC 9470 section 3).
            let maxAge = error.maxAge.map { #", max_age="\#($0)""# } ?? ""
            let dpopChallenge = #"DPoP error="\#(error.code.rawValue)"\#(maxAge), algs="\#(DPoPVerifier.algorithms.joined(separator: " "))""#
            let bearerChallenge = #"Bearer realm="gatehouse", error="\#(error.code.rawValue)"\#(maxAge)"#
            if error.reason == OAuthService.boundTokenAsBearer {
                // A DPoP-bound token sent as Bearer: the DPoP challenge says how to present it, and the
                // Bearer one answers the scheme the client used (RFC 9449 section 7.2).
                response.headers[.wwwAuthenticate] = dpopChallenge
                response.headers.append(HTTPField(name: .wwwAuthenticate, value: bearerChallenge))
            } else {
                let dpop = error.code == .invalidDPoPProof || error.code == .useDPoPNonce || request.headers[.authorization]?.lowercased().hasPrefix("dpop ") == true
                response.headers[.wwwAuthenticate] = dpop ? dpopChallenge : bearerChallenge
            }
            return response
        }
    }
}
