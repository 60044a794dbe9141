import Foundation
@testable import GatehouseCore
import GatehouseTesting
import Testing

/// The core: config loading, the plugin registry, password policy and the flow engine.
@Suite("GatehouseCore")
struct GatehouseCoreTests {}

// MARK: - Config and registry

extension GatehouseCoreTests {
    func issues(_ yaml: String, environment: [String: String] = [:]) -> [String] {
        do {
            _ = try ConfigLoader(registry: TestRegistry.registry).load(yaml: yaml, environment: environment)
            return []
        } catch {
            return error.issues.map(\.description)
        }
    }

    @Test func refusesUnknownPluginTypeWithItsPath() {
        let found = issues(
            """
            providers:
              - id: ext
                type: named-subject
              - id: corp
                type: ldapp
            """
        )
        #expect(found == ["providers[1].type: unknown plugin type 'ldapp' (known: fixed-code, named-subject)"])
    }

    @Test func reportsBadPluginConfigWithExactPath() {
        let found = issues(
            """
            providers:
              - id: ext
                type: named-subject
                config:
                  healthy: maybe
                  colour: blue
            """
        )
        #expect(found.contains("providers[0].config.healthy: expected true or false, found 'maybe'"))
        #expect(found.contains("providers[0].config.colour: unknown key"))
        // A key the plugin knows, left unread because decoding stopped at the mistake before it, is no typo.
        #expect(!found.contains { $0.hasPrefix("providers[0].config.label") })
        let stopped = issues("providers:\n  - id: ext\n    type: named-subject\n    config:\n      healthy: maybe\n      label: fine\n")
        #expect(stopped == ["providers[0].config.healthy: expected true or false, found 'maybe'"], "\(stopped)")
    }

    @Test func reportsPluginFactoryRefusalUnderItsConfigPath() {
        let yaml = "providers:\n  - id: ext\n    type: named-subject\n    config:\n      label: explode\n"
        #expect(configIssues(yaml, registry: TestRegistry.registry) == ["providers[0].config.label: must not be 'explode'"])
    }

    @Test func reportsEveryMistakeNotJustTheFirst() {
        let found = issues(
            """
            server:
              listen: localhost
            stroage: {}
            providers:
              - id: ext
                type: named-subject
            apps:
              - id: notes
                polcy: {}
              - id: Bad App
              - id: other
                policy:
                  identityProviders: [ext, missing]
                  accessTokenLifetime: -5
            """
        )
        #expect(found.contains("server.listen: not a HOST:PORT address: 'localhost'"))
        #expect(found.contains { $0.hasPrefix("stroage: unknown key") })
        #expect(found.contains("apps[0].polcy: unknown key"))
        #expect(found.contains("apps[1].id: \(Identifier.rule)"))
        #expect(found.contains("apps[2].policy.accessTokenLifetime: must be between 60 and 86400 seconds, got -5"))
    }

    @Test func refusesPolicyNamingAnUndeclaredProvider() {
        let found = issues(
            """
            providers:
              - id: ext
                type: named-subject
            apps:
              - id: notes
                policy:
                  identityProviders: [ext, missing]
            """
        )
        #expect(found == ["apps[0].policy.identityProviders[1]: no identity provider with id 'missing' is configured"])
    }

    @Test func refusesAProviderListedInARoleItDoesNotPlayWithItsPath() {
        let yaml = """
            providers:
              - {id: ext, type: named-subject}
              - {id: code, type: fixed-code, config: {code: "123456"}}
            apps:
              - id: notes
                policy: {identityProviders: [ext, code], authenticators: [ext]}
            """
        let expected = [
            "apps[0].policy.identityProviders[1]: 'code' is an authenticator, not an identity provider (list it under authenticators)",
            "apps[0].policy.authenticators[0]: 'ext' is an identity provider, not an authenticator (list it under identityProviders)",
        ]
        // The roles are the factories' declarations, so reading the file finds it, before any plugin is built.
        #expect(issues(yaml) == expected)
        #expect(configIssues(yaml, registry: TestRegistry.registry) == expected)
    }

    /// A plugin whose endpoints are declared twice (the author's mistake), reported at start.
    struct TwiceDeclared: IdentityProvider, EndpointOffering {
        let id: String
        var endpoints: [PluginEndpoint] {
            [
                .forAdmins(.get, "report", summary: "A report.") { _, _ in PluginEndpointAnswer([:]) },
                .forAdmins(.get, "report", summary: "Again.") { _, _ in PluginEndpointAnswer([:]) },
            ]
        }
        func begin(in context: FlowContext) async throws -> FlowStep { throw BrokerError.internalFailure() }
        func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep { throw BrokerError.internalFailure() }
        enum Factory: PluginFactory {
            struct Config: Decodable, Sendable {}
            static let typeName = "twice"
            static func make(id: String, config: Config, environment: PluginEnvironment) throws -> TwiceDeclared { TwiceDeclared(id: id) }
        }
    }

