import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The endpoints plugins declare, at `/v1/plugins/{instance}/{path}` for `GET`, `POST`, `PATCH` and
/// `DELETE`: the body's JSON object (or, for `GET` and `DELETE`, the query) and the credentials the
/// endpoint's caller kind reads go to `PluginEndpointService`, which does the rest. Handlers only
/// translate.
struct PluginEndpointAPI {
    let broker: Broker
    var issuer: String { broker.config.server.issuer }

    func addRoutes(to group: RouterGroup<GatehouseRequestContext>) {
        for method in PluginEndpoint.Method.allCases {
            group.on(":instance/**", method: HTTPRequest.Method(rawValue: method.rawValue)!) { request, context in
                try await answer(request, context, method: method)
            }
        }
    }

    private func answer(_ request: Request, _ context: GatehouseRequestContext, method: PluginEndpoint.Method) async throws -> Response {
        let instance = try context.parameters.require("instance")
        let path = context.parameters.getCatchAll().joined(separator: "/")
        let endpoint = try broker.pluginEndpoints.endpoint(instance: instance, method: method.rawValue, path: path)
        return try await Self.proving(endpoint, request, context, issuer: issuer) { fields, credentials in
            let answer = try await broker.pluginEndpoints.call(
                instance: instance, method: method.rawValue, path: path, fields: fields, credentials: credentials, clientIP: context.clientIP
            )
            guard answer.document == nil else {
                throw BrokerError.internalFailure("The endpoint /v1/plugins/\(instance)/\(path) answered a document; only root endpoints anyone calls serve documents.")
            }
            return JSONBody(answer.body).response(status: answer.created ? .created : .ok)
        }
    }

    /// The query's fields as strings (the first of a repeated name).
    static func queryFields(_ request: Request) -> [String: JSONValue] {
        Dictionary(request.uri.queryParameters.map { (String($0.key), JSONValue.string(String($0.value))) }) { first, _ in first }
    }

    /// Reads a JSON endpoint's fields (the body's object, or for `GET` and `DELETE` the query) and
    /// the credentials its caller kind reads, and answers what `respond` makes of them.
    static func proving(
        _ endpoint: PluginEndpoint, _ request: Request, _ context: GatehouseRequestContext, issuer: String,
        respond: @Sendable ([String: JSONValue], PluginEndpointService.Credentials) async throws -> Response
    ) async throws -> Response {
        let method = endpoint.method
        var fields: [String: JSONValue]
        if endpoint.caller == .anyone, endpoint.inputs.isEmpty {
            // A link anyone may call that declares no field reads no body (one sent is not refused).
            fields = [:]
        } else if method == .get || method == .delete {
            fields = queryFields(request)
        } else {
            var request = request
            let buffer = try await request.collectBody(upTo: context.maxUploadSize)
            if buffer.readableBytes == 0 {
                fields = [:]
            } else if case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: buffer)) {
                fields = object
            } else {
                throw BrokerError(.invalidRequest, .badRequest, "The body must be a JSON object.")
            }
        }
        var credentials = PluginEndpointService.Credentials()
        switch endpoint.caller {
        case .appClient:
            // A secret never comes from a URL (proxies log them): for GET and DELETE, HTTP Basic only.
            let fromBody = method != .get && method != .delete
            credentials.client = try ClientAuthentication.credentials(
                from: request, bodyClientID: fromBody ? fields["client_id"]?.stringValue : nil, bodySecret: fromBody ? fields["client_secret"]?.stringValue : nil
            )
            fields["client_id"] = nil
            fields["client_secret"] = nil
        case .admin:
            credentials.bearer = request.headers[.authorization].flatMap {
                $0.lowercased().hasPrefix("bearer ") ? String($0.dropFirst(7)).trimmingCharacters(in: .whitespaces) : nil
            }
        case .anyone:
            break
        case .accessToken:
            let body = fields
            return try await AccessTokenAuthentication.with(request, issuer: issuer) { token in
                try await respond(body, PluginEndpointService.Credentials(accessToken: token))
            }
        }
        return try await respond(fields, credentials)
    }
}
