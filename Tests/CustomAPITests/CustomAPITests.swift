import Crypto
import Foundation
import GatehouseCore
import GatehouseStore
import GatehouseTesting
import Testing

@testable import CustomAPI

/// The `custom-api` plugin against a real HTTP service standing in for an app's registration API
/// (Tests/custom-api/app_api.py, which checks the bearer secret or the HMAC signature itself):
/// one-step and two-step, retryable and final refusals, bad signatures, timeouts, malformed answers,
/// and stateless sign-in that persists nothing and follows the admin toggle without a restart.
@Suite("CustomAPI", .shared(AppAPIServer.self))
struct CustomAPITests {
    static let appSecret = "notes-app-secret-0123456789abcdefghijklmnop"
    static let client = ClientCredentials(clientID: "notes", secret: appSecret)

    var api: AppAPIServer { AppAPIServer.shared }

    static func yaml(
        url: String, mode: String = "one-step", authentication: String = "hmac", secret: String = AppAPIServer.secret, timeout: String = "2s", stateless: Bool = false
    ) -> String {
        """
        environment: development
        providers:
          - id: bank
            type: custom-api
            config:
              url: \(url)
              mode: \(mode)
              authentication: \(authentication)
              secret: \(secret)
              timeout: \(timeout)
              maxRetries: 2
        apps:
          - id: notes
            secret: ${NOTES_SECRET}
            policy:
              identityProviders: [bank]
              statelessAuthentication: \(stateless)
              allowedScopes: [openid, profile, email, offline_access]
              defaultScopes: [openid, profile, email]
        """
    }

