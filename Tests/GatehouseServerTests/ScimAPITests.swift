import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// SCIM 2.0 over HTTP (RFC 7644): client tokens, Users and Groups through the request sequences
/// Entra ID and Okta document, filters, paging, ETags, and where provisioning meets sign-in:
/// deprovisioning ends what the account holds, links, `provisionedOnly` and the groups claim.
extension GatehouseServerTests {
    static let scimYAML = """
        admin:
          tokens:
            - name: ops
              token: ${ADMIN_TOKEN}
        scim:
          enabled: true
          links:
            - provider: bank
              attribute: externalId
              claim: subject
        providers:
          - id: bank
            type: named-subject
        apps:
          - id: notes
            policy:
              identityProviders: [bank]
              selfRegistration: true
              allowedScopes: [openid, profile, groups, offline_access]
              defaultScopes: [openid, groups, offline_access]
          - id: payroll
            policy:
              identityProviders: [bank]
              selfRegistration: true
              provisionedOnly: true
        """

    struct ScimFixture {
        let admin: AdminFixture
        let token: String
        var test: TestBroker { admin.test }
        var headers: HTTPFields { [.authorization: "Bearer \(token)", .contentType: "application/scim+json"] }
    }

    static func scimBroker() async throws -> ScimFixture {
        let fixture = try await adminBroker(yaml: scimYAML)
        let (_, token) = try await fixture.test.broker.scim.createClient(id: "entra", name: "Entra ID", createdBy: "test", auditDetails: [:])
        return ScimFixture(admin: fixture, token: token)
    }

    static func scim(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ fixture: ScimFixture, body: String? = nil, headers extra: HTTPFields = [:]
    )
        async throws -> (status: HTTPResponse.Status, body: [String: JSONValue], headers: HTTPFields)
    {
        var headers = fixture.headers
        for field in extra { headers[field.name] = field.value }
        let response = try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        let object = response.body.readableBytes == 0 ? [:] : try JSONDecoder().decode([String: JSONValue].self, from: Data(buffer: response.body))
        return (response.status, object, response.headers)
    }

    static func user(_ userName: String, externalId: String, active: Bool = true) -> String {
        """
        {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
         "externalId":"\(externalId)","userName":"\(userName)","active":\(active),"displayName":"\(userName)",
         "emails":[{"primary":true,"type":"work","value":"\(userName)"}],"name":{"formatted":"Ada Lovelace","familyName":"Lovelace","givenName":"Ada"},
         "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Engines"}}
        """
    }

    @Test func scimNeedsAClientTokenAndSaysSoInSCIMsErrorFormat() async throws {
        let fixture = try await Self.scimBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.admin.app.test(.router) { client in
            let none = try await client.execute(uri: "/scim/v2/Users", method: .get)
            #expect(none.status == .unauthorized)
            #expect(none.headers[.contentType] == "application/scim+json")
            let error = try Self.object(none)
            #expect(error["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"] && error["status"] == "401")
            #expect(try await client.execute(uri: "/scim/v2/Users", method: .get, headers: [.authorization: "Bearer not-a-token"]).status == .unauthorized)
            // The admin API's token is not a SCIM token.
            #expect(try await client.execute(uri: "/scim/v2/Users", method: .get, headers: [.authorization: "Bearer \(Self.adminToken)"]).status == .unauthorized)
            let config = try await Self.scim(client, .get, "/scim/v2/ServiceProviderConfig", fixture)
            #expect(config.status == .ok)
            #expect(config.body["patch"] == ["supported": true] && config.body["bulk"]?.objectValue?["supported"] == false)
            let types = try await Self.scim(client, .get, "/scim/v2/ResourceTypes", fixture)
            #expect(types.body["totalResults"] == 2)
            let userSchema = try await Self.scim(client, .get, "/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:User", fixture)
            #expect(userSchema.status == .ok && userSchema.body["name"] == "User")
            // Removing the client stops its token at once.
            let removed = try await client.execute(uri: "/admin/v1/scim-clients/entra", method: .delete, headers: Self.admin)
            #expect(removed.status == .noContent)
            #expect(try await Self.scim(client, .get, "/scim/v2/Users", fixture).status == .unauthorized)
        }
    }

