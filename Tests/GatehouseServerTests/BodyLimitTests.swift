import Foundation
import GatehouseCore
@testable import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Bodies over a route's limit answer 413 with the endpoint's error shape, never 500.
extension GatehouseServerTests {
    /// A form body of `bytes` bytes: one long parameter.
    static func oversizedForm(_ bytes: Int) -> ByteBuffer {
        ByteBuffer(string: "grant_type=client_credentials&padding=" + String(repeating: "a", count: bytes))
    }

    @Test func oversizedFormsAnswer413AtEveryFormEndpoint() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            for path in ["/oauth2/token", "/oauth2/introspect", "/oauth2/revoke"] {
                let response = try await client.execute(uri: path, method: .post, headers: Self.form, body: Self.oversizedForm(BodyLimit.form))
                #expect(response.status == .contentTooLarge, "\(path)")
                #expect(try Self.object(response)["error"] == "invalid_request", "\(path)")
            }
            // The browser forms answer with the error page, same status.
            for path in ["/oauth2/authorize", "/oauth2/authorize/provider", "/oauth2/authorize/answer"] {
                let response = try await client.execute(uri: path, method: .post, headers: Self.form, body: Self.oversizedForm(BodyLimit.form))
                #expect(response.status == .contentTooLarge, "\(path)")
                #expect(response.headers[.contentType]?.hasPrefix("text/html") == true, "\(path)")
                #expect(String(buffer: response.body).contains("invalid_request"), "\(path)")
            }
            // Just under the limit is read (and refused for what it says, not for its size).
            let small = try await client.execute(uri: "/oauth2/token", method: .post, headers: Self.form, body: Self.oversizedForm(BodyLimit.form - 100))
            #expect(small.status != .contentTooLarge)
        }
    }

    @Test func oversizedFlowAPIBodiesAnswer413() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let padding = String(repeating: "a", count: BodyLimit.json)
            let start = try await client.execute(
                uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"demo","provider":"local","padding":"\#(padding)"}"#)
            )
            #expect(start.status == .contentTooLarge)
            #expect(try Self.object(start)["error"] == "invalid_request")
            let started = try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"demo","provider":"local"}"#))
            let flow = try #require(try Self.object(started)["flow"]?.stringValue)
            let answer = try await client.execute(
                uri: "/v1/flows/\(flow)", method: .post, body: Self.json(#"{"answer":{"username":"\#(padding)","password":"x"}}"#)
            )
            #expect(answer.status == .contentTooLarge)
            #expect(try Self.object(answer)["error"] == "invalid_request")
            // The JSON limit is the flow API's own: a body over the form limit but under it is read.
            let medium = String(repeating: "a", count: BodyLimit.form * 2)
            let read = try await client.execute(
                uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"demo","provider":"local","scope":"\#(medium)"}"#)
            )
            #expect(read.status == .badRequest)
            #expect(try Self.object(read)["error"] == "invalid_scope")
        }
    }
}