    func broker(
        mode: String = "one-step", authentication: String = "hmac", secret: String = AppAPIServer.secret, timeout: String = "2s", stateless: Bool = false,
        url: String? = nil
    ) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(CustomAPIPlugin.self)
        let yaml = Self.yaml(url: url ?? api.url, mode: mode, authentication: authentication, secret: secret, timeout: timeout, stateless: stateless)
        return try await TestBroker.make(yaml: yaml, registry: registry, environment: ["NOTES_SECRET": Self.appSecret])
    }

    static func request(stateless: Bool = false, scopes: [String]? = nil) -> FlowRequest {
        FlowRequest(appID: "notes", providerID: "bank", stateless: stateless, scopes: scopes, clientIP: "192.0.2.7")
    }

    /// The error a flow answer ends with.
    func refusal(_ broker: TestBroker, flowID: String, answer: [String: JSONValue], sourceLocation: SourceLocation = #_sourceLocation) async -> BrokerError? {
        await thrownError(sourceLocation: sourceLocation) {
            _ = try await broker.engine.resume(flowID: flowID, answer: ChallengeResponse(answer), client: Self.client)
        }
    }

    @Test func oneStepRegistrationLinksTheSubjectToAnAccount() async throws {
        let broker = try await broker()
        defer { broker.temporary.remove() }
        let started = try await broker.start(Self.request(), client: Self.client)
        #expect(started.challenge.type == "custom")
        #expect(started.challenge.fields["step"] == "register")
        let answer: [String: JSONValue] = [
            "customData": ["subject": "cust-42", "username": "carla", "claims": ["email": "carla@bank.example", "gatehouse_test_account": true, "sub": "forged"]]
        ]
        let first = try await broker.finish(started.flowID, answer: answer, client: Self.client)
        let account = try #require(first.account)
        #expect(account.username == "carla")
        #expect(!account.isTest, "an app's API cannot mark accounts as test accounts")
        #expect(first.tokens.refreshToken != nil)
        let link = try #require(try await broker.store.identityLink(providerID: "bank", subject: "cust-42"))
        #expect(link.claims.email == "carla@bank.example")
        #expect(link.claims.extra["sub"] == nil && link.claims.extra["gatehouse_test_account"] == nil)
        let again = try await broker.signIn(Self.request(), answer: answer, client: Self.client)
        #expect(again.account?.id == account.id)

        // The call the app received: the custom data, the flow, the app, a valid signature.
        let call = try #require(try api.calls().last { $0.body.contains("cust-42") })
        #expect(call.problem == nil)
        let body = try JSONSerialization.jsonObject(with: Data(call.body.utf8)) as? [String: Any] ?? [:]
        #expect(body["step"] as? String == "register")
        #expect(body["app"] as? String == "notes")
        #expect(body["stateless"] as? Bool == false)
        #expect(body["clientIP"] as? String == "192.0.2.7")
        let timestamp = try #require(call.headers["X-Gatehouse-Timestamp"])
        var message = Data("\(timestamp).".utf8)
        message.append(Data(call.body.utf8))
        let expected = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(AppAPIServer.secret.utf8))).map { String(format: "%02x", $0) }
            .joined()
        #expect(call.headers["X-Gatehouse-Signature"] == "v1=\(expected)")
    }

    @Test func twoStepRelaysTheInitDataThenFinishesWithTheClientsData() async throws {
        let broker = try await broker(mode: "two-step", authentication: "bearer")
        defer { broker.temporary.remove() }
        let started = try await broker.start(Self.request(), client: Self.client)
        #expect(started.challenge.fields["step"] == "finish")
        let data = try #require(started.challenge.fields["data"])
        #expect(data["deepLink"]?.stringValue?.hasPrefix("bankid:///?token=T-") == true)
        #expect(started.challenge.fields["state"] == nil, "the API's state stays with the broker")

        // A wrong code: the API's retryable refusal comes back as the same challenge with the error.
        let retry = try await broker.engine.resume(flowID: started.flowID, answer: ChallengeResponse(["customData": ["code": "0000"]]), client: Self.client)
        guard case .challenge(_, let challenge, _) = retry else { Issue.record("expected the challenge again, got \(retry)"); return }
        #expect(challenge.fields["error"] == ["code": "wrong_code", "message": "That code is not right."])
        #expect(challenge.fields["data"] == data)

        let done = try await broker.finish(started.flowID, answer: ["customData": ["code": "1234"]], client: Self.client)
        #expect(done.account != nil)
        let calls = try api.calls().filter { $0.body.contains(started.flowID) }
        #expect(calls.map { $0.headers["Authorization"] } == Array(repeating: "Bearer \(AppAPIServer.secret)", count: 3))
        #expect(calls.compactMap { $0.headers["X-Gatehouse-Signature"] }.isEmpty)
    }

    @Test func retryableRefusalsEndTheFlowAfterTheLimit() async throws {
        let broker = try await broker()
        defer { broker.temporary.remove() }
        let started = try await broker.start(Self.request(), client: Self.client)
        for _ in 0..<2 {
            let outcome = try await broker.engine.resume(flowID: started.flowID, answer: ChallengeResponse(["customData": ["behaviour": "retry"]]), client: Self.client)
            guard case .challenge(_, let challenge, _) = outcome else { Issue.record("expected a challenge"); return }
            #expect(challenge.fields["error"]?["code"] == "try_again")
        }
        let error = await refusal(broker, flowID: started.flowID, answer: ["customData": ["behaviour": "retry"]])
        #expect(error?.code == .tooManyAttempts)
        #expect(await refusal(broker, flowID: started.flowID, answer: ["customData": [:]])?.code == .flowNotFound)

        // Retrying after one retryable refusal succeeds.
        let second = try await broker.start(Self.request(), client: Self.client)
        _ = try await broker.engine.resume(
            flowID: second.flowID, answer: ChallengeResponse(["customData": ["behaviour": "retry-once", "subject": "r1"]]), client: Self.client)
        #expect(try await broker.finish(second.flowID, answer: ["customData": ["behaviour": "retry-once", "subject": "r1"]], client: Self.client).account != nil)
    }

    @Test func aFinalRefusalEndsTheFlowWithTheAppsMessage() async throws {
        let broker = try await broker()
        defer { broker.temporary.remove() }
        let started = try await broker.start(Self.request(), client: Self.client)
        let error = await refusal(broker, flowID: started.flowID, answer: ["customData": ["behaviour": "final"]])
        #expect(error?.code == ErrorCode("registration_refused"))
        #expect(error?.message == "We could not find you as a customer.")
        #expect(error?.httpStatus == 403)
        #expect(await refusal(broker, flowID: started.flowID, answer: ["customData": [:]])?.code == .flowNotFound)
        let audit = try await broker.store.auditEvents(type: "signin.failure", appID: "notes", accountID: nil, since: nil, limit: 10)
        #expect(audit.first?.details["reason"] == "customer_unknown")
    }

    @Test func aWrongSecretIsRefusedByTheAppAndReportedAsABadStatus() async throws {
        for authentication in ["hmac", "bearer"] {
            let broker = try await broker(authentication: authentication, secret: "not-the-apps-secret-0123456789-abcdef")
            defer { broker.temporary.remove() }
            let started = try await broker.start(Self.request(), client: Self.client)
            let error = await refusal(broker, flowID: started.flowID, answer: ["customData": ["subject": "intruder"]])
            #expect(error?.code == ErrorCode("custom_api_bad_status"), "\(authentication)")
            #expect(error?.reason == "status_401")
            #expect(try api.calls().contains { $0.body.contains(started.flowID) && $0.problem != nil })
            // Not the person's fault: the flow stays open and nothing was counted against it.
            let flow = try #require(try await broker.store.flow(id: started.flowID, now: broker.clock.now))
            #expect(flow.failedAttempts == 0)
        }
    }

    @Test func timeoutsMalformedAnswersAndErrorStatusesHaveDistinctCodes() async throws {
        let broker = try await broker(timeout: "1s")
        defer { broker.temporary.remove() }
        let started = try await broker.start(Self.request(), client: Self.client)
        let before = Date()
        let timeout = await refusal(broker, flowID: started.flowID, answer: ["customData": ["behaviour": "slow"]])
        #expect(timeout?.code == ErrorCode("custom_api_timeout"))
        // The app answers "slow" after 30 s: far enough beyond the 1 s timeout that a loaded machine
        // running every suite at once (seconds of delay seen) cannot blur the two.
        #expect(Date().timeIntervalSince(before) < 20)
        #expect(await refusal(broker, flowID: started.flowID, answer: ["customData": ["behaviour": "status500"]])?.code == ErrorCode("custom_api_bad_status"))
        for behaviour in ["malformed", "no-subject", "huge"] {
            let error = await refusal(broker, flowID: started.flowID, answer: ["customData": ["behaviour": .string(behaviour)]])
            #expect(error?.code == ErrorCode("custom_api_malformed_response"), "\(behaviour)")
        }
        #expect(await refusal(broker, flowID: started.flowID, answer: ["customData": .string(String(repeating: "x", count: 20000))])?.code == .invalidAnswer)
        // After all that, the same flow still completes.
        #expect(try await broker.finish(started.flowID, answer: ["customData": ["subject": "patient"]], client: Self.client).account != nil)
    }

    @Test func anUnreachableAPIIsReportedWithItsOwnCodeAtOnce() async throws {
        // Nothing listens on port 9: the connection is refused, which is an answer, not a reason to
        // wait out the 120 s timeout (the bound below leaves a loaded machine plenty of room).
        let unreachable = try await self.broker(timeout: "120s", url: "http://127.0.0.1:9/gatehouse/register")
        defer { unreachable.temporary.remove() }
        let flow = try await unreachable.start(Self.request(), client: Self.client)
        let started = ContinuousClock.now
        let refused = await refusal(unreachable, flowID: flow.flowID, answer: [:])
        #expect(refused?.code == ErrorCode("custom_api_unreachable"))
        #expect(refused?.kind == .unavailable, "503")
        #expect(ContinuousClock.now - started < .seconds(60), "a refused connection fails at once, not at the timeout")
    }

    @Test func readinessReportsWhetherTheAppsAPIAnswers() async throws {
        let up = try await broker()
        defer { up.temporary.remove() }
        let reachable = try #require(await up.broker.plugins.healthReporters["bank"]?.health())
        #expect(reachable.healthy, "\(reachable)")
        let down = try await self.broker(url: "http://127.0.0.1:9/gatehouse/register")
        defer { down.temporary.remove() }
        let unreachable = try #require(await down.broker.plugins.healthReporters["bank"]?.health())
        #expect(!unreachable.healthy && unreachable.detail?.contains("the app's API") == true, "\(unreachable)")
        #expect(await down.broker.readiness().checks["bank"]?.healthy == false)
    }

    @Test func statelessSignInPersistsNothing() async throws {
        let broker = try await broker(stateless: true)
        defer { broker.temporary.remove() }
        let tables: [StoreTable] = [.accounts, .identityLinks, .flows, .refreshTokens, .authorizationCodes, .pluginData, .revocations]
        let before = try await broker.store.rowCounts(tables)
        let done = try await broker.signIn(
            Self.request(stateless: true), answer: ["customData": ["subject": "ghost-1", "claims": ["email": "ghost@bank.example"]]], client: Self.client)
        #expect(done.account == nil)
        #expect(done.tokens.refreshToken == nil)
        #expect(try await broker.store.rowCounts(tables) == before)

        let introspection = try await broker.broker.oauth.introspect(
            token: done.tokens.accessToken, client: Self.client
        )
        #expect(introspection["active"] == .bool(true))
        #expect(introspection["stateless"] == .bool(true))
        #expect(introspection["sub"] == "bank|ghost-1")
        let success = try await broker.store.auditEvents(type: "signin.success", appID: "notes", accountID: nil, since: nil, limit: 1)
        #expect(success.first?.details["stateless"] == "true")
        #expect(success.first?.details["username"] == nil, "the audit log keeps no trace of who signed in statelessly")

        await #expect(throws: BrokerError.stateless(.refresh)) {
            _ = try await broker.start(Self.request(stateless: true, scopes: ["openid", "offline_access"]), client: Self.client)
        }

        // The same count does see a stateful sign-in.
        _ = try await broker.signIn(Self.request(), answer: ["customData": ["subject": "solid-1"]], client: Self.client)
        let after = try await broker.store.rowCounts(tables)
        #expect(after[.accounts] == (before[.accounts] ?? 0) + 1 && after[.refreshTokens] == (before[.refreshTokens] ?? 0) + 1)
    }

    @Test func theAdminToggleFlipsStatelessWithoutARestart() async throws {
        let broker = try await broker(stateless: false)
        defer { broker.temporary.remove() }
        let admin = AdminIdentity(name: "ops")
        await #expect(throws: BrokerError(.statelessDisabled, .forbidden, "Stateless authentication is not enabled for this app.")) {
            _ = try await broker.start(Self.request(stateless: true), client: Self.client)
        }
        _ = try await broker.broker.admin.patchPolicy(id: "notes", patch: ["statelessAuthentication": true], by: admin)
        let done = try await broker.signIn(Self.request(stateless: true), answer: ["customData": ["subject": "ghost-2"]], client: Self.client)
        #expect(done.account == nil)
        _ = try await broker.broker.admin.patchPolicy(id: "notes", patch: ["statelessAuthentication": false], by: admin)
        await #expect {
            _ = try await broker.start(Self.request(stateless: true), client: Self.client)
        } throws: { error in
            (error as? BrokerError)?.code == .statelessDisabled
        }
        // A flow opened while stateless was on cannot finish after it was turned off.
        _ = try await broker.broker.admin.patchPolicy(id: "notes", patch: ["statelessAuthentication": true], by: admin)
        let open = try await broker.start(Self.request(stateless: true), client: Self.client)
        _ = try await broker.broker.admin.patchPolicy(id: "notes", patch: ["statelessAuthentication": false], by: admin)
        #expect(await refusal(broker, flowID: open.flowID, answer: ["customData": ["subject": "ghost-3"]])?.code == .statelessDisabled)
    }

    @Test func refusesPlainHTTPOutsideDevelopmentAndWeakSecrets() throws {
        var registry = PluginRegistry()
        registry.register(CustomAPIPlugin.self)
        func issues(_ yaml: String) -> [String] { configIssues(yaml, registry: registry, environment: ["NOTES_SECRET": Self.appSecret]) }
        let development = Self.yaml(url: "http://127.0.0.1:1/api")
        #expect(issues(development).isEmpty)
        let production = development.replacingOccurrences(of: "environment: development\n", with: "")
        #expect(issues(production).contains { $0.hasPrefix("providers[0].config.url: must be https://") })
        #expect(issues(production.replacingOccurrences(of: "http://", with: "https://")).isEmpty)
        #expect(issues(development.replacingOccurrences(of: AppAPIServer.secret, with: "short")).contains { $0.hasPrefix("providers[0].config.secret:") })
        #expect(issues(development.replacingOccurrences(of: "mode: one-step", with: "mode: three-step")).contains { $0.hasPrefix("providers[0].config.mode:") })
        #expect(
            issues(development.replacingOccurrences(of: "maxRetries: 2", with: "maxRetries: 2\n      allowedClaims: [email, sub]")).contains {
                $0.hasPrefix("providers[0].config.allowedClaims:")
            })
    }
}
