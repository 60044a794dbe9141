import Foundation
import GatehouseCore
import GatehousePlugins
import GatehouseServer
import Prometheus
import Testing
import Yams

extension GatehouseServerTests {
    /// docs/openapi.yaml lists exactly the routes the server has (answers are checked against its
    /// schemas by the end-to-end tests).
    @Test func openAPIDocumentListsExactlyTheServersRoutes() async throws {
        let test = try await Self.brokerWithActivation()
        defer { test.temporary.remove() }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: repository.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let methods: Set = ["get", "post", "put", "patch", "delete"]
        let documented = Set(paths.flatMap { path, operations in operations.keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" } })
        let served = Set(
            GatehouseServer.makeRouter(broker: test.broker, metrics: PrometheusCollectorRegistry()).routes.map { route in
                let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
                return "\(route.method.rawValue) /\(path.joined(separator: "/"))"
            }
        )
        #expect(documented == served)
        #expect(served.contains("POST /v1/flows/{flow}"))
    }

    /// Every challenge the core and the built-in plugins declare has its schema in docs/openapi.yaml,
    /// with exactly the declared answer fields and every declared detail; no other type is listed.
    @Test func openAPIDocumentDescribesEveryDeclaredChallenge() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: repository.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
        let declared = BuiltInPlugins.registry.challenges.all
        let documented = schemas.keys.filter { $0.hasPrefix("Challenge_") }.map { String($0.dropFirst("Challenge_".count)) }
        #expect(Set(documented) == Set(declared.map(\.type)))
        for description in declared {
            let properties = try #require(schemas["Challenge_\(description.type)"]?["properties"] as? [String: Any], "\(description.type)")
            let fields = (properties["fields"] as? [String: Any])?["items"] as? [String: Any]
            let names = description.inputs.filter { $0.kind != .hidden }.map(\.name)
            #expect((fields?["enum"] as? [String] ?? []) == names, "\(description.type)")
            for detail in description.details {
                #expect(properties[detail.name] != nil, "\(description.type).\(detail.name)")
            }
        }
    }
}