    /// Entra ID's documented provisioning sequence: look the user up by filter, create, read back,
    /// update with PATCH (capitalised ops, string booleans, filtered paths), deprovision with
    /// `active: false`, then delete.
    @Test func entraIDsRequestSequenceProvisionsUpdatesAndDeprovisions() async throws {
        let fixture = try await Self.scimBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.admin.app.test(.router) { client in
            let lookup = try await Self.scim(client, .get, "/scim/v2/Users?filter=userName+eq+%22ada%40example.com%22&startIndex=1&count=100", fixture)
            #expect(lookup.status == .ok && lookup.body["totalResults"] == 0 && lookup.body["Resources"] == [])

            let created = try await Self.scim(client, .post, "/scim/v2/Users", fixture, body: Self.user("ada@example.com", externalId: "oid-ada"))
            #expect(created.status == .created)
            let id = try #require(created.body["id"]?.stringValue)
            #expect(created.headers[.location] == "http://127.0.0.1:8080/scim/v2/Users/\(id)")
            #expect(created.headers[.eTag] == #"W/"1""#)
            #expect(created.body["active"] == true && created.body["meta"]?.objectValue?["resourceType"] == "User")
            #expect(created.body["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"] == ["department": "Engines"])
            // The same userName again, in another case: taken.
            let twice = try await Self.scim(client, .post, "/scim/v2/Users", fixture, body: Self.user("ADA@example.com", externalId: "oid-2"))
            #expect(twice.status == .conflict && twice.body["scimType"] == "uniqueness")

            let found = try await Self.scim(client, .get, "/scim/v2/Users?filter=userName+eq+%22ADA%40EXAMPLE.COM%22", fixture)
            #expect(found.body["totalResults"] == 1)

            let patch = """
                {"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
                  {"op":"Replace","path":"displayName","value":"Ada King"},
                  {"op":"Add","path":"emails[type eq \\"work\\"].value","value":"ada.king@example.com"},
                  {"op":"Add","path":"phoneNumbers[type eq \\"mobile\\"].value","value":"+44 20 0000"},
                  {"op":"Replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"Analytics"},
                  {"op":"Replace","path":"name.givenName","value":"Augusta"}]}
                """
            let patched = try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: patch)
            #expect(patched.status == .ok)
            #expect(patched.body["displayName"] == "Ada King")
            #expect(patched.body["emails"] == [["primary": true, "type": "work", "value": "ada.king@example.com"]])
            #expect(patched.body["phoneNumbers"] == [["type": "mobile", "value": "+44 20 0000"]])
            #expect(patched.body["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"] == ["department": "Analytics"])
            #expect(patched.body["name"]?.objectValue?["givenName"] == "Augusta")
            #expect(patched.headers[.eTag] == #"W/"2""#)

            // An account exists for the user; it signs in through the linked provider (externalId ↔ subject).
            let signedIn = try await fixture.test.signIn(
                FlowRequest(appID: "notes", providerID: "bank", scopes: ["openid", "offline_access"]), answer: ["subject": "oid-ada"])
            let accountID = try #require(signedIn.account?.id)
            let users = try await fixture.test.store.scimUsers(accountID: accountID)
            #expect(users.map(\.id) == [id], "the sign-in joined the provisioned account")

            // Entra ID deprovisions with a string "False".
            let deprovision = #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"False"}]}"#
            let inactive = try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: deprovision)
            #expect(inactive.status == .ok && inactive.body["active"] == false)
            // At once: no token works, no sign-in, no refresh.
            await #expect(throws: BrokerError.self) { _ = try await fixture.test.broker.oauth.verifyAccessToken(signedIn.tokens.accessToken) }
            let refused = await thrownError { _ = try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank"), answer: ["subject": "oid-ada"]) }
            #expect(refused?.reason == "account_disabled")
            let refresh = try #require(signedIn.tokens.refreshToken)
            let renewed = await thrownError {
                _ = try await fixture.test.broker.oauth.token(
                    try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "notes"], basic: nil))
            }
            #expect(renewed?.code == .invalidGrant)
            let disabled = try await fixture.test.store.auditEvents(type: "account.disabled", appID: nil, accountID: accountID, since: nil, limit: 5)
            #expect(disabled.first?.details["scimClient"] == "entra" && disabled.first?.details["reason"] == "scim_inactive")

            // Active again: sign-ins work again (after the disable's reach).
            let reactivate = #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":true}}]}"#
            #expect(try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: reactivate).body["active"] == true)
            fixture.test.clock.advance(by: 121)
            #expect(try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank"), answer: ["subject": "oid-ada"]).account?.id == accountID)

            let deleted = try await Self.scim(client, .delete, "/scim/v2/Users/\(id)", fixture)
            #expect(deleted.status == .noContent)
            #expect(try await Self.scim(client, .get, "/scim/v2/Users/\(id)", fixture).status == .notFound)
            // Deleting deprovisions: the account stays, disabled.
            #expect(try await fixture.test.store.account(id: accountID)?.isDisabled == true)
        }
    }

    /// Okta's sequence: groups pushed with members, membership changed with PATCH add and remove
    /// (Entra's remove names the members as the value), the groups claim following it, and a user
    /// replaced with PUT under If-Match.
    @Test func groupsPushedByOktaBecomeTheGroupsClaimAndFollowMembershipChanges() async throws {
        let fixture = try await Self.scimBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.admin.app.test(.router) { client in
            let ada = try #require(try await Self.scim(client, .post, "/scim/v2/Users", fixture, body: Self.user("ada", externalId: "okta-ada")).body["id"]?.stringValue)
            let bob = try #require(try await Self.scim(client, .post, "/scim/v2/Users", fixture, body: Self.user("bob", externalId: "okta-bob")).body["id"]?.stringValue)
            let group = try await Self.scim(
                client, .post, "/scim/v2/Groups", fixture,
                body: #"{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Engineering","members":[{"value":"\#(ada)","display":"ada"}]}"#)
            #expect(group.status == .created)
            let groupID = try #require(group.body["id"]?.stringValue)
            #expect(group.body["members"]?.arrayValue?.first?.objectValue?["value"] == .string(ada))
            // A member that is not a user of this client is refused.
            let stranger = try await Self.scim(
                client, .post, "/scim/v2/Groups", fixture,
                body: #"{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"X","members":[{"value":"nobody"}]}"#)
            #expect(stranger.status == .badRequest && stranger.body["scimType"] == "invalidValue")

            // The user reads its groups; the group claim carries them.
            #expect(try await Self.scim(client, .get, "/scim/v2/Users/\(ada)", fixture).body["groups"]?.arrayValue?.first?.objectValue?["display"] == "Engineering")
            let signedIn = try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank", scopes: ["openid", "groups"]), answer: ["subject": "okta-ada"])
            let claims = try await fixture.test.broker.oauth.userinfo(accessToken: PresentedToken(scheme: .bearer, token: signedIn.tokens.accessToken))
            #expect(claims["groups"] == ["Engineering"])

            let add = #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"members","value":[{"value":"\#(bob)"}]}]}"#
            #expect(try await Self.scim(client, .patch, "/scim/v2/Groups/\(groupID)", fixture, body: add).body["members"]?.arrayValue?.count == 2)
            let removeAda =
                #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Remove","path":"members","value":[{"value":"\#(ada)"}]}]}"#
            #expect(try await Self.scim(client, .patch, "/scim/v2/Groups/\(groupID)", fixture, body: removeAda).body["members"]?.arrayValue?.count == 1)
            let removeBob = #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"members[value eq \"\#(bob)\"]"}]}"#
            #expect(try await Self.scim(client, .patch, "/scim/v2/Groups/\(groupID)", fixture, body: removeBob).body["members"] == [])
            let after = try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank", scopes: ["openid", "groups"]), answer: ["subject": "okta-ada"])
            let later = try await fixture.test.broker.oauth.userinfo(accessToken: PresentedToken(scheme: .bearer, token: after.tokens.accessToken))
            #expect(later["groups"] == nil)

            // PUT under If-Match: the current version replaces, an old one is refused.
            let current = try await Self.scim(client, .get, "/scim/v2/Users/\(bob)", fixture)
            let etag = try #require(current.headers[.eTag])
            let replaced = try await Self.scim(
                client, .put, "/scim/v2/Users/\(bob)", fixture, body: Self.user("robert", externalId: "okta-bob"), headers: [.ifMatch: etag])
            #expect(replaced.status == .ok && replaced.body["userName"] == "robert")
            let stale = try await Self.scim(client, .put, "/scim/v2/Users/\(bob)", fixture, body: Self.user("bobby", externalId: "okta-bob"), headers: [.ifMatch: etag])
            #expect(stale.status == .preconditionFailed)
            // Deleting a user takes it out of its groups.
            #expect(try await Self.scim(client, .patch, "/scim/v2/Groups/\(groupID)", fixture, body: add).body["members"]?.arrayValue?.count == 1)
            #expect(try await Self.scim(client, .delete, "/scim/v2/Users/\(bob)", fixture).status == .noContent)
            #expect(try await Self.scim(client, .get, "/scim/v2/Groups/\(groupID)", fixture).body["members"] == [])
        }
    }

    @Test func aUserProvisionedInactiveHasADisabledAccountFromTheStart() async throws {
        let fixture = try await Self.scimBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.admin.app.test(.router) { client in
            let created = try await Self.scim(client, .post, "/scim/v2/Users", fixture, body: Self.user("zoe", externalId: "oid-z", active: false))
            #expect(created.status == .created && created.body["active"] == false)
            let id = try #require(created.body["id"]?.stringValue)
            let accountID = try #require(try await fixture.test.store.scimResource(id: id, clientID: "entra", kind: .user)?.accountID)
            let account = try await fixture.test.store.account(id: accountID)
            #expect(account?.isDisabled == true && account?.disabledBy == "scim:entra")
            #expect(try await fixture.test.store.auditEvents(type: "account.disabled", appID: nil, accountID: accountID, since: nil, limit: 5).count == 1)
            // Activated, the account is enabled.
            let active = #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":true}]}"#
            #expect(try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: active).status == .ok)
            #expect(try await fixture.test.store.account(id: accountID)?.isDisabled == false)
        }
    }

    @Test func filtersPagesAndProjectionsFollowRFC7644() async throws {
        let fixture = try await Self.scimBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.admin.app.test(.router) { client in
            for index in 1...5 {
                fixture.test.clock.advance(by: 1)
                _ = try await Self.scim(
                    client, .post, "/scim/v2/Users", fixture, body: Self.user("user\(index)@example.com", externalId: "ext-\(index)", active: index != 3))
            }
            func total(_ filter: String) async throws -> JSONValue? {
                let encoded = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? filter
                return try await Self.scim(client, .get, "/scim/v2/Users?filter=\(encoded)", fixture).body["totalResults"]
            }
            #expect(try await total(#"userName sw "user""#) == 5)
            #expect(try await total(#"userName co "3@""#) == 1)
            #expect(try await total(#"userName ew ".COM""#) == 5)
            #expect(try await total(#"active eq false"#) == 1)
            #expect(try await total(#"externalId pr and not (active eq false)"#) == 4)
            #expect(try await total(#"externalId eq "ext-1" or externalId eq "ext-2""#) == 2)
            #expect(try await total(#"externalId eq "EXT-1""#) == 0, "externalId is caseExact")
            #expect(try await total(#"emails[type eq "work" and value co "user4"]"#) == 1)
            #expect(try await total(#"emails.value ew "5@example.com""#) == 1)
            #expect(try await total(#"meta.resourceType eq "User""#) == 5)
            let bad = try await Self.scim(client, .get, "/scim/v2/Users?filter=userName%20zz%20%22x%22", fixture)
            #expect(bad.status == .badRequest && bad.body["scimType"] == "invalidFilter")

            let page = try await Self.scim(client, .get, "/scim/v2/Users?startIndex=2&count=2", fixture)
            #expect(page.body["totalResults"] == 5 && page.body["startIndex"] == 2 && page.body["itemsPerPage"] == 2)
            #expect(page.body["Resources"]?.arrayValue?.first?.objectValue?["userName"] == "user2@example.com")
            let projected = try await Self.scim(client, .get, "/scim/v2/Users?count=1&attributes=userName", fixture)
            let first = try #require(projected.body["Resources"]?.arrayValue?.first?.objectValue)
            #expect(Set(first.keys) == ["id", "schemas", "userName"])
            let excluded = try await Self.scim(client, .get, "/scim/v2/Users?count=1&excludedAttributes=emails,name", fixture)
            #expect(excluded.body["Resources"]?.arrayValue?.first?.objectValue?["emails"] == nil)
            #expect(try await Self.scim(client, .get, "/scim/v2/Users?count=abc", fixture).status == .badRequest)
        }
    }

    /// What a SCIM client may not do: keep a password, lift an administrator's disable, make its
    /// groups a console admission, link an identity to an inactive user; and a leaked token is rotated.
    @Test func aSCIMClientStaysWithinWhatProvisioningMayDo() async throws {
        let fixture = try await Self.scimBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.admin.app.test(.router) { client in
            let id = try #require(try await Self.scim(client, .post, "/scim/v2/Users", fixture, body: Self.user("ada", externalId: "oid-7")).body["id"]?.stringValue)
            let password =
                #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"password":"Sekrit-123","nickName":"A"}},{"op":"add","path":"favouriteColour","value":"red"}]}"#
            let patched = try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: password)
            #expect(patched.status == .ok && patched.body["password"] == nil && patched.body["favouriteColour"] == nil && patched.body["nickName"] == "A")
            #expect(try await fixture.test.store.scimResource(id: id, clientID: "entra", kind: .user)?.attributes["password"] == nil)

            // An administrator's disable stands against the client's re-activation.
            let accountID = try #require(try await fixture.test.store.scimResource(id: id, clientID: "entra", kind: .user)?.accountID)
            #expect(try await client.execute(uri: "/admin/v1/users/\(accountID)/disable", method: .post, headers: Self.admin).status == .ok)
            let active = #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":true}}]}"#
            #expect(try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: active).status == .ok)
            #expect(try await fixture.test.store.account(id: accountID)?.disabledBy == "admin")
            let inactive = #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":false}}]}"#
            #expect(try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: inactive).status == .ok)
            #expect(try await client.execute(uri: "/admin/v1/users/\(accountID)/enable", method: .post, headers: Self.admin).status == .ok)
            // The client said inactive last: a repeat of it disables again (a lost disable is made good).
            #expect(try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: inactive).status == .ok)
            #expect(try await fixture.test.store.account(id: accountID)?.disabledBy == "scim:entra")
            // Deprovisioned first, then disabled by an administrator: the administrator's disable
            // stands when the client re-activates.
            #expect(try await client.execute(uri: "/admin/v1/users/\(accountID)/disable", method: .post, headers: Self.admin).status == .ok)
            #expect(try await fixture.test.store.account(id: accountID)?.disabledBy == "admin")
            #expect(try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: active).status == .ok)
            #expect(try await fixture.test.store.account(id: accountID)?.isDisabled == true)
            #expect(try await Self.scim(client, .patch, "/scim/v2/Users/\(id)", fixture, body: inactive).status == .ok)
            // An inactive user links nobody.
            #expect(
                await thrownError { _ = try await fixture.test.signIn(FlowRequest(appID: "payroll", providerID: "bank"), answer: ["subject": "oid-7"]) }?.reason
                    == "not_provisioned")

            // The console's app never gets SCIM groups, whatever a client names them.
            let provisioned = fixture.test.broker.oauth.provisioned
            let group = #"{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"admins","members":[{"value":"\#(id)"}]}"#
            #expect(try await Self.scim(client, .post, "/scim/v2/Groups", fixture, body: group).status == .created)
            #expect(try await provisioned.adding(groupsOf: accountID, to: [:], scopes: ["groups"], app: "notes")["groups"] == ["admins"])
            #expect(try await provisioned.adding(groupsOf: accountID, to: [:], scopes: ["groups"], app: ConsoleConfig.appID)["groups"] == nil)

            // Rotation: the new token works, the old one stops, the users stay.
            let rotated = try await client.execute(uri: "/admin/v1/scim-clients/entra/token", method: .post, headers: Self.admin)
            let token = try #require(try Self.object(rotated)["token"]?.stringValue)
            #expect(try await Self.scim(client, .get, "/scim/v2/Users", fixture).status == .unauthorized)
            let fresh = ScimFixture(admin: fixture.admin, token: token)
            #expect(try await Self.scim(client, .get, "/scim/v2/Users", fresh).body["totalResults"] == 1)
        }
    }

    @Test func anAppForProvisionedAccountsOnlyRefusesEveryoneElse() async throws {
        let fixture = try await Self.scimBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.admin.app.test(.router) { client in
            _ = try await Self.scim(client, .post, "/scim/v2/Users", fixture, body: Self.user("ada", externalId: "emp-1"))
        }
        #expect(try await fixture.test.signIn(FlowRequest(appID: "payroll", providerID: "bank"), answer: ["subject": "emp-1"]).account != nil)
        let stranger = await thrownError { _ = try await fixture.test.signIn(FlowRequest(appID: "payroll", providerID: "bank"), answer: ["subject": "walk-in"]) }
        #expect(stranger?.code == .accessDenied && stranger?.reason == "not_provisioned")
        #expect(try await fixture.test.store.count(table: .accounts) == 1, "the refused identity made no account")
        // The same person may use an app that takes anyone.
        #expect(try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank"), answer: ["subject": "walk-in"]).account != nil)

        // A refresh token from when the account was provisioned renews nothing once no client keeps it.
        let signedIn = try await fixture.test.signIn(
            FlowRequest(appID: "payroll", providerID: "bank", scopes: ["openid", "offline_access"]), answer: ["subject": "emp-1"])
        let refresh = try #require(signedIn.tokens.refreshToken)
        try await fixture.test.broker.scim.deleteClient(id: "entra", auditDetails: [:])
        let renewed = await thrownError {
            _ = try await fixture.test.broker.oauth.token(
                try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "payroll"], basic: nil))
        }
        #expect(renewed?.code == .invalidGrant && renewed?.reason == "not_provisioned")
    }

    /// A person who signed in before the IdP provisioned them keeps their account: the new SCIM user
    /// is that account (a `subject` link rule names the identity), so an app for provisioned accounts
    /// admits them, and deprovisioning disables that very account.
    @Test func aUserProvisionedAfterTheFirstSignInIsThatAccount() async throws {
        let fixture = try await Self.scimBroker()
        defer { fixture.test.temporary.remove() }
        let before = try #require(try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank"), answer: ["subject": "emp-7"]).account)
        try await fixture.admin.app.test(.router) { client in
            let created = try await Self.scim(client, .post, "/scim/v2/Users", fixture, body: Self.user("grace", externalId: "emp-7"))
            #expect(created.status == .created)
            #expect(try await fixture.test.store.count(table: .accounts) == 1, "no second account was made")
            let admitted = try await fixture.test.signIn(FlowRequest(appID: "payroll", providerID: "bank"), answer: ["subject": "emp-7"])
            #expect(admitted.account?.id == before.id)
            let userID = created.body["id"]?.stringValue ?? ""
            let body = #"{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}"#
            #expect(try await Self.scim(client, .patch, "/scim/v2/Users/\(userID)", fixture, body: body).status == .ok)
            #expect(try await fixture.test.store.account(id: before.id)?.isDisabled == true)
            // Another user naming the same person joins nothing: the account is taken.
            let again = try await Self.scim(client, .post, "/scim/v2/Users", fixture, body: Self.user("grace2", externalId: "emp-7"))
            #expect(again.status == .created)
            #expect(try await fixture.test.store.scimUsers(accountID: before.id).count == 1)
        }
    }
}
