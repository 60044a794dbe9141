import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import LocalPassword
import NIOCore
import Prometheus
import Testing

/// A provider that may run stateless, registered by these tests (the custom-API plugin's issue repeats
/// the stateless checks with the real plugin): asks for `{"subject"}` and identifies whoever is named.
struct NamedSubjectProvider: IdentityProvider {
    let id: String
    var traits: PluginTraits { PluginTraits(statelessCapable: true) }
    func begin(in context: FlowContext) async throws -> FlowStep {
        .challenge(Challenge(type: "subject"))
    }
    func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        .identified(ExternalIdentity(providerID: id, subject: try answer.string("subject"), username: try answer.string("subject"), methods: ["user"]))
    }
    enum Factory: PluginFactory {
        struct Config: Decodable, Sendable {}
        static let typeName = "named-subject"
        static let challenges = [ChallengeDescription(type: "subject", summary: "Whoever to be.", inputs: [ChallengeInput(name: "subject", label: "Subject")])]
        static func make(id: String, config: Config, environment: PluginEnvironment) throws -> NamedSubjectProvider { NamedSubjectProvider(id: id) }
    }
}

extension GatehouseServerTests {
    static let adminToken = "admin-token-admin-token-admin-token-0001"
    static let admin: HTTPFields = [.authorization: "Bearer \(adminToken)", .contentType: "application/json"]

    static let adminYAML = """
        admin:
          tokens:
            - name: ops
              token: ${ADMIN_TOKEN}
        providers:
          - id: local
            type: local
            config: {bcryptCost: 4}
          - id: bank
            type: named-subject
        apps:
          - id: notes
            policy:
              identityProviders: [local, bank]
              lockout:
                maxFailedAttemptsPerAccount: 3
        """

    struct AdminFixture {
        let test: TestBroker
        let registry: PrometheusCollectorRegistry
        var app: some ApplicationProtocol { Application(router: GatehouseServer.makeRouter(broker: test.broker, metrics: registry)) }
    }

    static func adminBroker(yaml: String = adminYAML) async throws -> AdminFixture {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        registry.register(NamedSubjectProvider.Factory.self)
        let metrics = PrometheusCollectorRegistry()
        let test = try await TestBroker.make(
            yaml: yaml, registry: registry, environment: ["ADMIN_TOKEN": adminToken], metrics: BrokerMetrics(factory: PrometheusMetricsFactory(registry: metrics))
        )
        return AdminFixture(test: test, registry: metrics)
    }

