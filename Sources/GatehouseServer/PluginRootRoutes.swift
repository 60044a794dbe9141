import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The root paths plugins claim (`PluginEndpoint.root`: an app's back end issuing activations, the
/// pages an invitation email links to): one route per method and path, whose `:name` segments, body
/// (JSON, or a page's form) and credentials go to `PluginEndpointService.callRoot`, which finds the
/// instance that answers. A page's answer renders inside the broker's layout; a page's refusal is
/// the broker's error page. Handlers only translate.
struct PluginRootRoutes {
    let broker: Broker
    let renderer: PageRenderer

    init(broker: Broker, theme: PageTheme = PageTheme()) {
        self.broker = broker
        var templates: [String: String] = [:]
        for (id, pages) in broker.plugins.pageTemplates {
            for (name, text) in pages { templates["\(id)/\(name)"] = text }
        }
        self.renderer = PageRenderer(issuer: broker.config.server.issuer, challenges: broker.engine.challenges, pluginTemplates: templates, theme: theme)
        for name in renderer.brokenTemplates {
            broker.logger.error("a plugin's page template does not parse; its pages answer an internal failure", metadata: ["template": .string(name)])
        }
    }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        let group = router.group().add(middleware: BodyLimitMiddleware(bytes: BodyLimit.json))
        for endpoint in broker.pluginEndpoints.rootEndpoints {
            group.on(RouterPath(endpoint.path), method: HTTPRequest.Method(rawValue: endpoint.method.rawValue)!) { request, context in
                switch endpoint.format {
                case .json: return try await json(endpoint, request, context)
                case .page: return try await page(endpoint, request, context)
                }
            }
        }
    }

    /// The values of the declared path's `:name` segments.
    private func parameters(of endpoint: PluginEndpoint, _ context: GatehouseRequestContext) -> [String: String] {
        var values: [String: String] = [:]
        for segment in endpoint.path.split(separator: "/") where segment.hasPrefix(":") {
            let name = String(segment.dropFirst())
            values[name] = context.parameters.get(name)
        }
        return values
    }

    private func json(_ endpoint: PluginEndpoint, _ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let parameters = parameters(of: endpoint, context)
        return try await PluginEndpointAPI.proving(endpoint, request, context, issuer: broker.config.server.issuer) { fields, credentials in
            let (answer, _) = try await broker.pluginEndpoints.callRoot(
                method: endpoint.method.rawValue, path: endpoint.path, fields: fields, parameters: parameters, credentials: credentials, clientIP: context.clientIP
            )
            if let document = answer.document {
                guard PluginEndpointAnswer.isServableDocumentType(document.contentType) else {
                    throw BrokerError.internalFailure("The endpoint /\(endpoint.path) answered a document of a type the broker does not serve.")
                }
                var headers = HTTPFields()
                headers[.contentType] = document.contentType
                headers[.cacheControl] = "max-age=300"
                // A browser renders XML and could run script inside it: nothing runs (and, as on every
                // answer, no sniffing).
                headers[.contentSecurityPolicy] = "default-src 'none'; sandbox"
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: document.body)))
            }
            return JSONBody(answer.body).response(status: answer.created ? .created : .ok)
        }
    }

    private func page(_ endpoint: PluginEndpoint, _ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        do {
            var fields: [String: JSONValue] = [:]
            if endpoint.method == .get || endpoint.method == .delete {
                fields = PluginEndpointAPI.queryFields(request)
            } else {
                fields = try await FormBody.parse(request, context: context).mapValues(JSONValue.string)
            }
            let (answer, instance) = try await broker.pluginEndpoints.callRoot(
                method: endpoint.method.rawValue, path: endpoint.path, fields: fields, parameters: parameters(of: endpoint, context),
                credentials: PluginEndpointService.Credentials(), clientIP: context.clientIP, language: request.pageLanguage()
            )
            guard let page = answer.page, renderer.library.getTemplate(named: "\(instance)/\(page.template)") != nil else {
                throw BrokerError.internalFailure("The page endpoint \(endpoint.method.rawValue) /\(endpoint.path) of '\(instance)' answered no page it declared.")
            }
            let language = request.pageLanguage()
            return renderer.page(
                "\(instance)/\(page.template)", title: renderer.catalog.text(page.title, in: language),
                values: Self.mustacheValues(.object(page.values)) as? [String: Any] ?? [:], status: HTTPResponse.Status(code: page.status), language: language
            )
        } catch let error as BrokerError {
            return renderer.error(error, requestID: context.id, language: request.pageLanguage())
        }
    }

    /// JSON as Mustache reads it: `null` hides a section like `false`; whole numbers print without a
    /// fraction.
    static func mustacheValues(_ value: JSONValue) -> Any {
        switch value {
        case .null: return false
        case .bool(let flag): return flag
        case .number(let number): return number.rounded() == number && abs(number) < 1e15 ? Int(number) as Any : number
        case .string(let text): return text
        case .array(let items): return items.map(mustacheValues)
        case .object(let fields): return fields.mapValues(mustacheValues)
        }
    }
}