    @Test func endpointsDeclaredTwiceOrAReservedProviderIdAreConfigErrors() {
        var registry = TestRegistry.registry
        registry.register(TwiceDeclared.Factory.self)
        #expect(
            configIssues("providers:\n  - {id: two, type: twice}\n", registry: registry) == [
                "providers[0].type: the 'twice' plugin declares the endpoint GET report twice"
            ])
        #expect(
            issues("providers:\n  - {id: store, type: named-subject}\n") == [
                "providers[0].id: 'store' is reserved (the readiness check of the database); choose another id"
            ])
    }

    @Test func aPluginTypesRolesAreWhatItsInstanceTypeAdopts() {
        let registry = TestRegistry.registry
        #expect(registry.roles(ofType: "named-subject") == .identityProvider)
        #expect(registry.roles(ofType: "fixed-code") == .authenticator)
        #expect(PluginRoles(of: DualRolePlugin.self) == [.identityProvider, .authenticator])
        #expect(registry.roles(ofType: "unknown").isEmpty)
    }

    /// A plugin adopting both roles (as the emailed code does).
    struct DualRolePlugin: IdentityProvider, Authenticator {
        let id: String
        func begin(in context: FlowContext) async throws -> FlowStep { throw BrokerError.internalFailure() }
        func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep { throw BrokerError.internalFailure() }
    }

    @Test func refusesAStatelessSwitchThatCouldNeverWorkInTheFileAndInCheckConfig() {
        func config(policy: String) -> String {
            """
            providers:
              - {id: ext, type: named-subject}
              - {id: code, type: fixed-code, config: {code: "123456"}}
            apps:
              - id: bank
                policy: {\(policy), statelessAuthentication: true}
            """
        }
        let twoFactor = config(policy: "identityProviders: [ext], authenticators: [code], secondFactor: code")
        let reason =
            "apps[0].policy.statelessAuthentication: cannot be on while a second factor ('code') is required: a second factor needs an account, which a stateless sign-in never has"
        #expect(issues(twoFactor) == [reason])
        #expect(configIssues(twoFactor, registry: TestRegistry.registry) == [reason])
        // Known only once the plugins are built: no provider of the app can sign in statelessly.
        #expect(
            configIssues(config(policy: "identityProviders: []"), registry: TestRegistry.registry) == [
                "apps[0].policy.statelessAuthentication: cannot be on: none of this app's identity providers can sign in statelessly (those that can: ext)"
            ])
        #expect(configIssues(config(policy: "identityProviders: [ext]"), registry: TestRegistry.registry).isEmpty)
    }

    @Test func redirectURIsMustLeadBackToAnApp() {
        for (uri, problem) in [
            ("javascript:alert(1)", "the 'javascript:' scheme is refused"), ("data:text/html,<b>x</b>", "the 'data:' scheme is refused"),
            ("VBScript:msgbox", "the 'vbscript:' scheme is refused"), ("file:///etc/passwd", "the 'file:' scheme is refused"),
            ("https://app.example/cb#x", "must not have a fragment"), ("https://*.example/cb", "no wildcards"),
            ("http://app.example/cb", "http only on a loopback address"), ("myapp:/cb", "a private-use scheme must be a reverse domain name"),
            ("/relative", "not an absolute URI"), ("https:///nohost", "an https URI needs a host"),
        ] {
            #expect(RedirectURIRule.problem(uri)?.hasPrefix(problem) == true, "\(uri): \(RedirectURIRule.problem(uri) ?? "accepted")")
        }
        for uri in ["https://app.example/cb", "http://127.0.0.1:8080/cb", "http://[::1]/cb", "http://localhost/cb", "com.example.app:/oauth2redirect"] {
            #expect(RedirectURIRule.problem(uri) == nil, "\(uri)")
        }
        let found = issues("apps:\n  - id: notes\n    redirectURIs: [https://notes.example/cb, \"javascript:alert(1)\"]\n")
        #expect(found.contains { $0.hasPrefix("apps[0].redirectURIs[1]: the 'javascript:' scheme is refused") }, "\(found)")
        let logout = issues("apps:\n  - id: web\n    policy: {logout: {postLogoutRedirectURIs: [\"data:text/html,hi\"]}}\n")
        #expect(logout.contains { $0.hasPrefix("apps[0].policy.logout.postLogoutRedirectURIs[0]: the 'data:' scheme is refused") }, "\(logout)")
    }

    @Test func appNamesAreShortSingleLinesOfText() {
        #expect(AppNameRule.problem("Notes") == nil)
        #expect(AppNameRule.problem(String(repeating: "A", count: 100)) == nil)
        #expect(AppNameRule.problem(String(repeating: "A", count: 1_600)) == "must be at most 100 characters (it has 1600)")
        #expect(AppNameRule.problem("Notes\nPay here")?.hasPrefix("must not contain control") == true)
        #expect(AppNameRule.problem("Notes\u{202E}gnp.exe")?.hasPrefix("must not contain control") == true)
        #expect(AppNameRule.problem("   ") == "must not be empty")
        let found = issues("apps:\n  - id: notes\n    name: \"\(String(repeating: "x", count: 101))\"\n")
        #expect(found == ["apps[0].name: must be at most 100 characters (it has 101)"])
    }

    @Test func substitutesEnvironmentVariablesAndNamesMissingOnes() throws {
        let yaml = """
            providers:
              - id: code
                type: fixed-code
                config:
                  code: ${CODE}
            apps:
              - id: notes
                secret: ${NOTES_SECRET}
            """
        #expect(issues(yaml, environment: ["CODE": "1"]) == ["apps[0].secret: environment variable NOTES_SECRET is not set"])
        let config = try ConfigLoader(registry: TestRegistry.registry).load(yaml: yaml, environment: ["CODE": "1", "NOTES_SECRET": String(repeating: "x", count: 40)])
        #expect(config.apps[0].secret == String(repeating: "x", count: 40))
        #expect(try EnvironmentSubstitution.apply(to: "a-${MISSING:-fallback}-b", environment: [:]) == "a-fallback-b")
    }

    @Test func refusesShortClientSecretAndPlainHttpIssuerInProduction() {
        let found = issues(
            """
            environment: production
            server:
              issuer: http://id.example.com
            apps:
              - id: notes
                secret: short
            """
        )
        #expect(found.contains("apps[0].secret: a client secret needs at least 32 characters (generate one with `openssl rand -base64 32`)"))
        #expect(found.contains("server.issuer: must use https outside development (only loopback issuers may use http)"))
    }

    @Test func parsesDurationsWithUnits() {
        #expect(Seconds(parsing: "15m") == Seconds(900))
        #expect(Seconds(parsing: "2h") == Seconds(7200))
        #expect(Seconds(parsing: "30") == Seconds(30))
        #expect(Seconds(parsing: "soon") == nil)
        // Too large to be a duration: refused, never a trap on overflow.
        #expect(Seconds(parsing: "106751991167301d") == nil)
        #expect(Seconds(parsing: "\(Int.max)h") == nil)
    }
}