    static func statelessStart(_ client: any TestClientProtocol) async throws -> TestResponse {
        try await client.execute(uri: "/v1/flows", method: .post, body: json(#"{"app":"notes","provider":"bank","stateless":true}"#))
    }

    @Test func statelessToggleTakesEffectWithoutRestartAndIsAudited() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.app.test(.router) { client in
            let refused = try await Self.statelessStart(client)
            #expect(refused.status == .forbidden)
            #expect(try Self.object(refused)["error"] == "stateless_disabled")

            let on = try await client.execute(
                uri: "/admin/v1/apps/notes/policy", method: .patch, headers: Self.admin, body: Self.json(#"{"statelessAuthentication": true}"#))
            #expect(on.status == .ok)
            guard case .object(let policy) = try Self.object(on)["policy"] else { Issue.record("no policy"); return }
            #expect(policy["statelessAuthentication"] == true)
            #expect(policy["identityProviders"] == ["local", "bank"])

            let started = try await Self.statelessStart(client)
            #expect(started.status == .created)
            let done = try await client.execute(
                uri: "/v1/flows/\(try Self.object(started)["flow"]!.stringValue!)", method: .post, body: Self.json(#"{"answer":{"subject":"eid-7"}}"#)
            )
            let tokens = try Self.object(done)
            #expect(tokens["status"] == "completed")
            guard case .object(let issued) = tokens["tokens"] else { Issue.record("no tokens"); return }
            #expect(issued["refresh_token"] == nil)
            #expect(try await fixture.test.broker.keyring.verify(issued["access_token"]!.stringValue!).stateless)

            let off = try await client.execute(
                uri: "/admin/v1/apps/notes/policy", method: .patch, headers: Self.admin, body: Self.json(#"{"statelessAuthentication": false}"#))
            #expect(off.status == .ok)
            #expect(try Self.object(try await Self.statelessStart(client))["error"] == "stateless_disabled")

            let events = try await fixture.test.store.auditEvents(type: "policy.updated", appID: "notes", accountID: nil, since: nil, limit: 10)
            #expect(events.count == 2)
            #expect(events.allSatisfy { $0.details["admin"] == "ops" })
            #expect(events.last?.details["before"]?.contains(#""statelessAuthentication":false"#) == true)
            #expect(events.last?.details["after"]?.contains(#""statelessAuthentication":true"#) == true)
            #expect(try await fixture.test.store.app(id: "notes")?.managedBy == .admin)
        }
    }

    /// `GET /admin/v1/providers/{id}/directory`: a searchable provider's people, with the account each
    /// is linked to; a provider that cannot search, an unknown one and a bad query are refused.
    @Test func anAdminSearchesAProvidersPeopleWithTheirAccounts() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        let provider = try #require(fixture.test.broker.plugins.passwordKeepers["local"])
        _ = try await provider.addUser(username: "alice.liddell", password: "correct horse battery", policy: PasswordPolicy())
        _ = try await provider.addUser(username: "bob", password: "correct horse battery", policy: PasswordPolicy())
        let (_, account) = try await fixture.test.signIn(
            FlowRequest(appID: "notes", providerID: "local"), answer: ["username": "alice.liddell", "password": "correct horse battery"])
        try await fixture.app.test(.router) { client in
            let found = try Self.object(try await client.execute(uri: "/admin/v1/providers/local/directory?q=E.LIDDELL", method: .get, headers: Self.admin))
            // A `+` is a space (form encoding): a query of spaces only is an empty one.
            #expect(try await client.execute(uri: "/admin/v1/providers/local/directory?q=+", method: .get, headers: Self.admin).status == .badRequest)
            let people = try #require(found["people"]?.arrayValue)
            #expect(people.count == 1 && people.first?.objectValue?["username"] == "alice.liddell" && found["truncated"] == .bool(false))
            #expect(people.first?.objectValue?["accountID"]?.stringValue == account?.id)
            let refusals: [(String, HTTPResponse.Status)] = [
                ("/admin/v1/providers/bank/directory?q=x", .badRequest), ("/admin/v1/providers/nobody/directory?q=x", .notFound),
                ("/admin/v1/providers/local/directory?q=", .badRequest), ("/admin/v1/providers/local/directory?q=x&limit=51", .badRequest),
                ("/admin/v1/providers/local/directory?q=x&limit=many", .badRequest),
            ]
            for (uri, status) in refusals {
                #expect(try await client.execute(uri: uri, method: .get, headers: Self.admin).status == status, "\(uri)")
            }
            #expect(try await client.execute(uri: "/admin/v1/providers/local/directory?q=a", method: .get).status == .unauthorized)
            // Who searched where is audited, without the text (a person's name).
            let events = try JSONDecoder().decode(
                [JSONValue].self,
                from: Data(buffer: try await client.execute(uri: "/admin/v1/audit?type=directory.searched", method: .get, headers: Self.admin).body))
            #expect(events.count == 1 && events.first?.objectValue?["details"]?.objectValue?["found"] == "1", "\(events)")
            #expect(!String(describing: events).lowercased().contains("liddell"))
        }
    }

    @Test func invalidPolicyUpdatesNameTheExactField() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.app.test(.router) { client in
            for (patch, field) in [
                (#"{"accessTokenLifetime": -5}"#, "policy.accessTokenLifetime"),
                (#"{"identityProviders": ["local", "nope"]}"#, "policy.identityProviders[1]"),
                (#"{"statelesAuthentication": true}"#, "policy.statelesAuthentication"),
                (#"{"passwordPolicy": {"minLength": 2}}"#, "policy.passwordPolicy.minLength"),
                (#"{"lockout": {"maxFailedAttemptsPerAccount": "many"}}"#, "policy.lockout.maxFailedAttemptsPerAccount"),
                (#"{"secondFactor": "local"}"#, "policy.secondFactor"),
                (#"{"identityProviders": ["local"], "statelessAuthentication": true}"#, "policy.statelessAuthentication"),
                (#"{"logout": {"postLogoutRedirectURIs": ["javascript:alert(1)"]}}"#, "policy.logout.postLogoutRedirectURIs[0]"),
            ] {
                let response = try await client.execute(uri: "/admin/v1/apps/notes/policy", method: .patch, headers: Self.admin, body: Self.json(patch))
                #expect(response.status == .badRequest, "\(patch)")
                #expect(try Self.object(response)["field"] == .string(field), "\(patch)")
            }
            let app = try #require(try await fixture.test.store.app(id: "notes"))
            #expect(app.version == 0)
            #expect(app.managedBy == .config)
        }
    }

    @Test func appsAreRefusedScriptRedirectsAndOverlongNamesWithTheExactField() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.app.test(.router) { client in
            let longName = String(repeating: "W", count: 1_600)
            for (body, field) in [
                (#"{"id":"evil","redirectURIs":["javascript:alert(1)"]}"#, "redirectURIs[0]"),
                (#"{"id":"evil","redirectURIs":["https://ok.example/cb","data:text/html,hi"]}"#, "redirectURIs[1]"),
                (#"{"id":"evil","name":"\#(longName)"}"#, "name"),
                (#"{"id":"evil","name":"Line\nbreak"}"#, "name"),
            ] {
                let created = try await client.execute(uri: "/admin/v1/apps", method: .post, headers: Self.admin, body: Self.json(body))
                #expect(created.status == .badRequest, "\(body.prefix(60))")
                #expect(try Self.object(created)["field"] == .string(field), "\(body.prefix(60))")
            }
            #expect(try await fixture.test.store.app(id: "evil") == nil)
            for (body, field) in [(#"{"redirectURIs":["vbscript:x"]}"#, "redirectURIs[0]"), (#"{"name":"\#(longName)"}"#, "name")] {
                let changed = try await client.execute(uri: "/admin/v1/apps/notes", method: .patch, headers: Self.admin, body: Self.json(body))
                #expect(changed.status == .badRequest)
                #expect(try Self.object(changed)["field"] == .string(field))
            }
            #expect(try await fixture.test.store.app(id: "notes")?.version == 0)
        }
    }

    @Test func adminAPINeedsItsCredentials() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.app.test(.router) { client in
            #expect(try await client.execute(uri: "/admin/v1/apps", method: .get).status == .unauthorized)
            let wrong = try await client.execute(uri: "/admin/v1/apps", method: .get, headers: [.authorization: "Bearer not-the-token"])
            #expect(wrong.status == .unauthorized)
            #expect(
                try await client.execute(uri: "/admin/v1/apps/notes/policy", method: .patch, body: Self.json(#"{"statelessAuthentication": true}"#)).status
                    == .unauthorized)
            #expect(try await fixture.test.store.app(id: "notes")?.policy.statelessAuthentication == false)
            #expect(try await client.execute(uri: "/admin/v1/apps", method: .get, headers: Self.admin).status == .ok)
        }
        // No credentials configured: the admin API is off.
        let off = try await Self.adminBroker(yaml: "providers: []\n")
        defer { off.test.temporary.remove() }
        try await off.app.test(.router) { client in
            let response = try await client.execute(uri: "/admin/v1/apps", method: .get, headers: Self.admin)
            #expect(response.status == .notFound)
            #expect(try Self.object(response)["error"] == "admin_api_disabled")
        }
    }

    @Test func createsAppsWithASecretShownOnceAndRotatesIt() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.app.test(.router) { client in
            let created = try await client.execute(
                uri: "/admin/v1/apps", method: .post, headers: Self.admin,
                body: Self.json(
                    #"{"id":"reports","name":"Reports","policy":{"identityProviders":["local"],"clientCredentialsGrant":true,"allowedScopes":["reports.read"],"defaultScopes":[]}}"#
                )
            )
            #expect(created.status == .created)
            let secret = try #require(try Self.object(created)["client_secret"]?.stringValue)
            #expect(secret.count == 43)
            let shown = try await client.execute(uri: "/admin/v1/apps/reports", method: .get, headers: Self.admin)
            #expect(!String(buffer: shown.body).contains(secret))
            #expect(try Self.object(shown)["confidential"] == true)
            #expect(try await Self.token(client, ["grant_type": "client_credentials", "scope": "reports.read"], id: "reports", secret: secret).status == .ok)
            let duplicate = try await client.execute(uri: "/admin/v1/apps", method: .post, headers: Self.admin, body: Self.json(#"{"id":"reports"}"#))
            #expect(duplicate.status == .conflict)
            let rotated = try await client.execute(uri: "/admin/v1/apps/reports/secret", method: .post, headers: Self.admin)
            let newSecret = try #require(try Self.object(rotated)["client_secret"]?.stringValue)
            fixture.test.clock.advance(by: 2)
            #expect(try await Self.token(client, ["grant_type": "client_credentials", "scope": "reports.read"], id: "reports", secret: secret).status == .unauthorized)
            #expect(try await Self.token(client, ["grant_type": "client_credentials", "scope": "reports.read"], id: "reports", secret: newSecret).status == .ok)
            let audit = try await fixture.test.store.auditEvents(type: nil, appID: "reports", accountID: nil, since: nil, limit: 10)
            #expect(audit.map(\.type) == ["app.secret_rotated", "app.created"])
            #expect(!audit.contains { $0.details.values.contains { $0.contains(secret) || $0.contains(newSecret) } })
            #expect(try await client.execute(uri: "/admin/v1/apps/reports", method: .delete, headers: Self.admin).status == .noContent)
            #expect(try await client.execute(uri: "/admin/v1/apps/reports", method: .get, headers: Self.admin).status == .notFound)
        }
    }

    @Test func bruteForceIsLockedOutAuditedAndCounted() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        let provider = try #require(fixture.test.broker.plugins.passwordKeepers["local"])
        _ = try await provider.addUser(username: "alice", password: "correct horse battery", policy: PasswordPolicy())
        try await fixture.app.test(.router) { client in
            var last: TestResponse?
            for index in 1...3 {
                let started = try Self.object(try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"notes","provider":"local"}"#)))
                last = try await client.execute(
                    uri: "/v1/flows/\(started["flow"]!.stringValue!)", method: .post, body: Self.json(#"{"answer":{"username":"alice","password":"guess \#(index)"}}"#)
                )
            }
            let locked = try #require(last)
            #expect(locked.status == .tooManyRequests)
            #expect(locked.headers[.retryAfter] == "300")
            let body = try Self.object(locked)
            #expect(body["error"] == "locked_out")
            #expect(body["lockedUntil"]?.stringValue?.hasSuffix("Z") == true)

            let events = try JSONDecoder().decode(
                [JSONValue].self, from: Data(buffer: try await client.execute(uri: "/admin/v1/audit?type=account.locked", method: .get, headers: Self.admin).body))
            #expect(events.count == 1)
            let failures = try JSONDecoder().decode(
                [JSONValue].self,
                from: Data(buffer: try await client.execute(uri: "/admin/v1/audit?type=signin.failure&app=notes", method: .get, headers: Self.admin).body))
            #expect(failures.count == 3)

            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains(#"gatehouse_lockouts_total{scope="account"} 1"#))
            #expect(metrics.contains(#"gatehouse_signins_total{provider="local",outcome="invalid_credentials"} 3"#))
            #expect(metrics.contains(#"gatehouse_http_requests_total{method="POST",route="/v1/flows/{flow}",status="429"} 1"#))
            #expect(metrics.contains("gatehouse_http_request_duration_seconds_bucket"))

            // An admin sees the lock and lifts it; alice gets in at once.
            let lockouts = try JSONDecoder().decode(
                [JSONValue].self, from: Data(buffer: try await client.execute(uri: "/admin/v1/lockouts", method: .get, headers: Self.admin).body))
            guard case .object(let lockout)? = lockouts.first else { Issue.record("no lockout listed"); return }
            #expect(lockout["key"] == "account:local:alice")
            let unlocked = try await client.execute(
                uri: "/admin/v1/lockouts/unlock", method: .post, headers: Self.admin, body: Self.json(#"{"key": "account:local:alice"}"#))
            #expect(unlocked.status == .noContent)
            let again = try await client.execute(
                uri: "/admin/v1/lockouts/unlock", method: .post, headers: Self.admin, body: Self.json(#"{"key": "account:local:alice"}"#))
            #expect(again.status == .notFound)
            let started = try Self.object(try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"notes","provider":"local"}"#)))
            let signedIn = try await client.execute(
                uri: "/v1/flows/\(started["flow"]!.stringValue!)", method: .post, body: Self.json(#"{"answer":{"username":"alice","password":"correct horse battery"}}"#)
            )
            #expect(try Self.object(signedIn)["status"] == "completed")
            #expect(try await fixture.test.store.auditEvents(type: "lockout.lifted", appID: nil, accountID: nil, since: nil, limit: 5).first?.details["admin"] == "ops")
        }
    }

    @Test func adminManagesUsersAndSeesProviders() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        let result = try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank"), answer: ["subject": "carol"])
        let accountID = try #require(result.account?.id)
        try await fixture.app.test(.router) { client in
            let users = try JSONDecoder().decode(
                [JSONValue].self, from: Data(buffer: try await client.execute(uri: "/admin/v1/users", method: .get, headers: Self.admin).body))
            #expect(users.count == 1)
            let user = try Self.object(try await client.execute(uri: "/admin/v1/users/\(accountID)", method: .get, headers: Self.admin))
            #expect(user["username"] == "carol")
            guard case .array(let identities) = user["identities"], case .object(let identity) = identities.first else { Issue.record("no identities"); return }
            #expect(identity["provider"] == "bank")
            let providers = try JSONDecoder().decode(
                [JSONValue].self, from: Data(buffer: try await client.execute(uri: "/admin/v1/providers", method: .get, headers: Self.admin).body))
            #expect(providers.count == 2)
            #expect(try await client.execute(uri: "/admin/v1/users/\(accountID)", method: .delete, headers: Self.admin).status == .noContent)
            #expect(try await client.execute(uri: "/admin/v1/users/\(accountID)", method: .get, headers: Self.admin).status == .notFound)
            let since = ISO8601DateFormatter().string(from: fixture.test.clock.now.addingTimeInterval(-1))
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let deregistered = try decoder.decode(
                [AuditEvent].self,
                from: Data(buffer: try await client.execute(uri: "/admin/v1/audit?type=account.deregistered&since=\(since)", method: .get, headers: Self.admin).body)
            )
            #expect(deregistered.first?.details["admin"] == "ops")
            #expect(try await client.execute(uri: "/admin/v1/audit?since=yesterday", method: .get, headers: Self.admin).status == .badRequest)
        }
        // The user's tokens died with the account.
        await #expect(throws: BrokerError.self) { _ = try await fixture.test.broker.oauth.verifyAccessToken(result.tokens.accessToken) }
    }
}

extension GatehouseServerTests {
    @Test func statelessTokenStopsBeingActiveWhenItsSubjectDeregisters() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        var app = try #require(try await fixture.test.store.app(id: "notes"))
        app.policy.statelessAuthentication = true
        #expect(try await fixture.test.store.updateApp(app))
        let first = try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank", stateless: true), answer: ["subject": "eid-9"])
        let second = try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank", stateless: true), answer: ["subject": "eid-9"])
        let oauth = fixture.test.broker.oauth
        #expect(try await oauth.verifyAccessToken(first.tokens.accessToken).stateless)
        try await fixture.app.test(.router) { client in
            let deleted = try await client.execute(uri: "/v1/account", method: .delete, headers: [.authorization: "Bearer \(second.tokens.accessToken)"])
            #expect(deleted.status == .noContent)
        }
        // Every token of that stateless subject is now inactive, and nothing was stored about it.
        await #expect(throws: BrokerError.self) { _ = try await oauth.verifyAccessToken(first.tokens.accessToken) }
        await #expect(throws: BrokerError.self) { _ = try await oauth.verifyAccessToken(second.tokens.accessToken) }
        #expect(try await fixture.test.store.count(table: .accounts) == 0)
        // A later stateless sign-in of the same subject works again.
        fixture.test.clock.advance(by: 2)
        let later = try await fixture.test.signIn(FlowRequest(appID: "notes", providerID: "bank", stateless: true), answer: ["subject": "eid-9"])
        #expect(try await oauth.verifyAccessToken(later.tokens.accessToken).stateless)
    }
}

extension GatehouseServerTests {
    /// The webhook secret's rotation over HTTP: an empty body takes the configured overlap, a body's
    /// `overlap` another one (`"0s"`: the old secret stops at once), a bad body is a 400 that names it.
    @Test func webhookSecretRotationTakesAnOverlapInItsBody() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        try await fixture.app.test(.router) { client in
            let uri = "/admin/v1/apps/notes/webhook/secret"
            #expect(try await client.execute(uri: uri, method: .post, headers: Self.admin).status == .ok)
            #expect(try await client.execute(uri: uri, method: .post, headers: Self.admin).status == .ok)
            /// The secrets that sign now, as the deliveries read them.
            func signing() async throws -> Int {
                let record = try #require(try await fixture.test.store.pluginRecord(namespace: "gatehouse:webhooks", key: "notes", now: fixture.test.clock.now))
                let sealed = String(decoding: record.value, as: UTF8.self)
                let opened = try SecretSealer.forTests.open(sealed, context: "plugin_data:gatehouse:webhooks:notes")
                let secrets = try JSONDecoder().decode([String: JSONValue].self, from: opened)
                return secrets["previous"] == nil ? 1 : 2
            }
            #expect(try await signing() == 2, "the configured overlap (1 day) keeps the replaced secret")
            let stopped = try await client.execute(uri: uri, method: .post, headers: Self.admin, body: Self.json(#"{"overlap": "0s"}"#))
            #expect(stopped.status == .ok)
            #expect(try await signing() == 1)
            for bad in [#"{"overlap": "soon"}"#, #"{"overlap": 700000}"#, "not json"] {
                let refused = try await client.execute(uri: uri, method: .post, headers: Self.admin, body: Self.json(bad))
                let error = try Self.object(refused)["error"]
                #expect(refused.status == .badRequest && error == "invalid_request", "\(bad)")
            }
        }
    }
}

extension GatehouseServerTests {
    /// Disabling an account over the admin API: its tokens stop at once, its refresh token renews
    /// nothing, every provider refuses it at sign-in (the person is told why), and enabling lets it
    /// sign in again while what was revoked stays revoked. Both audited with the admin's name.
    @Test func aDisabledAccountSignsInNowhereAndItsTokensStopUntilEnabled() async throws {
        let fixture = try await Self.adminBroker()
        defer { fixture.test.temporary.remove() }
        let test = fixture.test
        let signedIn = try await test.signIn(FlowRequest(appID: "notes", providerID: "bank", scopes: ["openid", "offline_access"]), answer: ["subject": "dora"])
        let accountID = try #require(signedIn.account?.id)
        let refresh = try #require(signedIn.tokens.refreshToken)
        try await fixture.app.test(.router) { client in
            let disabled = try await client.execute(
                uri: "/admin/v1/users/\(accountID)/disable", method: .post, headers: Self.admin, body: Self.json(#"{"reason":"left the company"}"#))
            #expect(disabled.status == .ok)
            #expect(try Self.object(disabled)["disabled"] == true)
            #expect(try await client.execute(uri: "/admin/v1/users/nobody/disable", method: .post, headers: Self.admin).status == .notFound)
            #expect(
                try await client.execute(uri: "/admin/v1/users/\(accountID)/disable", method: .post, headers: Self.admin, body: Self.json("[1]")).status == .badRequest)

            // The access token is no longer active; the refresh token renews nothing.
            await #expect(throws: BrokerError.self) { _ = try await test.broker.oauth.verifyAccessToken(signedIn.tokens.accessToken) }
            let renewed = await thrownError {
                _ = try await test.broker.oauth.token(
                    try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "notes"], basic: nil))
            }
            #expect(renewed?.code == .invalidGrant)
            // A new sign-in is refused after the provider identified the person, who is told why.
            let refused = await thrownError { _ = try await test.signIn(FlowRequest(appID: "notes", providerID: "bank"), answer: ["subject": "dora"]) }
            #expect(refused?.code == .accessDenied && refused?.reason == "account_disabled" && refused?.reasonIsPublic == true)
            // Someone else is not affected.
            #expect(try await test.signIn(FlowRequest(appID: "notes", providerID: "bank"), answer: ["subject": "erik"]).account != nil)

            let enabled = try await client.execute(uri: "/admin/v1/users/\(accountID)/enable", method: .post, headers: Self.admin)
            #expect(enabled.status == .ok)
            #expect(try Self.object(enabled)["disabled"] == false)
        }
        // The disable's reach covers tokens issued in the moment after it; later ones work.
        test.clock.advance(by: 121)
        let again = try await test.signIn(FlowRequest(appID: "notes", providerID: "bank"), answer: ["subject": "dora"])
        #expect(again.account?.id == accountID)
        #expect(try await test.broker.oauth.verifyAccessToken(again.tokens.accessToken).sub.value == accountID)
        let stillRevoked = await thrownError {
            _ = try await test.broker.oauth.token(try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "notes"], basic: nil))
        }
        #expect(stillRevoked?.code == .invalidGrant)
        let disabledEvents = try await test.store.auditEvents(type: "account.disabled", appID: nil, accountID: accountID, since: nil, limit: 10)
        #expect(disabledEvents.first?.details["admin"] == "ops" && disabledEvents.first?.details["reason"] == "left the company")
        #expect(try await test.store.auditEvents(type: "account.enabled", appID: nil, accountID: accountID, since: nil, limit: 10).count == 1)
    }
}
