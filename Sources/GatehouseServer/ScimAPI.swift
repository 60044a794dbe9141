import Foundation
import GatehouseCore
import Hummingbird

/// `/scim/v2`: SCIM 2.0 provisioning (RFC 7644) for clients with an admin-issued bearer token. Every
/// answer is `application/scim+json`, errors as SCIM error resources. Handlers only translate to
/// `ScimService` calls.
struct ScimAPI {
    let broker: Broker
    var scim: ScimService { broker.scim }

    static let contentType = "application/scim+json"
    static let errorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        let group = router.group("scim/v2").add(middleware: BodyLimitMiddleware(bytes: BodyLimit.json))
        group.get("ServiceProviderConfig") { request, _ in await answer(request) { _ in scim.serviceProviderConfig() } }
        group.get("ResourceTypes") { request, _ in await answer(request) { _ in try scim.resourceTypes(id: nil) } }
        group.get("ResourceTypes/:id") { request, context in await answer(request) { _ in try scim.resourceTypes(id: try context.parameters.require("id")) } }
        group.get("Schemas") { request, _ in await answer(request) { _ in try scim.schemas(id: nil) } }
        group.get("Schemas/:id") { request, context in await answer(request) { _ in try scim.schemas(id: try context.parameters.require("id")) } }
        group.post(".search") { request, context in
            await answer(request) { client in
                let search = try Self.searchRequest(try await body(request, context))
                return try await scim.listAll(
                    client: client, filter: search.filter, startIndex: search.startIndex, count: search.count, attributes: search.attributes, excluded: search.excluded)
            }
        }
        for (path, kind) in [("Users", ScimKind.user), ("Groups", ScimKind.group)] {
            group.get(RouterPath(stringLiteral: path)) { request, _ in
                await answer(request) { client in
                    let query = Self.query(request)
                    return try await scim.list(
                        kind, client: client, filter: query["filter"], startIndex: try integer(query["startIndex"], "startIndex"),
                        count: try integer(query["count"], "count"), attributes: list(query["attributes"]), excluded: list(query["excludedAttributes"]))
                }
            }
            // A query sent as a body (RFC 7644 section 3.4.3), for filters too long for a URL.
            group.post(RouterPath(stringLiteral: "\(path)/.search")) { request, context in
                await answer(request) { client in
                    let search = try Self.searchRequest(try await body(request, context))
                    return try await scim.list(
                        kind, client: client, filter: search.filter, startIndex: search.startIndex, count: search.count, attributes: search.attributes,
                        excluded: search.excluded)
                }
            }
            group.post(RouterPath(stringLiteral: path)) { request, context in
                await answer(request) { client in try await scim.create(kind, body: try await body(request, context), client: client) }
            }
            group.get(RouterPath(stringLiteral: "\(path)/:id")) { request, context in
                await answer(request) { client in
                    let query = Self.query(request)
                    return try await scim.get(
                        kind, id: try context.parameters.require("id"), client: client, attributes: list(query["attributes"]),
                        excluded: list(query["excludedAttributes"]))
                }
            }
            group.put(RouterPath(stringLiteral: "\(path)/:id")) { request, context in
                await answer(request) { client in
                    try await scim.replace(
                        kind, id: try context.parameters.require("id"), body: try await body(request, context), ifMatch: request.headers[.ifMatch], client: client)
                }
            }
            group.patch(RouterPath(stringLiteral: "\(path)/:id")) { request, context in
                await answer(request) { client in
                    try await scim.patch(
                        kind, id: try context.parameters.require("id"), body: try await body(request, context), ifMatch: request.headers[.ifMatch], client: client)
                }
            }
            group.delete(RouterPath(stringLiteral: "\(path)/:id")) { request, context in
                await answer(request) { client in
                    try await scim.delete(kind, id: try context.parameters.require("id"), ifMatch: request.headers[.ifMatch], client: client)
                }
            }
        }
    }

    /// Authenticates the client, runs `body`, and writes its answer or its error as SCIM says.
    private func answer(_ request: Request, _ body: (ScimClientRecord) async throws -> ScimService.Answer) async -> Response {
        do {
            let header = request.headers[.authorization]
            let token = header.flatMap { $0.lowercased().hasPrefix("bearer ") ? String($0.dropFirst(7)).trimmingCharacters(in: .whitespaces) : nil }
            let client = try await scim.client(bearer: token)
            return Self.response(try await body(client))
        } catch let error as ScimError {
            return Self.error(error)
        } catch let error as BrokerError {
            return Self.error(ScimError(error.httpStatus, nil, error.message))
        } catch {
            broker.logger.error("SCIM request failed", metadata: ["error": .string(String(describing: error))])
            return Self.error(ScimError(500, nil, "The request failed; see the server log."))
        }
    }

    static func response(_ answer: ScimService.Answer) -> Response {
        var headers = HTTPFields()
        if let etag = answer.etag { headers[.eTag] = etag }
        if let location = answer.location { headers[.location] = location }
        guard let body = answer.body else { return Response(status: .init(code: answer.status), headers: headers) }
        headers[.contentType] = contentType
        return Response(status: .init(code: answer.status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSONValue.object(body).serialized())))
    }

    static func error(_ error: ScimError) -> Response {
        var object: [String: JSONValue] = ["schemas": [.string(errorSchema)], "status": .string(String(error.status)), "detail": .string(error.detail)]
        if let scimType = error.scimType { object["scimType"] = .string(scimType) }
        var headers = HTTPFields()
        headers[.contentType] = contentType
        if error.status == 401 { headers[.wwwAuthenticate] = "Bearer realm=\"scim\"" }
        return Response(status: .init(code: error.status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSONValue.object(object).serialized())))
    }

    private func body(_ request: Request, _ context: GatehouseRequestContext) async throws -> JSONValue {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(buffer: buffer))
        } catch {
            throw ScimError(400, "invalidSyntax", "The body is not JSON.")
        }
    }

    /// A SearchRequest body's parameters.
    static func searchRequest(_ body: JSONValue) throws -> (filter: String?, startIndex: Int?, count: Int?, attributes: [String], excluded: [String]) {
        guard case .object(let fields) = body else { throw ScimError(400, "invalidSyntax", "A search body is a SearchRequest object.") }
        func strings(_ key: String) throws -> [String] {
            switch fields[key] {
            case nil, .null: return []
            case .array(let items): return items.compactMap(\.stringValue)
            case .string(let text): return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            default: throw ScimError(400, "invalidValue", "\(key) must be a list of attribute names.")
            }
        }
        func integer(_ key: String) throws -> Int? {
            switch fields[key] {
            case nil, .null: return nil
            case .number(let number) where number == number.rounded() && abs(number) < 1e9: return Int(number)
            default: throw ScimError(400, "invalidValue", "\(key) must be an integer.")
            }
        }
        if let filter = fields["filter"], filter != .null, filter.stringValue == nil { throw ScimError(400, "invalidValue", "filter must be a string.") }
        return (fields["filter"]?.stringValue, try integer("startIndex"), try integer("count"), try strings("attributes"), try strings("excludedAttributes"))
    }

    /// The query's parameters, decoded as forms are: clients write the spaces of a filter as `+` or
    /// `%20` (`filter=userName+eq+%22ada%22`), and a `+` they mean is `%2B`.
    static func query(_ request: Request) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in (request.uri.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String { text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text) }
            let name = decode(parts[0])
            if parameters[name] == nil { parameters[name] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return parameters
    }

    private func integer(_ text: String?, _ name: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text) else { throw ScimError(400, "invalidValue", "\(name) must be an integer.") }
        return value
    }

    private func list(_ text: String?) -> [String] {
        text.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } } ?? []
    }
}
