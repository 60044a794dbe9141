import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The OAuth 2.0 / OpenID Connect JSON endpoints: discovery, token, userinfo, revocation,
/// introspection, and account deregistration. Handlers translate HTTP to `OAuthService` calls.
struct OAuthAPI {
    let broker: Broker
    var oauth: OAuthService { broker.oauth }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get(".well-known/openid-configuration", use: discovery)
        router.get(".well-known/oauth-authorization-server", use: discovery)
        router.post("oauth2/token", use: token)
        router.get("oauth2/userinfo", use: userinfo)
        router.post("oauth2/userinfo", use: userinfo)
        router.post("oauth2/revoke", use: revoke)
        router.post("oauth2/introspect", use: introspect)
        router.post("oauth2/par", use: pushAuthorization)
        router.delete("v1/account", use: deregister)
    }

    @Sendable func discovery(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        var response = JSONBody(broker.discovery()).response(status: .ok)
        response.headers[.cacheControl] = "public, max-age=300"
        return response
    }

    @Sendable func token(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (form, repeated) = try await FormBody.parse(request, context: context, repeatable: TokenExchangeParameters.repeatable)
        let tokens = try await oauth.token(
            try TokenRequest(
                form: form, repeated: repeated, basic: try ClientAuthentication.basicCredentials(request.headers[.authorization]), clientIP: context.clientIP,
                dpop: AccessTokenAuthentication.dpop(request, issuer: broker.config.server.issuer)
            )
        )
        var response = JSONBody(tokens.json).response(status: .ok)
        if let nonce = tokens.dpopNonce { response.headers[AccessTokenAuthentication.dpopNonceHeader] = nonce }
        response.headers[.cacheControl] = "no-store"
        response.headers[.pragma] = "no-cache"
        return response
    }

    /// RFC 9126 section 2: a pushed authorization request; 201 with its `request_uri`.
    @Sendable func pushAuthorization(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let form = try await FormBody.parse(request, context: context)
        let pushed = try await broker.authorizations.push(form, client: try presented(form, request), clientIP: context.clientIP)
        var response = JSONBody(["request_uri": JSONValue.string(pushed.requestURI), "expires_in": .number(Double(pushed.expiresIn))]).response(status: .created)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    @Sendable func introspect(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let form = try await FormBody.parse(request, context: context)
        guard let token = form["token"] else { throw BrokerError(.invalidRequest, .badRequest, "token is required.") }
        let answer = try await oauth.introspect(token: token, client: presented(form, request), clientIP: context.clientIP)
        return JSONBody(answer).response(status: .ok)
    }

    @Sendable func revoke(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let form = try await FormBody.parse(request, context: context)
        guard let token = form["token"] else { throw BrokerError(.invalidRequest, .badRequest, "token is required.") }
        try await oauth.revoke(token: token, client: presented(form, request), clientIP: context.clientIP)
        return Response(status: .ok)
    }

    @Sendable func userinfo(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        try await AccessTokenAuthentication.with(request, issuer: broker.config.server.issuer) { token in
            JSONBody(try await oauth.userinfo(accessToken: token)).response(status: .ok)
        }
    }

    @Sendable func deregister(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        try await AccessTokenAuthentication.with(request, issuer: broker.config.server.issuer) { token in
            try await oauth.deregister(accessToken: token)
            return Response(status: .noContent)
        }
    }

    private func presented(_ form: [String: String], _ request: Request) throws -> ClientCredentials? {
        try ClientCredentials.presented(
            basic: try ClientAuthentication.basicCredentials(request.headers[.authorization]), bodyClientID: form["client_id"], bodySecret: form["client_secret"]
        )
    }
}
