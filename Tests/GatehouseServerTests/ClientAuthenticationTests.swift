import Foundation
import GatehouseCore
@testable import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// One client authentication, one rule set (RFC 6749 section 2.3), through both doors: the token
/// endpoint and the flow API.
extension GatehouseServerTests {
    static func basicHeader(_ id: String, _ secret: String) -> String {
        "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
    }

    /// The machine code the token endpoint answers for a form and optional Basic credentials.
    static func tokenError(_ client: any TestClientProtocol, form: String, basic: String? = nil) async throws -> (HTTPResponse.Status, String?) {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let basic { headers[.authorization] = basic }
        let response = try await client.execute(uri: "/oauth2/token", method: .post, headers: headers, body: ByteBuffer(string: form))
        return (response.status, try object(response)["error"]?.stringValue)
    }

    /// The machine code the flow API answers when starting a flow of `app` with these credentials.
    static func flowStartError(_ client: any TestClientProtocol, app: String, bodySecret: String? = nil, basic: String? = nil) async throws -> (
        HTTPResponse.Status, String?
    ) {
        var headers: HTTPFields = [:]
        if let basic { headers[.authorization] = basic }
        let secretField = bodySecret.map { #","client_secret":"\#($0)""# } ?? ""
        let response = try await client.execute(
            uri: "/v1/flows", method: .post, headers: headers, body: json(#"{"app":"\#(app)","provider":"local"\#(secretField)}"#)
        )
        return (response.status, try object(response)["error"]?.stringValue)
    }

    @Test func clientAuthenticationFollowsOneRuleSetAtTheTokenEndpointAndTheFlowAPI() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let grant = "grant_type=client_credentials"
        try await Self.application(test).test(.router) { client in
            // A public app that presents a secret is refused, at both doors.
            #expect(try await Self.tokenError(client, form: "\(grant)&client_id=demo&client_secret=guess") == (.unauthorized, "invalid_client"))
            #expect(try await Self.tokenError(client, form: grant, basic: Self.basicHeader("demo", "guess")) == (.unauthorized, "invalid_client"))
            #expect(try await Self.flowStartError(client, app: "demo", bodySecret: "guess") == (.unauthorized, "invalid_client"))
            #expect(try await Self.flowStartError(client, app: "demo", basic: Self.basicHeader("demo", "guess")) == (.unauthorized, "invalid_client"))

            // Two methods in one request are refused, at both doors.
            let both = Self.basicHeader("backend", Self.secret)
            #expect(try await Self.tokenError(client, form: "\(grant)&client_secret=\(Self.secret)", basic: both) == (.badRequest, "invalid_request"))
            #expect(try await Self.flowStartError(client, app: "backend", bodySecret: Self.secret, basic: both) == (.badRequest, "invalid_request"))

            // A confidential app without its secret, or with a wrong one, is refused, at both doors.
            #expect(try await Self.tokenError(client, form: "\(grant)&client_id=backend") == (.unauthorized, "invalid_client"))
            #expect(try await Self.tokenError(client, form: "\(grant)&client_id=backend&client_secret=wrong") == (.unauthorized, "invalid_client"))
            #expect(try await Self.flowStartError(client, app: "backend") == (.unauthorized, "invalid_client"))
            #expect(try await Self.flowStartError(client, app: "backend", bodySecret: "wrong") == (.unauthorized, "invalid_client"))

            // Credentials of one app never open another.
            #expect(try await Self.flowStartError(client, app: "demo", basic: both) == (.unauthorized, "invalid_client"))
            #expect(try await Self.tokenError(client, form: "\(grant)&client_id=demo", basic: both) == (.unauthorized, "invalid_client"))

            // The right secret passes either way (the grant itself is not enabled for the app).
            #expect(try await Self.tokenError(client, form: grant, basic: both) == (.badRequest, "unauthorized_client"))
            #expect(try await Self.tokenError(client, form: "\(grant)&client_id=backend&client_secret=\(Self.secret)") == (.badRequest, "unauthorized_client"))
            let started = try await client.execute(
                uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"backend","provider":"local","client_secret":"\#(Self.secret)"}"#)
            )
            #expect(started.status == .created)
            let viaBasic = try await client.execute(
                uri: "/v1/flows", method: .post, headers: [.authorization: both], body: Self.json(#"{"app":"backend","provider":"local"}"#))
            #expect(viaBasic.status == .created)
            // A public app that only names itself is fine.
            let publicStart = try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"demo","provider":"local"}"#))
            #expect(publicStart.status == .created)
        }
    }

    @Test func aPublicAppAskingToIssueActivationsIsToldItMayNotWhicheverWayItNamesItself() async throws {
        let test = try await Self.brokerWithActivation()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            for (headers, body): (HTTPFields, String) in [
                ([:], #"{"client_id":"demo","account":"x"}"#),
                ([.authorization: Self.basicHeader("demo", "")], #"{"account":"x"}"#),
            ] {
                let response = try await client.execute(uri: "/v1/activations", method: .post, headers: headers, body: Self.json(body))
                #expect(response.status == .forbidden)
                #expect(try Self.object(response)["error"]?.stringValue == "unauthorized_client")
            }
            // Naming no app at all, or a confidential app without its secret, stays a failed authentication.
            for body in [#"{"account":"x"}"#, #"{"client_id":"backend","account":"x"}"#] {
                let response = try await client.execute(uri: "/v1/activations", method: .post, body: Self.json(body))
                #expect(response.status == .unauthorized)
                #expect(try Self.object(response)["error"]?.stringValue == "invalid_client")
            }
        }
    }
}
