import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// What a mobile app asks outside a flow: `GET /v1/registration-state` and `POST /v1/logout`.
/// Handlers only translate.
struct MobileAPI {
    let broker: Broker
    var issuer: String { broker.config.server.issuer }

    func addRoutes(to group: RouterGroup<GatehouseRequestContext>) {
        group.get("registration-state") { request, _ in
            let query = request.uri.queryParameters
            guard let app = query["app"].map(String.init), let installation = query["installation"].map(String.init) else {
                throw BrokerError(.invalidRequest, .badRequest, "Name the app (app=) and the installation (installation=).")
            }
            let token = request.headers[.authorization] == nil ? nil : try AccessTokenAuthentication.presented(request, issuer: issuer)
            return JSONBody(try await broker.registrationState.state(appID: app, installationID: installation, accessToken: token)).response(status: .ok)
        }
        group.post("logout") { request, context in
            var refreshToken: String?
            var clientID: String?
            var secret: String?
            if request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
                let form = try await FormBody.parse(request, context: context)
                (refreshToken, clientID, secret) = (form["refresh_token"], form["client_id"], form["client_secret"])
            } else if request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true {
                let body = try await request.decode(as: LogoutBody.self, context: context)
                (refreshToken, clientID, secret) = (body.refreshToken, body.clientID, body.clientSecret)
            }
            if let refreshToken, !refreshToken.isEmpty {
                let client = try ClientCredentials.presented(
                    basic: try ClientAuthentication.basicCredentials(request.headers[.authorization]), bodyClientID: clientID, bodySecret: secret
                )
                try await broker.registrationState.logout(refreshToken: refreshToken, accessToken: nil, client: client, clientIP: context.clientIP)
                return Response(status: .noContent)
            }
            // Without a refresh token, the access token in the Authorization header logs out.
            return try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                try await broker.registrationState.logout(refreshToken: nil, accessToken: token, client: nil, clientIP: context.clientIP)
                return Response(status: .noContent)
            }
        }
    }

    struct LogoutBody: Decodable {
        var refreshToken: String?
        var clientID: String?
        var clientSecret: String?
        enum CodingKeys: String, CodingKey {
            case refreshToken = "refresh_token"
            case clientID = "client_id"
            case clientSecret = "client_secret"
        }
    }

}