// MARK: - Password policy

extension GatehouseCoreTests {
    func code(_ secret: String, _ policy: PasswordPolicy = PasswordPolicy(), username: String? = nil) -> String? {
        do {
            try policy.check(secret, username: username)
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    @Test func passwordPolicyGivesEachRuleItsOwnCode() {
        #expect(code("short1") == "password_too_short")
        #expect(code(String(repeating: "ab1x", count: 19)) == "password_too_long")
        #expect(code("Password1") == "password_denied")
        #expect(code("qwerty123") == "password_denied")
        #expect(code("my-deny-listed", PasswordPolicy(denyList: ["My-Deny-Listed"])) == "password_denied")
        #expect(code("x7abcdq9z") == "password_sequence")
        #expect(code("x7q98765z") == "password_sequence")
        #expect(code("x7qzzzk2") == "password_repeated")
        #expect(code("alice-was-here", username: "alice") == "password_contains_username")
        #expect(code("12a4", PasswordPolicy(minLength: 4, numericOnly: true)) == "pin_not_numeric")
        #expect(code("1357", PasswordPolicy(minLength: 4, numericOnly: true)) == nil)
        #expect(code("1234", PasswordPolicy(minLength: 4, numericOnly: true)) == "password_denied")
        #expect(code("9876", PasswordPolicy(minLength: 4, numericOnly: true, denyList: [])) == "password_sequence")
        #expect(code("correct horse battery") == nil)
    }
}

// MARK: - Flow engine

extension GatehouseCoreTests {
    @Test func registersAndSignsInThroughTheEngine() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let registered = try await test.signIn(FlowRequest(appID: "notes", providerID: "ext", purpose: .register), answer: ["subject": "alice"])
        let signedIn = try await test.signIn(FlowRequest(appID: "notes", providerID: "ext"), answer: ["subject": "alice"])
        #expect(registered.account?.id == signedIn.account?.id)
        #expect(registered.tokens.refreshToken != nil)
        #expect(try await test.store.count(table: .accounts) == 1)
        let claims = try await test.broker.keyring.verify(signedIn.tokens.accessToken)
        #expect(claims.sub.value == signedIn.account?.id)
        #expect(claims.amr == ["user", "ext"])
    }

    @Test func refusesProviderTheAppsPolicyDoesNotAllow() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let error = await brokerError { _ = try await test.start(FlowRequest(appID: "notes", providerID: "other")) }
        #expect(error?.code == .providerNotAllowed)
        #expect(error?.httpStatus == 403)
        let unknown = await brokerError { _ = try await test.start(FlowRequest(appID: "notes", providerID: "nope")) }
        #expect(unknown?.code == .unknownProvider)
        let registration = await brokerError { _ = try await test.start(FlowRequest(appID: "stateless-app", providerID: "ext", purpose: .register)) }
        #expect(registration?.code == .registrationDisabled)
    }

