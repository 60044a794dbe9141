import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import LocalPassword
import NIOCore
import Testing

/// The boundaries between apps and the limits on guessing doors: who may introspect whose tokens,
/// what a deleted or disabled app's tokens are worth (on this node and on another), and how failed
/// client, assertion and admin authentications are limited per address and per client id.
extension GatehouseServerTests {
    static let ops = AdminIdentity(name: "ops")

    @Test func introspectionAnswersOnlyAboutTheCallersOwnTokensUnlessItsPolicyNamesTheApp() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let access = try #require(try await Self.signedInTokens(client)["access_token"]?.stringValue)
            func introspect(as id: String, _ secret: String) async throws -> [String: JSONValue] {
                try Self.object(
                    try await client.execute(
                        uri: "/oauth2/introspect", method: .post, headers: Self.basic(id, secret), body: ByteBuffer(string: Self.encode(["token": access])))
                )
            }
            #expect(try await introspect(as: "web", Self.webSecret)["active"] == true)
            // Another confidential app learns nothing, not even that the token exists.
            #expect(try await introspect(as: "other", Self.otherSecret) == ["active": false])
            // Its policy names web: now it may (in force within the app cache's second).
            _ = try await test.broker.admin.patchPolicy(id: "other", patch: ["introspectTokensOf": ["web"]], by: Self.ops)
            test.clock.advance(by: 2)
            let granted = try await introspect(as: "other", Self.otherSecret)
            #expect(granted["active"] == true && granted["client_id"] == "web")
        }
    }

    @Test func aDeletedOrDisabledAppsTokensStopWorkingOnEveryNode() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        _ = try await test.broker.admin.patchPolicy(id: "other", patch: ["introspectTokensOf": ["*"]], by: Self.ops)
        // A second node on the same database.
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        let secondNode = try await TestBroker.make(
            yaml: Self.oidcYAML, registry: registry, environment: ["WEB_SECRET": Self.webSecret, "OTHER_SECRET": Self.otherSecret],
            temporary: try TemporaryStore.reopen(test.temporary), clock: test.clock
        )
        let other = ClientCredentials(clientID: "other", secret: Self.otherSecret)
        try await Self.application(test).test(.router) { client in
            let tokens = try await Self.signedInTokens(client)
            let access = try #require(tokens["access_token"]?.stringValue)
            let refresh = try #require(tokens["refresh_token"]?.stringValue)
            #expect(try await secondNode.broker.oauth.introspect(token: access, client: other)["active"] == true)

            // Disabled on the first node: inactive there at once, and on the second within a second.
            _ = try await test.broker.admin.updateApp(id: "web", changes: ["disabled": true], by: Self.ops)
            #expect(try await test.broker.oauth.introspect(token: access, client: other)["active"] == false)
            test.clock.advance(by: 2)
            #expect(try await secondNode.broker.oauth.introspect(token: access, client: other)["active"] == false)
            let userinfo = try await client.execute(uri: "/oauth2/userinfo", method: .get, headers: [.authorization: "Bearer \(access)"])
            #expect(userinfo.status == .unauthorized)
            // The app itself can no longer authenticate, nor start a sign-in.
            #expect(try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": refresh]).body["error"] == "invalid_client")
            #expect(try await client.execute(uri: Self.authorizeQuery(), method: .get).status == .badRequest)
            #expect(try await test.store.auditEvents(type: "app.disabled", appID: "web", accountID: nil, since: nil, limit: 1).count == 1)

            // Enabled again: what was revoked stays revoked.
            _ = try await test.broker.admin.updateApp(id: "web", changes: ["disabled": false], by: Self.ops)
            test.clock.advance(by: 2)
            #expect(try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": refresh]).body["error"] == "invalid_grant")
            #expect(try await test.broker.oauth.introspect(token: access, client: other)["active"] == false)

            // A deleted app: a fresh token of it is inactive on both nodes.
            test.clock.advance(by: 2)
            let fresh = try #require(try await Self.signedInTokens(client)["access_token"]?.stringValue)
            #expect(try await test.broker.oauth.introspect(token: fresh, client: other)["active"] == true)
            try await test.broker.admin.deleteApp(id: "web", by: Self.ops)
            #expect(try await test.broker.oauth.introspect(token: fresh, client: other)["active"] == false)
            test.clock.advance(by: 2)
            #expect(try await secondNode.broker.oauth.introspect(token: fresh, client: other)["active"] == false)
            #expect(try await client.execute(uri: "/oauth2/userinfo", method: .get, headers: [.authorization: "Bearer \(fresh)"]).status == .unauthorized)
        }
    }

    @Test func failedClientAuthenticationIsLimitedPerClientIDAndPerAddress() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        _ = try await test.broker.admin.patchPolicy(id: "other", patch: ["lockout": ["maxFailedAuthenticationsPerClient": 3]], by: Self.ops)
        test.clock.advance(by: 2)
        try await Self.application(test).test(.router) { client in
            let grant = ["grant_type": "client_credentials"]
            for _ in 0..<3 { #expect(try await Self.token(client, grant, id: "other", secret: "wrong").status == .unauthorized) }
            // Over the limit, a wrong secret is answered 429 with Retry-After...
            let limited = try await client.execute(
                uri: "/oauth2/token", method: .post, headers: Self.basic("other", "wrong"), body: ByteBuffer(string: Self.encode(grant))
            )
            #expect(limited.status == .tooManyRequests)
            #expect(try Self.object(limited)["error"] == "rate_limited")
            let retryAfter = try #require(limited.headers[.retryAfter].flatMap { Int($0) })
            #expect(retryAfter > 0 && retryAfter <= 15 * 60)
            // ...at the introspection door too (the same client id's count)...
            let introspect = try await client.execute(
                uri: "/oauth2/introspect", method: .post, headers: Self.basic("other", "wrong"), body: ByteBuffer(string: Self.encode(["token": "x"]))
            )
            #expect(introspect.status == .tooManyRequests)
            // ...but the app itself, with its right secret, is not locked out by someone who knows its id.
            #expect(try await Self.token(client, grant, id: "other", secret: Self.otherSecret).status == .ok)
            // Web is another client: unaffected.
            #expect(try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": "nope"]).body["error"] == "invalid_grant")
        }

        // Per address, across client ids (unknown ones included), with the default limit of 30.
        func tokenRequest(_ id: String, _ secret: String, from ip: String) throws -> TokenRequest {
            try TokenRequest(form: ["grant_type": "client_credentials"], basic: ClientCredentials(clientID: id, secret: secret), clientIP: ip)
        }
        for attempt in 0..<30 {
            await #expect(throws: BrokerError.self) { _ = try await test.broker.oauth.token(try tokenRequest("guess-\(attempt)", "x", from: "203.0.113.7")) }
        }
        do {
            _ = try await test.broker.oauth.token(try tokenRequest("other", Self.otherSecret, from: "203.0.113.7"))
            Issue.record("the address was not limited")
        } catch let error as BrokerError {
            #expect(error.code == .rateLimited && error.retryAfter != nil)
        }
        #expect(try await test.broker.oauth.token(try tokenRequest("other", Self.otherSecret, from: "198.51.100.1")).accessToken.isEmpty == false)
        // Unknown client ids leave no counter of their own behind.
        #expect(try await test.store.attemptCounter(key: "auth:client:client:guess-1") == nil)
    }

    @Test func failedAdminTokensAreLimitedPerAddress() async throws {
        let test = try await Self.oidcBroker(adminToken: "admin-token-admin-token-admin-token-01")
        defer { test.temporary.remove() }
        let gate = test.broker.adminGate
        for _ in 0..<30 {
            await #expect(throws: BrokerError.self) { _ = try await gate.authenticate(bearer: "guess", clientIP: "203.0.113.9") }
        }
        do {
            _ = try await gate.authenticate(bearer: "admin-token-admin-token-admin-token-01", clientIP: "203.0.113.9")
            Issue.record("the address was not limited")
        } catch let error as BrokerError {
            #expect(error.code == .rateLimited)
        }
        #expect(try await gate.authenticate(bearer: "admin-token-admin-token-admin-token-01", clientIP: "198.51.100.2").name == "default")
        // Over HTTP: 429 with Retry-After for the limited address (the router test has no peer address:
        // requests without one share the `unknown` bucket, which is limited like any address).
        try await Self.application(test).test(.router) { client in
            for _ in 0..<30 { _ = try await client.execute(uri: "/admin/v1/apps", method: .get, headers: [.authorization: "Bearer wrong"]) }
            let limited = try await client.execute(uri: "/admin/v1/apps", method: .get, headers: [.authorization: "Bearer admin-token-admin-token-admin-token-01"])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] != nil)
        }
    }

    @Test func flowStartsWithoutAClientAddressShareOneLimitedBucket() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        _ = try await test.broker.admin.patchPolicy(id: "multi", patch: ["lockout": ["maxFlowStartsPerIPPerMinute": 2]], by: Self.ops)
        for _ in 0..<2 { _ = try await test.start(FlowRequest(appID: "multi", providerID: "local")) }
        do {
            _ = try await test.start(FlowRequest(appID: "multi", providerID: "local"))
            Issue.record("flow starts without an address were not limited")
        } catch let error as BrokerError {
            #expect(error.code == .rateLimited)
        }
    }
}

