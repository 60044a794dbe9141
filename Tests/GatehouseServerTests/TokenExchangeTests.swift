import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Token exchange (RFC 8693) at the token endpoint: what a back end gets for a person's token, the
/// `act` claim of delegation, and every refusal section 2.2.2 names.
extension GatehouseServerTests {
    static let apiSecret = "api-secret-api-secret-api-secret-0003"
    static let billingSecret = "billing-secret-billing-secret-0004"
    static let exchangeYAML =
        oidcYAML.replacingOccurrences(of: "${WEB_SECRET}", with: webSecret).replacingOccurrences(of: "${OTHER_SECRET}", with: otherSecret) + """

              - id: api
                secret: \(apiSecret)
                policy:
                  identityProviders: [local]
                  clientCredentialsGrant: true
                  allowedScopes: [openid, jobs]
                  tokenExchange:
                    audiences: [billing, "https://billing.example/api"]
                    subjectTokensOf: [web]
              - id: billing
                secret: \(billingSecret)
                policy:
                  identityProviders: [local]
                  allowedScopes: [openid, profile]
                  tokenExchange:
                    audiences: [ledger]
                    subjectTokensOf: [api]
              - id: spa
                redirectURIs: [https://spa.example/callback]
                policy:
                  identityProviders: [local]
                  tokenExchange:
                    audiences: [billing]
            """

    static let exchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    static func exchangeToken(
        _ client: any TestClientProtocol, subject: String, type: String = accessTokenType, extra: [String: String] = ["audience": "billing"],
        id: String = "api", secret: String = apiSecret
    ) async throws -> (status: HTTPResponse.Status, body: [String: JSONValue]) {
        var form = ["grant_type": exchangeGrant, "subject_token": subject, "subject_token_type": type]
        form.merge(extra) { _, new in new }
        return try await token(client, form, id: id, secret: secret)
    }