    @Test func refusesAlreadyRegisteredIdentity() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        _ = try await test.signIn(FlowRequest(appID: "notes", providerID: "ext", purpose: .register), answer: ["subject": "bob"])
        let again = await brokerError {
            _ = try await test.signIn(FlowRequest(appID: "notes", providerID: "ext", purpose: .register), answer: ["subject": "bob"])
        }
        #expect(again?.code == .alreadyRegistered)
    }

    @Test func expiredFlowIsNotFound() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "ext"))
        test.clock.advance(by: 5 * 60 + 1)
        let error = await brokerError { _ = try await test.finish(started.flowID, answer: ["subject": "alice"]) }
        #expect(error?.code == .flowNotFound)
        #expect(try await test.store.deleteExpiredFlows(now: test.clock.now) == 1)
    }

    @Test func flowStillOpenJustBeforeExpiry() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "ext"))
        test.clock.advance(by: 5 * 60 - 1)
        let finished = try await test.finish(started.flowID, answer: ["subject": "alice"])
        #expect(finished.account?.username == "alice")
    }

    @Test func finishedFlowCannotBeAnsweredAgain() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "ext"))
        _ = try await test.finish(started.flowID, answer: ["subject": "alice"])
        let error = await brokerError { _ = try await test.finish(started.flowID, answer: ["subject": "alice"]) }
        #expect(error?.code == .flowNotFound)
    }

    @Test func closesFlowAfterTooManyWrongAnswers() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "ext"))
        for _ in 1...4 {
            let error = await brokerError { _ = try await test.finish(started.flowID, answer: ["subject": "wrong"]) }
            #expect(error?.code == .invalidCredentials)
        }
        let fifth = await brokerError { _ = try await test.finish(started.flowID, answer: ["subject": "wrong"]) }
        #expect(fifth?.code == .tooManyAttempts)
        let after = await brokerError { _ = try await test.finish(started.flowID, answer: ["subject": "alice"]) }
        #expect(after?.code == .flowNotFound)
        let failures = try await test.store.auditEvents(type: "signin.failure", appID: "notes", accountID: nil, since: nil, limit: 10)
        #expect(failures.count == 5)
        #expect(failures.allSatisfy { $0.outcome == "invalid_credentials" })
    }

    @Test func statelessSignInNeedsThePolicyAndWritesNothing() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let refused = await brokerError { _ = try await test.start(FlowRequest(appID: "notes", providerID: "ext", stateless: true)) }
        #expect(refused?.code == .statelessDisabled)

        let accountsBefore = try await test.store.count(table: .accounts)
        let tokensBefore = try await test.store.count(table: .refreshTokens)
        let linksBefore = try await test.store.count(table: .identityLinks)
        let result = try await test.signIn(FlowRequest(appID: "stateless-app", providerID: "ext", stateless: true), answer: ["subject": "carol"])
        #expect(result.tokens.refreshToken == nil)
        #expect(result.account == nil)
        let claims = try await test.broker.keyring.verify(result.tokens.accessToken)
        #expect(claims.stateless)
        #expect(claims.sub.value == "ext|carol")
        #expect(try await test.store.count(table: .accounts) == accountsBefore)
        #expect(try await test.store.count(table: .refreshTokens) == tokensBefore)
        #expect(try await test.store.count(table: .identityLinks) == linksBefore)
        #expect(try await test.store.count(table: .flows) == 0)
    }

    @Test func requiredSecondFactorRunsAfterTheIdentity() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let started = try await test.start(FlowRequest(appID: "two-factor", providerID: "ext"))
        let second = try await test.engine.resume(flowID: started.flowID, answer: ChallengeResponse(["subject": "dave"]), client: nil)
        guard case .challenge(_, let challenge, _) = second else {
            Issue.record("expected the second-factor challenge")
            return
        }
        #expect(challenge.type == "fixed_code")
        let wrong = await brokerError { _ = try await test.finish(started.flowID, answer: ["code": "000000"]) }
        #expect(wrong?.code == .invalidCredentials)
        let done = try await test.finish(started.flowID, answer: ["code": "424242"])
        let claims = try await test.broker.keyring.verify(done.tokens.accessToken)
        #expect(claims.amr == ["user", "ext", "otp", "code"])
    }

    @Test func policyChangedMidFlowTakesEffectOnTheNextStep() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "ext"))
        var app = try #require(try await test.store.app(id: "notes"))
        app.policy.identityProviders = []
        _ = try await test.store.seedApp(app)
        let error = await brokerError { _ = try await test.finish(started.flowID, answer: ["subject": "alice"]) }
        #expect(error?.code == .providerNotAllowed)
    }

    @Test func confidentialAppMustAuthenticate() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let missing = await brokerError { _ = try await test.start(FlowRequest(appID: "confidential", providerID: "ext")) }
        #expect(missing?.code == .invalidClient)
        let wrong = await brokerError {
            _ = try await test.start(FlowRequest(appID: "confidential", providerID: "ext"), client: ClientCredentials(clientID: "confidential", secret: "nope"))
        }
        #expect(wrong?.code == .invalidClient)
        let right = ClientCredentials(clientID: "confidential", secret: TestRegistry.confidentialSecret)
        let started = try await test.start(FlowRequest(appID: "confidential", providerID: "ext"), client: right)
        let withoutSecret = await brokerError { _ = try await test.finish(started.flowID, answer: ["subject": "erin"]) }
        #expect(withoutSecret?.code == .invalidClient)
        _ = try await test.finish(started.flowID, answer: ["subject": "erin"], client: right)
    }

    @Test func refusesScopesThePolicyDoesNotAllow() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let error = await brokerError { _ = try await test.start(FlowRequest(appID: "notes", providerID: "ext", scopes: ["openid", "admin"])) }
        #expect(error?.code == .invalidScope)
    }

    @Test func concurrentAnswersToOneFlowFinishItOnce() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "ext"))
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await test.finish(started.flowID, answer: ["subject": "frank"])
                        return "completed"
                    } catch let error as BrokerError {
                        return error.code.rawValue
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == "completed" }.count == 1)
        #expect(outcomes.allSatisfy { ["completed", "flow_conflict", "flow_not_found"].contains($0) })
        #expect(try await test.store.count(table: .refreshTokens) == 1)
        #expect(try await test.store.count(table: .accounts) == 1)
    }

    @Test func concurrentRegistrationsLoseNoAccount() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let accounts = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<40 {
                group.addTask {
                    try await test.signIn(FlowRequest(appID: "notes", providerID: "ext", purpose: .register), answer: ["subject": .string("user\(index)")]).account?.id
                }
            }
            return try await group.reduce(into: Set<String>()) { if let id = $1 { $0.insert(id) } }
        }
        #expect(accounts.count == 40)
        #expect(try await test.store.count(table: .accounts) == 40)
        #expect(try await test.store.count(table: .identityLinks) == 40)
    }

    @Test func readinessReportsUnhealthyPlugin() async throws {
        let test = try await TestBroker.make(
            yaml: "providers:\n  - id: ext\n    type: named-subject\n    config:\n      healthy: false\n", registry: TestRegistry.registry
        )
        defer { test.temporary.remove() }
        let readiness = await test.broker.readiness()
        #expect(!readiness.ready)
        #expect(readiness.checks["ext"]?.detail == "down on purpose")
        #expect(readiness.checks["store"]?.healthy == true)
    }
}