extension GatehouseServerTests {
    /// Another node may read a just-disabled app from its app cache for up to a second and issue a
    /// token meanwhile: the revocation covers that moment too. And a newer revocation made on another
    /// node wins over an older one this node remembers.
    @Test func aDisabledAppsRevocationCoversTheCacheSecondAndTheNewestWins() async throws {
        let test = try await Self.oidcBroker()
        defer { test.temporary.remove() }
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        let secondNode = try await TestBroker.make(
            yaml: Self.oidcYAML, registry: registry, environment: ["WEB_SECRET": Self.webSecret, "OTHER_SECRET": Self.otherSecret],
            temporary: try TemporaryStore.reopen(test.temporary), clock: test.clock
        )
        let grant = try TokenRequest(form: ["grant_type": "client_credentials"], basic: ClientCredentials(clientID: "other", secret: Self.otherSecret))
        // Mid-second (token times are whole seconds): the second node caches `other` as enabled...
        test.clock.advance(by: 0.7)
        _ = try await secondNode.broker.oauth.token(grant)
        _ = try await test.broker.admin.updateApp(id: "other", changes: ["disabled": true], by: Self.ops)
        // ...and, in the next whole second but within its cache's lifetime, still issues a token...
        test.clock.advance(by: 0.8)
        let late = try await secondNode.broker.oauth.token(grant)
        test.clock.advance(by: 2)
        // ...which is inactive everywhere.
        _ = try await test.broker.admin.patchPolicy(id: "web", patch: ["introspectTokensOf": ["*"]], by: Self.ops)
        let web = ClientCredentials(clientID: "web", secret: Self.webSecret)
        #expect(try await test.broker.oauth.introspect(token: late.accessToken, client: web)["active"] == false)
        #expect(try await secondNode.broker.oauth.introspect(token: late.accessToken, client: web)["active"] == false)

        // Enabled, then disabled again on the second node later: the first node, which remembers
        // its own older revocation, follows the newer one.
        _ = try await test.broker.admin.updateApp(id: "other", changes: ["disabled": false], by: Self.ops)
        test.clock.advance(by: 5)
        let fresh = try await test.broker.oauth.token(grant)
        #expect(try await test.broker.oauth.introspect(token: fresh.accessToken, client: web)["active"] == true)
        _ = try await secondNode.broker.admin.updateApp(id: "other", changes: ["disabled": true], by: Self.ops)
        test.clock.advance(by: 2)
        #expect(try await test.broker.oauth.introspect(token: fresh.accessToken, client: web)["active"] == false)
    }
}