    @Test func aBackEndExchangesAPersonsTokenForAnotherAudienceNarrowedAndNoLonger() async throws {
        let test = try await Self.oidcBroker(yaml: Self.exchangeYAML)
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let discovery = try Self.object(try await client.execute(uri: "/.well-known/openid-configuration", method: .get))
            #expect(discovery["grant_types_supported"]?.arrayValue?.contains(.string(Self.exchangeGrant)) == true)
            let web = try await Self.signedInTokens(client)
            let access = try #require(web["access_token"]?.stringValue)
            let original = try Self.claims(of: access)

            let exchanged = try await Self.exchangeToken(client, subject: access, extra: ["audience": "billing", "scope": "openid"])
            #expect(exchanged.status == .ok, "\(exchanged.body)")
            #expect(exchanged.body["issued_token_type"]?.stringValue == Self.accessTokenType && exchanged.body["token_type"]?.stringValue == "Bearer")
            #expect(exchanged.body["refresh_token"] == nil && exchanged.body["id_token"] == nil && exchanged.body["scope"]?.stringValue == "openid")
            let token = try #require(exchanged.body["access_token"]?.stringValue)
            let claims = try Self.claims(of: token)
            #expect(claims["aud"] == .string("billing") || claims["aud"] == .array([.string("billing")]))
            #expect(claims["sub"] == original["sub"] && claims["client_id"]?.stringValue == "api" && claims["act"] == nil)
            #expect(try #require(claims["exp"]?.numberValue) <= (try #require(original["exp"]?.numberValue)))

            // The audience's resource server learns about the token made for it; another app does not.
            let seen = try await Self.introspect(client, token, id: "billing", secret: Self.billingSecret)
            #expect(seen["active"] == .bool(true) && seen["client_id"]?.stringValue == "api" && seen["aud"]?.stringValue == "billing")
            #expect(try await Self.introspect(client, token, id: "other", secret: Self.otherSecret)["active"] == .bool(false))

            // A resource URI (RFC 8707) is a target too.
            let byResource = try await Self.exchangeToken(client, subject: access, extra: ["resource": "https://billing.example/api"])
            // Without scope: the subject token's, less what api may not have at all (profile).
            #expect(try byResource.status == .ok && Self.claims(of: #require(byResource.body["access_token"]?.stringValue))["scope"] == .string("openid"))

            // The ID token stands for the person too (scope openid only).
            let idToken = try #require(web["id_token"]?.stringValue)
            let fromID = try await Self.exchangeToken(client, subject: idToken, type: "urn:ietf:params:oauth:token-type:id_token")
            #expect(fromID.status == .ok && fromID.body["scope"]?.stringValue == "openid", "\(fromID.body)")

            // What takes the original back takes the exchanged token back: its refresh family revoked.
            let refresh = try #require(web["refresh_token"]?.stringValue)
            let revoked = try await client.execute(
                uri: "/oauth2/revoke", method: .post, headers: Self.basic("web", Self.webSecret), body: ByteBuffer(string: Self.encode(["token": refresh]))
            )
            #expect(revoked.status == .ok)
            #expect(try await Self.introspect(client, token, id: "billing", secret: Self.billingSecret)["active"] == .bool(false))
            #expect(try await Self.exchangeToken(client, subject: access).body["error"]?.stringValue == "invalid_request")
        }
    }

    /// RFC 8693 section 2.1 and RFC 8707 section 2: `audience` and `resource` may repeat. One token is
    /// issued for all of the targets when each is allowed (`aud` an array, introspected by each of
    /// them), a target named twice counts once, and one target the policy does not allow refuses
    /// the whole request with `invalid_target`. Other parameters still may not repeat.
    @Test func severalAudiencesAndResourcesGetOneTokenWhenEachIsAllowed() async throws {
        let test = try await Self.oidcBroker(yaml: Self.exchangeYAML)
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let access = try #require(try await Self.signedInTokens(client)["access_token"]?.stringValue)
            func exchange(_ pairs: [(String, String)]) async throws -> (status: HTTPResponse.Status, body: [String: JSONValue]) {
                var allowed = CharacterSet.alphanumerics
                allowed.insert(charactersIn: "-._~")
                let base = [("grant_type", Self.exchangeGrant), ("subject_token", access), ("subject_token_type", Self.accessTokenType)]
                let body = (base + pairs).map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
                let response = try await client.execute(uri: "/oauth2/token", method: .post, headers: Self.basic("api", Self.apiSecret), body: ByteBuffer(string: body))
                return (response.status, try Self.object(response))
            }
            let both = try await exchange([("audience", "billing"), ("resource", "https://billing.example/api"), ("audience", "billing")])
            #expect(both.status == .ok, "\(both.body)")
            let token = try #require(both.body["access_token"]?.stringValue)
            #expect(try Self.claims(of: token)["aud"] == .array([.string("billing"), .string("https://billing.example/api")]))
            let seen = try await Self.introspect(client, token, id: "billing", secret: Self.billingSecret)
            #expect(seen["active"] == .bool(true) && seen["aud"] == .array([.string("billing"), .string("https://billing.example/api")]))
            #expect(try await Self.introspect(client, token, id: "other", secret: Self.otherSecret)["active"] == .bool(false))

            let mixed = try await exchange([("audience", "billing"), ("audience", "ledger")])
            #expect(mixed.status == .badRequest && mixed.body["error"] == .string("invalid_target"), "\(mixed.body)")
            let twice = try await exchange([("audience", "billing"), ("subject_token", access)])
            #expect(twice.status == .badRequest && twice.body["error"] == .string("invalid_request"))
        }
    }

    @Test func anActorTokenMakesADelegationAndChainsNestEarlierActors() async throws {
        let test = try await Self.oidcBroker(yaml: Self.exchangeYAML)
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let web = try await Self.signedInTokens(client)
            let access = try #require(web["access_token"]?.stringValue)
            let own = try await Self.token(client, ["grant_type": "client_credentials", "scope": "jobs"], id: "api", secret: Self.apiSecret)
            let actor = try #require(own.body["access_token"]?.stringValue)
            let delegated = try await Self.exchangeToken(
                client, subject: access, extra: ["audience": "billing", "actor_token": actor, "actor_token_type": Self.accessTokenType]
            )
            #expect(delegated.status == .ok, "\(delegated.body)")
            let first = try Self.claims(of: try #require(delegated.body["access_token"]?.stringValue))
            #expect(first["act"] == .object(["sub": "api", "client_id": "api"]))
            let delegatedToken = try #require(delegated.body["access_token"]?.stringValue)
            // The delegated token is billing's: api cannot exchange it again, nor use it at the broker's own resources.
            #expect(try await Self.exchangeToken(client, subject: delegatedToken).body["error"]?.stringValue == "invalid_request")
            let userinfo = try await client.execute(uri: "/oauth2/userinfo", method: .get, headers: [.authorization: "Bearer \(delegatedToken)"])
            #expect(userinfo.status == .unauthorized)
            // billing, calling on as the person with billing's own client token as actor: the earlier actor nests.
            let billingOwn = try await Self.token(client, ["grant_type": "client_credentials"], id: "billing", secret: Self.billingSecret)
            #expect(billingOwn.status == .badRequest)  // billing may not use client credentials: api's token acts instead
            let again = try await Self.exchangeToken(
                client, subject: delegatedToken, extra: ["audience": "ledger", "actor_token": actor, "actor_token_type": "urn:ietf:params:oauth:token-type:jwt"],
                id: "billing", secret: Self.billingSecret
            )
            #expect(again.status == .ok, "\(again.body)")
            let second = try Self.claims(of: try #require(again.body["access_token"]?.stringValue))
            #expect(second["act"] == .object(["sub": "api", "client_id": "api", "act": .object(["sub": "api", "client_id": "api"])]))
            #expect(second["sub"] == first["sub"] && second["aud"] == .string("ledger") && second["client_id"] == .string("billing"))
            // An actor token without its type is malformed.
            let untyped = try await Self.exchangeToken(client, subject: access, extra: ["audience": "billing", "actor_token": actor])
            #expect(untyped.status == .badRequest && untyped.body["error"]?.stringValue == "invalid_request")
        }
    }

    @Test func tokenExchangeRefusesAsRFC8693Says() async throws {
        let test = try await Self.oidcBroker(yaml: Self.exchangeYAML)
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let web = try await Self.signedInTokens(client)
            let access = try #require(web["access_token"]?.stringValue)
            func error(_ result: (status: HTTPResponse.Status, body: [String: JSONValue])) -> String? {
                result.status == .badRequest ? result.body["error"]?.stringValue : "status \(result.status.code)"
            }
            // Widening the scope, a target the policy does not name, a relative resource, no target.
            #expect(try await error(Self.exchangeToken(client, subject: access, extra: ["audience": "billing", "scope": "openid email"])) == "invalid_scope")
            #expect(try await error(Self.exchangeToken(client, subject: access, extra: ["audience": "other"])) == "invalid_target")
            #expect(try await error(Self.exchangeToken(client, subject: access, extra: ["resource": "/billing"])) == "invalid_target")
            #expect(try await error(Self.exchangeToken(client, subject: access, extra: [:])) == "invalid_request")
            // Missing or unsupported parameters.
            #expect(
                try await error(Self.token(client, ["grant_type": Self.exchangeGrant, "audience": "billing"], id: "api", secret: Self.apiSecret)) == "invalid_request")
            #expect(try await error(Self.exchangeToken(client, subject: access, type: "urn:ietf:params:oauth:token-type:saml2")) == "invalid_request")
            #expect(
                try await error(
                    Self.exchangeToken(client, subject: access, extra: ["audience": "billing", "requested_token_type": "urn:ietf:params:oauth:token-type:refresh_token"]))
                    == "invalid_request")
            // A subject token that is not valid, or of an app whose tokens this client may not present.
            #expect(try await error(Self.exchangeToken(client, subject: access + "x")) == "invalid_request")
            #expect(try await error(Self.exchangeToken(client, subject: try #require(web["refresh_token"]?.stringValue))) == "invalid_request")
            let others = try await Self.token(client, ["grant_type": "client_credentials"], id: "other", secret: Self.otherSecret)
            #expect(try await error(Self.exchangeToken(client, subject: try #require(others.body["access_token"]?.stringValue))) == "invalid_request")
            // Clients the policy does not allow: one without tokenExchange, and a public one.
            #expect(try await error(Self.exchangeToken(client, subject: access, id: "web", secret: Self.webSecret)) == "unauthorized_client")
            let spa = try await client.execute(
                uri: "/oauth2/token", method: .post, headers: Self.form,
                body: ByteBuffer(
                    string: Self.encode([
                        "grant_type": Self.exchangeGrant, "client_id": "spa", "subject_token": access, "subject_token_type": Self.accessTokenType, "audience": "billing",
                    ]))
            )
            #expect(try spa.status == .badRequest && Self.object(spa)["error"]?.stringValue == "unauthorized_client")
            // An expired subject token.
            test.clock.advance(by: 3600)
            #expect(try await error(Self.exchangeToken(client, subject: access)) == "invalid_request")
        }
    }
}