// MARK: - JSON writer

extension GatehouseCoreTests {
    @Test func jsonWriterRoundTripsThroughJSONDecoder() throws {
        let value: JSONValue = [
            "text": "quote \" backslash \\ newline \n tab \t bell \u{07} ünïcödé 🔐", "int": 42, "negative": -7, "fraction": .number(0.25),
            "big": .number(1e20), "flag": true, "nothing": .null, "list": [1, "two", false], "nested": ["a": ["b": "c"]],
        ]
        let text = String(decoding: value.serialized(), as: UTF8.self)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) == value)
        #expect(text.hasPrefix(#"{"big":"#))
        #expect(String(decoding: JSONValue.object(["b": 1, "a": 2]).serialized(), as: UTF8.self) == #"{"a":2,"b":1}"#)
    }
}

// MARK: - Drift between the config file and the database

extension GatehouseCoreTests {
    @Test func reportsDriftBetweenFileAndDatabase() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let seeds = [
            AppSeed(id: "notes", name: "Notes", policy: Policy(identityProviders: ["ext"])),
            AppSeed(id: "new", name: "New", policy: Policy()),
            AppSeed(id: "same", name: "Same", policy: Policy()),
        ]
        var changed = Policy(identityProviders: ["ext"])
        changed.statelessAuthentication = true
        let stored = [
            App(id: "notes", name: "Notes", policy: changed, managedBy: .admin, createdAt: now, updatedAt: now),
            App(id: "same", name: "Same", policy: Policy(), createdAt: now, updatedAt: now),
            App(id: "extra", name: "Extra", policy: Policy(), managedBy: .admin, createdAt: now, updatedAt: now),
        ]
        let findings = try ConfigDrift.compare(seeds: seeds, stored: stored, settings: TestRegistry.registry.settingsBook(for: []))
        #expect(findings.map(\.appID) == ["notes", "new", "extra"])
        #expect(findings[0].message.contains("policy.statelessAuthentication: file false, database true"))
        #expect(findings[0].message.contains("managed by an admin"))
        #expect(findings[1].message.contains("not in the database yet"))
        #expect(findings[2].message.contains("exists only in the database"))
    }
}

// MARK: - Token claims writer

