import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// What a mobile app asks outside a flow: `GET /v1/registration-state`, `POST /v1/logout`,
/// `POST /v1/activations` (its back end, with client credentials) and the JSON side of invitation
/// links (`GET /v1/invitations/{token}`, `POST .../accept`, `POST .../decline`). Handlers only translate.
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
        group.post("activations") { request, context in
            let body = try await request.decode(as: [String: JSONValue].self, context: context)
            let client = try ClientAuthentication.credentials(from: request, bodyClientID: body["client_id"]?.stringValue, bodySecret: body["client_secret"]?.stringValue)
            let fields = body.filter { $0.key != "client_secret" && $0.key != "client_id" }
            let issued = try await broker.activations.issue(fields: fields, client: client, clientIP: context.clientIP)
            return JSONBody(issued.json).response(status: .created)
        }
        group.get("invitations/:token") { _, context in
            JSONBody(Self.json(try await broker.activations.invitation(token: try context.parameters.require("token")))).response(status: .ok)
        }
        group.post("invitations/:token/accept") { request, context in
            let body = try await request.decode(as: AcceptBody.self, context: context)
            let answer = try await broker.activations.answerInvitation(token: try context.parameters.require("token"), accept: true, pin: body.pin)
            return JSONBody(Self.json(answer)).response(status: .ok)
        }
        group.post("invitations/:token/decline") { _, context in
            let answer = try await broker.activations.answerInvitation(token: try context.parameters.require("token"), accept: false, pin: nil)
            return JSONBody(Self.json(answer)).response(status: .ok)
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

    struct AcceptBody: Decodable { var pin: String }

    static func json(_ view: InvitationView) -> JSONValue {
        [
            "app": .string(view.appID), "appName": .string(view.appName), "email": .string(view.email), "state": .string(view.state),
            "expiresAt": .string(ISO8601DateFormatter().string(from: view.expiresAt)),
            "pin": ["minLength": .number(Double(view.pinPolicy.minLength)), "maxLength": .number(Double(view.pinPolicy.maxLength)), "digitsOnly": .bool(view.pinPolicy.digitsOnly)],
        ]
    }

    static func json(_ answer: InvitationAnswer) -> JSONValue {
        var fields: [String: JSONValue] = ["state": .string(answer.accepted ? "accepted" : "declined")]
        if let activation = answer.activation { fields["activation"] = activation.json }
        return .object(fields)
    }
}
