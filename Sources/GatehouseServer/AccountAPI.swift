import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The signed-in person's devices, browser sessions, consents and credential operations, with their
/// access token (Bearer, or DPoP for a bound token): `GET /v1/account/devices`, `PATCH` and `DELETE
/// /v1/account/devices/{id}`, `GET /v1/account/sessions`, `DELETE /v1/account/sessions/{id}`,
/// `GET /v1/account/consents`, `DELETE /v1/account/consents/{app}`,
/// `POST /v1/account/operations/{plugin}/{operation}`. Handlers only translate.
struct AccountAPI {
    let broker: Broker
    var issuer: String { broker.config.server.issuer }

    func addRoutes(to group: RouterGroup<GatehouseRequestContext>) {
        group.get("devices") { request, _ in
            try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                JSONBody(JSONValue.array(try await broker.devices.devices(accessToken: token).map(\.json))).response(status: .ok)
            }
        }
        group.patch("devices/:id") { request, context in
            let body = try await request.decode(as: RenameBody.self, context: context)
            let id = try context.parameters.require("id")
            return try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                JSONBody(try await broker.devices.rename(id, alias: body.alias, accessToken: token).json).response(status: .ok)
            }
        }
        group.delete("devices/:id") { request, context in
            let id = try context.parameters.require("id")
            return try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                try await broker.devices.remove(id, accessToken: token)
                return Response(status: .noContent)
            }
        }
        group.get("sessions") { request, _ in
            try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                JSONBody(JSONValue.array(try await broker.oauth.sessions(accessToken: token).map(\.json))).response(status: .ok)
            }
        }
        group.delete("sessions/:id") { request, context in
            let id = try context.parameters.require("id")
            return try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                try await broker.oauth.endSession(id, accessToken: token)
                return Response(status: .noContent)
            }
        }
        group.get("consents") { request, _ in
            try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                JSONBody(JSONValue.array(try await broker.oauth.consents(accessToken: token).map(\.json))).response(status: .ok)
            }
        }
        group.delete("consents/:app") { request, context in
            let app = try context.parameters.require("app")
            return try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                try await broker.oauth.revokeConsent(appID: app, accessToken: token)
                return Response(status: .noContent)
            }
        }
        group.post("operations/:plugin/:operation") { request, context in
            let body = try await request.decode(as: [String: JSONValue].self, context: context)
            let plugin = try context.parameters.require("plugin")
            let operation = try context.parameters.require("operation")
            return try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                let result = try await broker.accountOperations.perform(
                    plugin: plugin, operation: operation, fields: body, accessToken: token, clientIP: context.clientIP)
                return JSONBody(result).response(status: .ok)
            }
        }
    }

    struct RenameBody: Decodable { var alias: String }
}