extension GatehouseCoreTests {
    @Test func claimsWriterMatchesTheCodableEncoding() throws {
        let claims = AccessTokenClaims(
            issuer: "https://id.example", subject: "acct-1", audience: "notes", issuedAt: Date(timeIntervalSince1970: 1_800_000_000.7),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_900.2), scope: "openid profile", stateless: false,
            authTime: Date(timeIntervalSince1970: 1_799_999_000), amr: ["pwd", "local"], identityProvider: "local"
        )
        // What jwt-kit's default encoder writes: dates as seconds since 1970.
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let viaCodable = try JSONDecoder().decode(JSONValue.self, from: encoder.encode(claims))
        #expect(claims.json == viaCodable)
        let id = IDTokenClaims(
            issuer: "https://id.example", subject: "acct-1", audience: "notes", issuedAt: Date(timeIntervalSince1970: 1_800_000_000),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_900), authTime: Date(timeIntervalSince1970: 1_799_999_000), nonce: "n",
            accessToken: "token", amr: ["pwd"], identityProvider: "local", profile: ["preferred_username": "alice"]
        )
        #expect(id.json == (try JSONDecoder().decode(JSONValue.self, from: encoder.encode(id))))
    }
}

extension GatehouseCoreTests {
    @Test func storageDurabilityIsFullUnlessSaidOtherwise() throws {
        #expect(issues("storage:\n  sqlite:\n    durability: sometimes\n") == ["storage.sqlite.durability: must be full or normal, got 'sometimes'"])
        let loader = ConfigLoader(registry: TestRegistry.registry)
        #expect(try loader.load(yaml: "{}", environment: [:]).storage.durability == .full)
        #expect(try loader.load(yaml: "storage:\n  sqlite:\n    durability: normal\n", environment: [:]).storage.durability == .normal)
    }

    @Test func acceptsOnlyAddressesThatCanGoIntoAnSMTPCommandAsTheyAre() {
        #expect(EmailAddress("  Alice.Smith+notes@Example.COM ")?.value == "alice.smith+notes@example.com")
        #expect(EmailAddress("bob@mail.example.org")?.masked == "b•••b@mail.example.org")
        for bad in [
            "", "alice", "alice@", "@example.com", "alice@localhost", "a@b@example.com", "alice@example..com", ".alice@example.com",
            "alice.@example.com", "alice@example.com.", "alice@example.com>\r\nRCPT TO:<m@example.com", "al ice@example.com",
            "<alice@example.com>", "alice\u{7F}@example.com", "\"alice\"@example.com", String(repeating: "a", count: 65) + "@example.com",
        ] {
            #expect(EmailAddress(bad) == nil, "accepted \(bad)")
        }
    }

    @Test func knowsTheLoopbackFromOtherHosts() {
        for host in ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "LOCALHOST"] { #expect(LoopbackHost.contains(host), "\(host)") }
        for host in ["127.0.0.1.example.com", "128.0.0.1", "localhost.example.com", "10.0.0.1", "127.0.0", ""] {
            #expect(!LoopbackHost.contains(host), "\(host)")
        }
    }

    @Test func concurrencyLimitQueuesInOrderAndGivesUpAtTheDeadline() async throws {
        let limit = ConcurrencyLimit(limit: 1)
        let (held, holding) = AsyncStream.makeStream(of: Void.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await limit.run(waitingAtMost: 5) {
                holding.yield()
                for await _ in released { break }
            }
        }
        for await _ in held { break }
        // The one slot is taken: a caller willing to wait 0.2 s gives up.
        await #expect(throws: ConcurrencyLimit.Timeout.self) { try await limit.run(waitingAtMost: 0.2) {} }
        // A patient caller gets the slot as soon as it is released.
        let waiter = Task { try await limit.run(waitingAtMost: 5) { "served" } }
        try await Task.sleep(for: .milliseconds(50))
        release.yield()
        try await holder.value
        #expect(try await waiter.value == "served")
        // And the slot is free again afterwards.
        #expect(try await limit.run(waitingAtMost: 0.1) { 1 } == 1)
    }
}

extension GatehouseCoreTests {
    @Test func identitiesStoredBeforeMethodsAndTestMarkersStillRead() throws {
        let old = #"{"providerID":"local","subject":"s-1","username":"alice","claims":{"email":"a@example.com","email_verified":true}}"#
        let identity = try JSONDecoder().decode(ExternalIdentity.self, from: Data(old.utf8))
        #expect(identity.methods.isEmpty && !identity.isTest)
        #expect(identity.claims.verifiedEmail?.value == "a@example.com")
    }

    @Test func theStandardProfileClaimsAProviderVouchesForReachTheProfileScope() {
        let claims = IdentityClaims(claims: ["picture": "https://example.com/a.png", "locale": "de-CH", "nickname": "al", "shoe_size": 44])
        let profile = ProfileClaims.make(username: "alice", claims: claims, scopes: ["openid", "profile"])
        #expect(profile["picture"] == "https://example.com/a.png" && profile["locale"] == "de-CH" && profile["nickname"] == "al")
        #expect(profile["shoe_size"] == nil, "a provider's own claims are not standard claims")
        #expect(ProfileClaims.make(username: "alice", claims: claims, scopes: ["openid"]).isEmpty)
    }

    @Test func anAlgorithmWhoseKeysWereAllRetiredElsewhereGetsANewKeyAtTheNextSignature() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        // Another node or an older CLI retired every key.
        try await test.store.retireSigningKeys(keeping: [], now: test.clock.now)
        try await test.broker.keyring.reload()
        let result = try await test.signIn(FlowRequest(appID: "notes", providerID: "ext"), answer: ["subject": "alice"])
        #expect(result.tokens.idToken != nil)
        _ = try await test.broker.keyring.verify(result.tokens.accessToken)
        #expect(try await test.store.signingKeys().filter { $0.retiredAt == nil }.count == 2)
    }
}

// MARK: - Revocation

extension GatehouseCoreTests {
    /// The revoker is the one place a revocation is made: each kind is remembered for as long as what
    /// it revokes can be presented, and a family's access tokens stop with its refresh tokens.
    @Test func theRevokerRemembersEachKindAsLongAsWhatItRevokesCanLive() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let signedIn = try await test.signIn(FlowRequest(appID: "notes", providerID: "ext", purpose: .register), answer: ["subject": "alice"])
        let accessToken = PresentedToken(scheme: .bearer, token: signedIn.tokens.accessToken)
        let claims = try await test.broker.oauth.authorize(accessToken)
        let family = try #require(claims.fid)
        let revoker = test.broker.oauth.revoker
        let start = test.clock.now

        #expect(try await revoker.family(family) == 1, "the family's one live refresh token")
        #expect(await brokerError { _ = try await test.broker.oauth.authorize(accessToken) }?.code == .invalidToken, "its access token stops at once")
        try await revoker.familyForGood("raced-family")
        #expect(try await revoker.subject("bob") == 0)
        try await revoker.signInKeys(["key-1"])
        try await revoker.accessToken(jti: "jti-1", expiresAt: start.addingTimeInterval(300))
        try await revoker.client("gone-app")

        func remembered(after seconds: TimeInterval) async throws -> Set<String> {
            Set(try await test.store.activeRevocations(now: start.addingTimeInterval(seconds)).map { "\($0.kind.rawValue):\($0.value)" })
        }
        let all: Set = ["family:\(family)", "family:raced-family", "subject:bob", "signInKey:key-1", "token:jti-1", "client:gone-app"]
        #expect(try await remembered(after: 0) == all)
        // An access token lives at most a day (and an ID token is accepted as a hint a day longer).
        #expect(try await remembered(after: 301) == all.subtracting(["token:jti-1"]))
        #expect(try await remembered(after: 2 * 86_400 + 1) == ["family:raced-family", "client:gone-app"])
        // A refresh token lives at most a year: a family revoked for good, and an app's grants, as long.
        #expect(try await remembered(after: 367 * 86_400) == [])
    }

    @Test func revokingASigningKeyListsItBeforeTheKeyringDropsIt() async throws {
        let test = try await TestRegistry.broker()
        defer { test.temporary.remove() }
        let signedIn = try await test.signIn(FlowRequest(appID: "notes", providerID: "ext", purpose: .register), answer: ["subject": "alice"])
        let kid = try #require(SigningKeyring.kid(of: signedIn.tokens.accessToken))
        let replacements = try await test.broker.oauth.revoker.signingKey(kid, in: test.broker.keyring)
        #expect(!replacements.isEmpty && !replacements.contains { $0.kid == kid })
        #expect(try await test.store.activeRevocations(now: test.clock.now).contains { $0.kind == .signingKey && $0.value == kid })
        #expect(try await test.broker.oauth.revocations.isSignedByRevokedKey(signedIn.tokens.accessToken))
    }
}

// MARK: - Plugin endpoints

extension GatehouseCoreTests {
    /// An endpoint is for apps whose policy lists the instance; never for the admin console's app,
    /// whose policy lists every provider only to sign administrators in.
    @Test func pluginEndpointsServeOnlyAppsThatListTheInstanceAndNeverTheConsole() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let listing = App(id: "notes", name: "Notes", policy: Policy(identityProviders: ["ext"]), createdAt: now, updatedAt: now)
        #expect(try SignedInCaller.allowing(listing, "ext").id == "notes")
        #expect(throws: BrokerError.self) { try SignedInCaller.allowing(listing, "other") }
        let console = App(id: ConsoleConfig.appID, name: "Console", policy: Policy(identityProviders: ["ext"], authenticators: ["code"]), createdAt: now, updatedAt: now)
        #expect(throws: BrokerError.self) { try SignedInCaller.allowing(console, "ext") }
    }
}

// MARK: - Stored flows

extension GatehouseCoreTests {
    /// Each phase keeps its state in the stored flow; flows the previous version stored (a password
    /// recovery, a profile edit or a suspended factor beside the phase) read into the same phase.
    @Test func storedFlowsKeepEachPhasesStateAndReadThePreviousVersionsShape() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func flow(_ phase: FlowRecord.Phase) -> FlowRecord {
            FlowRecord(
                id: "f", appID: "notes", providerID: "local", purpose: .authenticate, stateless: false, scopes: ["openid"], phase: phase, pluginState: FlowState(),
                challenge: Challenge(type: "credentials"), createdAt: now, expiresAt: now.addingTimeInterval(600)
            )
        }
        func json(_ record: FlowRecord) throws -> [String: JSONValue] {
            try #require(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(record)).objectValue)
        }
        func read(_ object: [String: JSONValue]) throws -> FlowRecord {
            try JSONDecoder().decode(FlowRecord.self, from: Data(JSONValue.object(object).serialized()))
        }
        let recovery = PasswordRecovery(step: .code, subject: "s1", accountID: "a1")
        let pending = AccountProfile(name: "Ada", email: EmailAddress("ada@example.com"))
        let resumes = SuspendedFactor(authenticatorID: "pin", state: FlowState(data: Data("pin-state".utf8)))
        for (phase, field, legacy) in [
            (FlowRecord.Phase.recovery(recovery), "recovery", try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(recovery))),
            (.confirmProfile(pending: pending), "pendingProfile", try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(pending))),
            (.factor(authenticatorID: "email", resumes: resumes), "suspendedFactor", try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(resumes))),
        ] {
            let record = flow(phase)
            #expect(try read(try json(record)) == record, "the new shape round-trips")
            var old = try json(record)
            let name = old["phase"]?.objectValue?.keys.first ?? ""
            old["phase"] = .object([name: name == "factor" ? ["authenticatorID": "email"] : [:]])
            old[field] = legacy
            #expect(try read(old).phase == phase, "the previous version's \(field) reads into the phase")
        }
        // Every stored property is written and read (a hand-written coding is not checked by the
        // compiler): each has a coding key, and a record with its optionals set round-trips.
        // The record's parts (origin, turn, progress) are stored flat, field by field.
        for child in Mirror(reflecting: flow(.identify)).children {
            let fields = ["origin", "turn", "progress"].contains(child.label) ? Mirror(reflecting: child.value).children.map(\.label) : [child.label]
            for field in fields { #expect(FlowRecord.CodingKeys(stringValue: field ?? "") != nil, "\(field ?? "?") has no coding key") }
        }
        var full = flow(.factor(authenticatorID: "email", resumes: resumes))
        full.identity = ExternalIdentity(providerID: "local", subject: "s1", username: "ada")
        (full.accountID, full.accountCreated, full.clientIP, full.returnURI, full.codeChallenge) = ("a1", true, "192.0.2.1", "notes://cb", "challenge")
        (full.returnCodeDigest, full.signedInAccountID, full.signInKeyID, full.installationID) = ("digest", "a0", "key-1", "install-1")
        full.handOff = HandOff(providerID: "sphinx", state: FlowState(data: Data("s".utf8)), mode: .adopts, annotations: ["why": "riddle"], approved: true)
        full.methods = ["pwd", "local"]
        #expect(try read(try json(full)) == full)
        // A hand-off the previous version stored (`suspendedProvider`: a provider and its state) is a
        // `continueWith`, still waiting.
        var handedOff = try json(flow(.identify))
        handedOff["suspendedProvider"] = ["providerID": "sphinx", "state": ["data": .string(Data("s".utf8).base64EncodedString())]]
        #expect(try read(handedOff).handOff == HandOff(providerID: "sphinx", state: FlowState(data: Data("s".utf8))))
        // A flow in a sub-flow the engine once ran for a plugin: its state goes back to the plugin, as
        // its challenge's state (the choice phase) or as a hand-over's (the key step, or past it).
        let subFlow: JSONValue = ["activationID": "a1", "providerID": "activation", "outcome": "re_activation", "choice": "override"]
        var choosing = try json(flow(.identify))
        (choosing["phase"], choosing["activation"]) = (["activationChoice": [:]], subFlow)
        let chose = try read(choosing)
        #expect(chose.phase == .identify && chose.handOff == nil && chose.pluginState.data == Data(subFlow.serialized()))
        for (phase, approved) in [(FlowRecord.Phase.identify, false), (.factor(authenticatorID: "pin"), true)] {
            var keyed = try json(flow(phase))
            keyed["activation"] = subFlow
            let handed = try #require(try read(keyed).handOff)
            #expect(handed.providerID == "activation" && handed.mode == .adopts && handed.approved == approved)
            #expect(handed.annotations == ["activation": ["outcome": "re_activation", "choice": "override"]])
        }
        // Without what it needs (its provider), or a choice phase without a sub-flow, it is not guessed at.
        var broken = try json(flow(.identify))
        broken["activation"] = ["activationID": "a1"]
        #expect(throws: BrokerError.self) { try read(broken) }
        var orphan = try json(flow(.identify))
        orphan["phase"] = ["activationChoice": [:]]
        #expect(throws: BrokerError.self) { try read(orphan) }
        // Phases without state read as before.
        var identify = try json(flow(.identify))
        identify["phase"] = ["identify": [:]]
        #expect(try read(identify).phase == .identify)
    }
}
