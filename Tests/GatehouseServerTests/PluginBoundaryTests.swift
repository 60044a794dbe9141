import Foundation
@testable import GatehouseCore
@testable import GatehouseServer
import GatehouseTesting
import Hummingbird
import LocalPassword
import HummingbirdTesting
import NIOCore
import RiddlePlugin
import Testing

/// The plugin boundary: a plugin that exists only in the tests brings a challenge type the server has
/// never heard of; the flow API and the generic page handle it from its declaration alone.
extension GatehouseServerTests {
    static let riddleYAML = """
        providers:
          - id: sphinx
            type: riddle
            config: {question: "What walks on four legs in the morning?", answer: man}
        apps:
          - id: thebes
            name: Thebes
            redirectURIs: [https://thebes.example/callback]
            policy:
              identityProviders: [sphinx]
              selfRegistration: true
        """

    /// The sphinx's and the oracle's riddles, each with `extra` config keys (`handOffTo: oracle`), for
    /// the tests of continuations, hand-overs and root pages; `apps` follows.
    static func sphinxAndOracle(sphinx extra: String = "", oracle oracleExtra: String = "", question: String = "What walks on four legs in the morning?") -> String {
        """
        providers:
          - id: sphinx
            type: \(extra.isEmpty ? "riddle" : "handing-riddle")
            config: {question: "\(question)", answer: man\(extra)}
          - id: oracle
            type: \(oracleExtra.isEmpty ? "riddle" : "handing-riddle")
            config: {question: "What is always ahead of you?", answer: future\(oracleExtra)}

        """
    }

    /// Answers a JSON flow's challenge.
    static func answer(_ test: TestBroker, _ flow: String, _ fields: [String: JSONValue]) async throws -> FlowOutcome {
        try await test.engine.resume(flowID: flow, answer: ChallengeResponse(fields), client: nil)
    }

    static func riddleBroker(yaml: String = riddleYAML) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(RiddlePlugin.self)
        registry.register(HandingRiddlePlugin.self)
        return try await TestBroker.make(yaml: yaml, registry: registry)
    }

    /// `identifiedFlowCompleted`: the provider that identified the person hears of the flow's
    /// completion only once every factor passed and the identity is linked, with the account (new or
    /// not); a flow abandoned at the factor tells it nothing.
    @Test func theIdentifyingProviderHearsOfTheCompletionOnlyAfterEveryFactorWithTheAccount() async throws {
        var registry = PluginRegistry()
        registry.register(RiddlePlugin.self)
        registry.register(HandingRiddlePlugin.self)
        registry.register(KnockPlugin.self)
        let yaml = Self.riddleYAML.replacingOccurrences(of: "apps:\n", with: "  - id: knock\n    type: knock\napps:\n")
            .replacingOccurrences(
                of: "      identityProviders: [sphinx]\n", with: "      identityProviders: [sphinx]\n      authenticators: [knock]\n      secondFactor: knock\n")
        let test = try await TestBroker.make(yaml: yaml, registry: registry)
        defer { test.temporary.remove() }
        func solved() async throws -> [AuditEvent] { try await test.store.auditEvents(type: "riddle.solved", appID: "thebes", accountID: nil, since: nil, limit: 5) }
        let (abandoned, _) = try await test.start(FlowRequest(appID: "thebes", providerID: "sphinx", purpose: .register))
        guard case .challenge(_, let knock, _) = try await Self.answer(test, abandoned, ["name": "oedipus", "answer": "man"]) else { Issue.record("no factor"); return }
        #expect(knock.type == "knock")
        #expect(try await solved().isEmpty, "not before the factor")
        let (flow, _) = try await test.start(FlowRequest(appID: "thebes", providerID: "sphinx"))
        _ = try await Self.answer(test, flow, ["name": "oedipus", "answer": "man"])
        let (_, account) = try await test.finish(flow, answer: ["word": "open"])
        let events = try await solved()
        #expect(events.count == 1 && events.first?.accountID == account?.id && events.first?.details["name"] == "oedipus")
    }

    @Test func aChallengeTypeTheServerNeverHeardOfCompletesThroughTheFlowAPI() async throws {
        let test = try await Self.riddleBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let started = try Self.object(try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"thebes","provider":"sphinx"}"#)))
            let flow = try #require(started["flow"]?.stringValue)
            guard case .object(let challenge)? = started["challenge"] else {
                Issue.record("no challenge: \(started)")
                return
            }
            #expect(challenge["type"] == "riddle")
            // The answer fields come from the declaration (the hidden one is the page's own).
            #expect(challenge["fields"] == ["name", "answer"])
            #expect(challenge["question"] == "What walks on four legs in the morning?")

            func answer(_ body: String) async throws -> TestResponse {
                try await client.execute(uri: "/v1/flows/\(flow)", method: .post, body: Self.json(body))
            }
            // Fields the declaration does not have, or too long for it, never reach the plugin.
            let unknown = try await answer(#"{"answer":{"name":"oedipus","answer":"man","riddle":"x"}}"#)
            #expect(unknown.status == .badRequest)
            #expect(try Self.object(unknown)["error"] == "invalid_request")
            #expect(try Self.object(unknown)["field"] == "answer.riddle")
            let long = try await answer(#"{"answer":{"name":"\#(String(repeating: "o", count: 33))","answer":"man"}}"#)
            #expect(try Self.object(long)["field"] == "answer.name")
            let mistyped = try await answer(#"{"answer":{"name":7,"answer":"man"}}"#)
            #expect(try Self.object(mistyped)["field"] == "answer.name")
            // The declared extra button, then a wrong and a right answer.
            let hinted = try Self.object(try await answer(#"{"answer":{"hint":true}}"#))
            #expect(hinted["status"] == "challenge")
            let wrong = try await answer(#"{"answer":{"name":"oedipus","answer":"a horse"}}"#)
            #expect(wrong.status == .badRequest)
            #expect(try Self.object(wrong)["error"] == "invalid_credentials")
            let done = try Self.object(try await answer(#"{"answer":{"name":"oedipus","answer":"Man"}}"#))
            #expect(done["status"] == "completed")
            guard case .object(let account)? = done["account"] else {
                Issue.record("no account: \(done)")
                return
            }
            #expect(account["username"] == "oedipus")
        }
    }

    @Test func theGenericPageShowsADeclaredChallengeAsItsPluginDescribesIt() async throws {
        let test = try await Self.riddleBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let page = try await client.execute(
                uri: Self.authorizeQuery(client: "thebes", redirect: "https://thebes.example/callback"), method: .get
            )
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(html.contains("<h1>Answer the riddle</h1>"))
            #expect(html.contains("<p>Riddle: What walks on four legs in the morning?</p>"))
            #expect(html.contains(#"<label for="field-name">Your name</label>"#))
            #expect(html.contains(#"name="answer" type="password" autocomplete="off""#))
            #expect(html.contains(#"<input type="hidden" name="round" value="1">"#))
            #expect(html.contains(#"<button type="submit" name="hint" value="true" class="secondary" formnovalidate>Give me a hint</button>"#))
            #expect(html.contains(#"<a class="link-out" href="https://riddles.example/rules">Riddle rules</a>"#))
            #expect(html.contains(#"<button type="submit">Answer</button>"#))
            // The plugin's picture as an image (never inline SVG), and its facts as they are.
            #expect(html.contains(#"<img class="challenge-image" src="data:image/svg+xml;base64,"#))
            #expect(html.contains(#"alt="A sphinx">"#))
            #expect(html.contains(#"<p class="fact-label">Round</p>"#) && html.contains(#"<code class="fact">1</code>"#))
            #expect(html.contains(#"<li><code class="fact">One answer per round</code></li>"#))
            #expect(!html.contains("<svg"))
            // The plugin's declared script, as a file named in the policy, with its data in an attribute.
            let issuer = test.broker.config.server.issuer
            #expect(page.headers[.contentSecurityPolicy]?.contains("img-src data:; script-src \(issuer)/assets/challenges/riddle.js;") == true)
            #expect(html.contains(#"<script src="\#(issuer)/assets/challenges/riddle.js" defer></script>"#))
            #expect(html.contains(#"data-challenge="{&quot;question&quot;:&quot;What walks on four legs in the morning?&quot;,&quot;round&quot;:&quot;1&quot;}""#))
            let script = try await client.execute(uri: "/assets/challenges/riddle.js", method: .get)
            #expect(script.status == .ok && script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(String(buffer: script.body).contains("riddle-script"))
            #expect(try await client.execute(uri: "/assets/challenges/credentials.js", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/assets/challenges/riddle.css", method: .get).status == .notFound)
        }
    }

    /// Only `data:` pictures of the allowed types, in base64, reach a page: a plugin cannot make a
    /// page load or run anything through its picture.
    @Test func aChallengePictureMustBeABase64DataURLOfAnAllowedType() {
        #expect(ChallengeImage.isUsable(ChallengeImage.svgDataURL("<svg/>")))
        #expect(ChallengeImage.isUsable("data:image/png;base64,iVBORw0KGgo="))
        #expect(!ChallengeImage.isUsable("https://evil.example/qr.svg"))
        #expect(!ChallengeImage.isUsable("javascript:alert(1)"))
        #expect(!ChallengeImage.isUsable("data:text/html;base64,PHNjcmlwdD4="))
        #expect(!ChallengeImage.isUsable("data:image/svg+xml,<svg onload=alert(1)>"))
        #expect(!ChallengeImage.isUsable(#"data:image/png;base64,AA" onerror="x"#))
        #expect(!ChallengeImage.isUsable("data:image/png;base64,"))
        #expect(!ChallengeImage.isUsable("data:image/png;base64," + String(repeating: "A", count: ChallengeImage.maxLength)))
    }

    /// An account operation that needs a fresh sign-in (the riddle's `forget_me`) runs with a token
    /// from a recent sign-in, and refuses one whose sign-in is older, also after a refresh, with RFC
    /// 9470's step-up challenge: 401 `insufficient_user_authentication` and `max_age`.
    @Test func anAccountOperationCanRequireAFreshSignIn() async throws {
        let test = try await Self.riddleBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let started = try Self.object(try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"thebes","provider":"sphinx"}"#)))
            let flow = try #require(started["flow"]?.stringValue)
            let done = try Self.object(
                try await client.execute(uri: "/v1/flows/\(flow)", method: .post, body: Self.json(#"{"answer":{"name":"oedipus","answer":"man"}}"#))
            )
            let tokens = try #require(done["tokens"]?.objectValue)
            let signedInAt = test.clock.now
            @Sendable func call(_ operation: String, _ token: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/v1/account/operations/sphinx/\(operation)", method: .post, headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                    body: Self.json("{}"))
            }
            let access = try #require(tokens["access_token"]?.stringValue)
            let whoami = try Self.object(try await call("whoami", access))
            #expect(whoami["signedInAt"] == .number(signedInAt.timeIntervalSince1970.rounded(.down)))
            #expect(whoami["methods"]?.arrayValue?.contains("kba") == true)
            let fresh = try await call("forget_me", access)
            #expect(fresh.status == .ok)
            #expect(try Self.object(fresh) == ["forgotten": "oedipus"])

            test.clock.advance(by: 301)
            let refreshed = try Self.object(
                try await client.execute(
                    uri: "/oauth2/token", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: "grant_type=refresh_token&client_id=thebes&refresh_token=\(try #require(tokens["refresh_token"]?.stringValue))")
                )
            )
            let newAccess = try #require(refreshed["access_token"]?.stringValue)
            let stale = try await call("forget_me", newAccess)
            #expect(stale.status == .unauthorized)
            #expect(try Self.object(stale)["error"] == "insufficient_user_authentication")
            #expect(stale.headers[.wwwAuthenticate] == #"Bearer realm="gatehouse", error="insufficient_user_authentication", max_age="300""#)
            #expect(try await call("whoami", newAccess).status == .ok, "operations that do not ask for a fresh sign-in still run")
        }
    }
}

// MARK: - Per-app settings

extension GatehouseServerTests {
    /// The riddle plugin's settings (`policy.plugins.sphinx`): checked by the plugin with their exact
    /// path, changed at run time through the admin service (audited), read by the plugin at the next
    /// step, and drawn in the console's policy form only for the app that uses the plugin.
    @Test func aPluginsPerAppSettingsAreCheckedChangedAtRunTimeAndShownOnlyWhereUsed() async throws {
        let yaml =
            Self.riddleYAML + """

                      plugins: {sphinx: {hints: off}}
                  - id: corinth
                    name: Corinth
                    redirectURIs: [https://corinth.example/callback]
                """
        let test = try await Self.riddleBroker(yaml: yaml)
        defer { test.temporary.remove() }
        let admin = AdminIdentity(name: "ops")
        func riddle() async throws -> String { try await test.start(FlowRequest(appID: "thebes", providerID: "sphinx")).flowID }
        func answer(_ flow: String, _ fields: [String: JSONValue]) async throws -> FlowOutcome { try await Self.answer(test, flow, fields) }

        let noHints = try await riddle()
        #expect(await thrownError(BrokerError.self) { _ = try await answer(noHints, ["hint": true]) }?.message == "This app gives no hints.")

        let refused = await thrownError(BrokerError.self) {
            _ = try await test.broker.admin.patchPolicy(id: "thebes", patch: ["plugins": ["sphinx": ["matching": "loose"]]], by: admin)
        }
        #expect(refused?.issues.map(\.description) == ["policy.plugins.sphinx.matching: must be exact or any-case, got 'loose'"])
        let stranger = await thrownError(BrokerError.self) {
            _ = try await test.broker.admin.patchPolicy(id: "thebes", patch: ["plugins": ["oracle": ["hints": true]]], by: admin)
        }
        #expect(stranger?.issues.map(\.description) == ["policy.plugins.oracle: no provider with id 'oracle' is configured"])
        let typo = await thrownError(BrokerError.self) { _ = try await test.broker.admin.patchPolicy(id: "thebes", patch: ["pinPolicy": ["minLength": 6]], by: admin) }
        #expect(typo?.issues.map(\.description) == ["policy.pinPolicy: unknown key"], "no plugin here claims the old key")

        let changed = try await test.broker.admin.patchPolicy(id: "thebes", patch: ["plugins": ["sphinx": ["hints": true, "matching": "exact"]]], by: admin)
        #expect(changed.policy.plugins["sphinx"] == ["hints": true, "matching": "exact"])
        let audited = try await test.store.auditEvents(type: "policy.updated", appID: "thebes", accountID: nil, since: nil, limit: 5)
        #expect(audited.count == 1)

        let hinted = try await riddle()
        guard case .challenge = try await answer(hinted, ["hint": true]) else {
            Issue.record("the hint is offered once the settings allow it")
            return
        }
        #expect(
            await thrownError(BrokerError.self) { _ = try await answer(hinted, ["name": "oedipus", "answer": "Man"]) }?.code == .invalidCredentials, "exact matching")
        guard case .completed = try await answer(hinted, ["name": "oedipus", "answer": "man"]) else {
            Issue.record("the exact answer signs in")
            return
        }

        let form = ConsolePolicyForm(identityProviders: ["sphinx"], authenticators: [], settings: test.broker.plugins.settings)
        let thebes = try #require(try await test.store.app(id: "thebes"))
        let values = form.values(of: thebes.policy)
        #expect(values["plugins"] == ["sphinx": ["hints": true, "matching": "exact"]])
        let legends = form.sections(values: values, errors: [:]).compactMap { $0["legend"] as? String }
        #expect(legends.contains("Settings of sphinx"))
        let corinth = try #require(try await test.store.app(id: "corinth"))
        #expect(!form.sections(values: form.values(of: corinth.policy), errors: [:]).contains { ($0["legend"] as? String)?.hasPrefix("Settings of") == true })
        // The form posts back: an unchecked box is false, a choice its value.
        let posted = form.patch(from: ["policy.plugins.sphinx.matching": "any-case"], template: values)
        #expect(posted["plugins"] == ["sphinx": ["hints": false, "matching": "any-case"]])
    }
}

// MARK: - Plugin endpoints

extension GatehouseServerTests {
    /// The riddle plugin's endpoints (`/v1/plugins/sphinx/...`), one of each caller kind: each answers
    /// only the caller it declares, for apps whose policy lists the instance, with declared fields
    /// only; the server and the broker know none of them by name.
    @Test func aPluginsEndpointsAnswerOnlyTheCallerTheyDeclare() async throws {
        let secret = "delphi-secret-0123456789-abcdefghij"
        let yaml =
            Self.riddleYAML + """

                  - id: delphi
                    name: Delphi
                    secret: \(secret)
                    redirectURIs: [https://delphi.example/callback]
                    policy: {identityProviders: [sphinx]}
                  - id: corinth
                    name: Corinth
                    secret: \(secret)
                    redirectURIs: [https://corinth.example/callback]
                admin:
                  tokens:
                    - {name: ops, token: riddle-admin-token-0123456789-abcdef}
                """
        let test = try await Self.riddleBroker(yaml: yaml)
        defer { test.temporary.remove() }
        @Sendable func basic(_ app: String) -> HTTPFields {
            [.authorization: "Basic " + Data("\(app):\(secret)".utf8).base64EncodedString(), .contentType: "application/json"]
        }
        try await Self.application(test).test(.router) { client in
            let started = try Self.object(try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"thebes","provider":"sphinx"}"#)))
            let flow = try #require(started["flow"]?.stringValue)
            let done = try Self.object(
                try await client.execute(uri: "/v1/flows/\(flow)", method: .post, body: Self.json(#"{"answer":{"name":"oedipus","answer":"man"}}"#))
            )
            let accessToken = try #require(done["tokens"]?.objectValue?["access_token"]?.stringValue)
            let person: HTTPFields = [.authorization: "Bearer \(accessToken)"]

            // A person, with an access token.
            let question = try await client.execute(uri: "/v1/plugins/sphinx/question", method: .get, headers: person)
            #expect(question.status == .ok)
            #expect(try Self.object(question) == ["question": "What walks on four legs in the morning?", "hints": true, "for": "oedipus"])
            #expect(try await client.execute(uri: "/v1/plugins/sphinx/question", method: .get).status == .unauthorized)

            // An app's back end, with its client credentials.
            let right = try await client.execute(uri: "/v1/plugins/sphinx/check", method: .post, headers: basic("delphi"), body: Self.json(#"{"answer":"MAN"}"#))
            #expect(right.status == .ok)
            #expect(try Self.object(right) == ["correct": true])
            let undeclared = try await client.execute(
                uri: "/v1/plugins/sphinx/check", method: .post, headers: basic("delphi"), body: Self.json(#"{"answer":"man","riddle":"x"}"#)
            )
            #expect(undeclared.status == .badRequest)
            #expect(try Self.object(undeclared)["error"] == "invalid_request")
            let notListed = try await client.execute(uri: "/v1/plugins/sphinx/check", method: .post, headers: basic("corinth"), body: Self.json(#"{"answer":"man"}"#))
            #expect(notListed.status == .forbidden)
            #expect(try Self.object(notListed)["error"] == "provider_not_allowed")
            let publicApp = try await client.execute(uri: "/v1/plugins/sphinx/check", method: .post, body: Self.json(#"{"client_id":"thebes","answer":"man"}"#))
            #expect(try Self.object(publicApp)["error"] == "unauthorized_client")
            let withToken = try await client.execute(uri: "/v1/plugins/sphinx/check", method: .post, headers: person, body: Self.json(#"{"answer":"man"}"#))
            #expect(withToken.status == .unauthorized, "a person's token is no app's credentials")

            // An administrator.
            let length = try await client.execute(
                uri: "/v1/plugins/sphinx/answer-length", method: .get, headers: [.authorization: "Bearer riddle-admin-token-0123456789-abcdef"]
            )
            #expect(try Self.object(length) == ["letters": 3, "askedBy": "ops"])
            #expect(try await client.execute(uri: "/v1/plugins/sphinx/answer-length", method: .get, headers: person).status == .unauthorized)

            // Nothing else is routed.
            #expect(try await client.execute(uri: "/v1/plugins/sphinx/riddle", method: .get, headers: person).status == .notFound)
            #expect(try await client.execute(uri: "/v1/plugins/sphinx/question", method: .delete, headers: person).status == .notFound)
            #expect(try await client.execute(uri: "/v1/plugins/oracle/question", method: .get, headers: person).status == .notFound)
        }
        let audited = try await test.store.auditEvents(type: "plugin.endpoint_called", appID: "delphi", accountID: nil, since: nil, limit: 10)
        #expect(audited.count == 1, "the one successful call that may change something")
        #expect(audited.first?.details["path"] == "check")
    }
}

// MARK: - Flow continuations

extension GatehouseServerTests {
    /// A provider hands the flow to another one (`FlowStep.continueWith`): the sphinx's right answer
    /// goes on to the oracle's riddle, and only when the oracle identifies the same name does the
    /// sphinx identify the person. The other provider must be one the app allows.
    @Test func aProviderHandsTheFlowToAnotherAndDecidesOnceItIdentified() async throws {
        let yaml =
            Self.sphinxAndOracle(sphinx: ", handOffTo: oracle") + """
                apps:
                  - id: thebes
                    redirectURIs: [https://thebes.example/callback]
                    policy: {identityProviders: [sphinx, oracle], selfRegistration: true}
                  - id: corinth
                    redirectURIs: [https://corinth.example/callback]
                    policy: {identityProviders: [sphinx], selfRegistration: true}
                """
        let test = try await Self.riddleBroker(yaml: yaml)
        defer { test.temporary.remove() }
        func answer(_ flow: String, _ fields: [String: JSONValue]) async throws -> FlowOutcome { try await Self.answer(test, flow, fields) }

        let flow = try await test.start(FlowRequest(appID: "thebes", providerID: "sphinx", purpose: .register)).flowID
        guard case .challenge(_, let second, _) = try await answer(flow, ["name": "oedipus", "answer": "man"]) else {
            Issue.record("the sphinx hands the flow to the oracle")
            return
        }
        #expect(second.fields["question"] == "What is always ahead of you?")
        guard case .completed(_, let tokens, let account, _) = try await answer(flow, ["name": "oedipus", "answer": "future"]) else {
            Issue.record("the oracle's right answer completes the flow")
            return
        }
        #expect(account?.username == "oedipus")
        let claims = try await test.broker.keyring.verify(tokens.accessToken)
        #expect(claims.amr == ["kba", "oracle", "kba", "sphinx"], "both providers' methods, each named")
        #expect(try await test.store.identityLink(providerID: "sphinx", subject: "oedipus") != nil, "the sphinx's identity is the one linked")
        #expect(try await test.store.identityLink(providerID: "oracle", subject: "oedipus") == nil)

        let impostor = try await test.start(FlowRequest(appID: "thebes", providerID: "sphinx")).flowID
        _ = try await answer(impostor, ["name": "oedipus", "answer": "man"])
        #expect(await thrownError(BrokerError.self) { _ = try await answer(impostor, ["name": "jocasta", "answer": "future"]) }?.code == .accessDenied)
        // The refusal ended the flow (the oracle's answer was counted as right): nobody keeps trying.
        #expect(await thrownError(BrokerError.self) { _ = try await answer(impostor, ["name": "oedipus", "answer": "future"]) }?.code == .flowNotFound)
        let refusals = try await test.store.auditEvents(type: "signin.failure", appID: "thebes", accountID: nil, since: nil, limit: 5)
        #expect(refusals.contains { $0.outcome == "access_denied" })

        let notAllowed = try await test.start(FlowRequest(appID: "corinth", providerID: "sphinx")).flowID
        #expect(await thrownError(BrokerError.self) { _ = try await answer(notAllowed, ["name": "oedipus", "answer": "man"]) }?.code == .providerNotAllowed)
    }
}

// MARK: - Hand-overs, stops and root pages

extension GatehouseServerTests {
    /// A provider hands the flow over for good (`FlowStep.handOver`): the oracle's identity is the
    /// flow's (linked under the oracle), once the sphinx approved it (renaming it); the sphinx is
    /// told when the flow completes (its audit event through the engine, its field beside the
    /// tokens), and may refuse then. Every challenge meanwhile carries the sphinx's annotation.
    @Test func aProviderHandsTheFlowOverAndHearsWhenItCompletes() async throws {
        let yaml =
            Self.sphinxAndOracle(sphinx: ", handOverTo: oracle") + """
                apps:
                  - id: thebes
                    redirectURIs: [https://thebes.example/callback]
                    policy: {identityProviders: [sphinx, oracle], selfRegistration: false}
                """
        let test = try await Self.riddleBroker(yaml: yaml)
        defer { test.temporary.remove() }
        func answer(_ flow: String, _ fields: [String: JSONValue]) async throws -> FlowOutcome { try await Self.answer(test, flow, fields) }
        let flow = try await test.start(FlowRequest(appID: "thebes", providerID: "sphinx")).flowID
        guard case .challenge(_, let second, _) = try await answer(flow, ["name": "oedipus", "answer": "man"]) else {
            Issue.record("the sphinx hands the flow over to the oracle")
            return
        }
        #expect(second.fields["question"] == "What is always ahead of you?" && second.fields["askedBy"] == "sphinx")
        // Someone else answering the oracle is refused by the sphinx, and the flow ends (audited).
        #expect(await thrownError(BrokerError.self) { _ = try await answer(flow, ["name": "jocasta", "answer": "future"]) }?.code == .accessDenied)
        #expect(await thrownError(BrokerError.self) { _ = try await answer(flow, ["name": "oedipus", "answer": "future"]) }?.code == .flowNotFound)
        #expect(
            try await test.store.auditEvents(type: "signin.failure", appID: "thebes", accountID: nil, since: nil, limit: 5).contains { $0.outcome == "access_denied" })

        let passing = try await test.start(FlowRequest(appID: "thebes", providerID: "sphinx")).flowID
        _ = try await answer(passing, ["name": "oedipus", "answer": "man"])
        guard case .completed(_, let tokens, let account, let notice) = try await answer(passing, ["name": "oedipus", "answer": "future"]) else {
            Issue.record("the oracle's right answer completes the flow")
            return
        }
        #expect(account?.username == "OEDIPUS", "the sphinx renamed the identity it approved")
        #expect(try await test.store.identityLink(providerID: "oracle", subject: "oedipus") != nil, "the oracle's identity is the one linked")
        #expect(try await test.store.identityLink(providerID: "sphinx", subject: "oedipus") == nil)
        #expect(notice["riddle"] == ["askedBy": "sphinx", "account": .string(account?.id ?? "")])
        #expect(try await test.broker.keyring.verify(tokens.accessToken).amr == ["kba", "sphinx", "kba", "oracle"])
        let passed = try await test.store.auditEvents(type: "riddle.passed", appID: "thebes", accountID: account?.id, since: nil, limit: 5)
        #expect(passed.first?.details["name"] == "oedipus" && passed.first?.providerID == "oracle")
        // The oracle identified the person: it completes its own part without the sphinx's state.
        let solved = try await test.store.auditEvents(type: "riddle.solved", appID: "thebes", accountID: account?.id, since: nil, limit: 5)
        #expect(!solved.isEmpty && solved.allSatisfy { $0.details["handedState"] == "none" })

        // The sphinx refuses `nobody` at completion: no tokens, and the flow is gone.
        let nobody = try await test.start(FlowRequest(appID: "thebes", providerID: "sphinx")).flowID
        _ = try await answer(nobody, ["name": "nobody", "answer": "man"])
        #expect(await thrownError(BrokerError.self) { _ = try await answer(nobody, ["name": "nobody", "answer": "future"]) }?.code == .accessDenied)
        #expect(await thrownError(BrokerError.self) { _ = try await answer(nobody, ["name": "nobody", "answer": "future"]) }?.code == .flowNotFound)
    }

    /// A provider ends the flow without tokens (`FlowStep.stop`): the app is told the status and the
    /// details as top-level fields of the flow answer; the flow is gone.
    @Test func aProviderStopsTheFlowAndTheAppIsToldWhy() async throws {
        let test = try await Self.riddleBroker()
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let started = try Self.object(try await client.execute(uri: "/v1/flows", method: .post, body: Self.json(#"{"app":"thebes","provider":"sphinx"}"#)))
            let flow = try #require(started["flow"]?.stringValue)
            let stopped = try await client.execute(uri: "/v1/flows/\(flow)", method: .post, body: Self.json(#"{"answer":{"give_up":true}}"#))
            #expect(stopped.status == .ok)
            let body = try Self.object(stopped)
            #expect(body["status"] == "stopped" && body["riddle"]?.objectValue?["gaveUp"] == true && body["tokens"] == nil)
            #expect(body["solution"] == ["answer": "man", "round": "1"], "what the provider's stopping adds once the flow is claimed")
            let again = try await client.execute(uri: "/v1/flows/\(flow)", method: .post, body: Self.json(#"{"answer":{"give_up":true}}"#))
            #expect(again.status == .notFound)
        }
    }

    /// A root page every riddle instance claims (`riddles/{instance}`): the instance the path names
    /// answers with its template inside the broker's layout (escaped, under the strict CSP); a name no
    /// instance knows is the last one's `not_found`, as the error page.
    @Test func aRootPageIsAnsweredByTheInstanceThatKnowsItsPath() async throws {
        let yaml =
            Self.sphinxAndOracle(question: "<b>Four legs</b> in the morning?") + """
                apps:
                  - id: thebes
                    redirectURIs: [https://thebes.example/callback]
                    policy: {identityProviders: [sphinx, oracle]}
                """
        let test = try await Self.riddleBroker(yaml: yaml)
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            for (name, question) in [("sphinx", "&lt;b&gt;Four legs&lt;/b&gt; in the morning?"), ("oracle", "What is always ahead of you?")] {
                let page = try await client.execute(uri: "/riddles/\(name)", method: .get)
                let html = String(buffer: page.body)
                #expect(page.status == .ok && html.contains("\(name) asks: <q>\(question)</q>") && html.contains("letters."), "\(html)")
                #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                // The page's texts in the browser's language, which the plugin is told.
                let french = String(buffer: try await client.execute(uri: "/riddles/\(name)", method: .get, headers: [.acceptLanguage: "fr"]).body)
                #expect(french.contains(#"<html lang="fr""#) && french.contains(" lettres.") && french.contains("<title>Une énigme"), "\(french)")
            }
            let unknown = try await client.execute(uri: "/riddles/minotaur", method: .get)
            #expect(unknown.status == .notFound && String(buffer: unknown.body).contains("No riddle"))
            // A link anyone opens is answered without the fields it does not declare (mail systems
            // and trackers decorate links).
            let decorated = try await client.execute(uri: "/riddles/sphinx?utm_source=mail", method: .get)
            #expect(decorated.status == .ok && String(buffer: decorated.body).contains("sphinx asks"))
        }
    }

    /// A plugin's document is served as it is with its media type (SAML metadata, a text file); a
    /// type a browser would run (HTML) is never served, whatever the plugin answers.
    @Test func aPluginDocumentIsServedAsItIsButNeverAsHTML() async throws {
        let yaml =
            Self.sphinxAndOracle(question: "<b>Four legs</b> in the morning?") + """
                apps:
                  - id: thebes
                    redirectURIs: [https://thebes.example/callback]
                    policy: {identityProviders: [sphinx, oracle]}
                """
        let test = try await Self.riddleBroker(yaml: yaml)
        defer { test.temporary.remove() }
        try await Self.application(test).test(.router) { client in
            let text = try await client.execute(uri: "/riddles/sphinx/riddle.txt", method: .get)
            #expect(text.status == .ok && text.headers[.contentType] == "text/plain; charset=utf-8")
            #expect(text.headers[.contentSecurityPolicy] == "default-src 'none'; sandbox")
            #expect(String(buffer: text.body) == "sphinx asks: <b>Four legs</b> in the morning?\n")
            let html = try await client.execute(uri: "/riddles/sphinx/riddle.html", method: .get)
            #expect(html.status == .internalServerError && html.headers[.contentType] != "text/html")
            #expect(!String(buffer: html.body).contains("<b>Four legs"))
        }
        #expect(PluginEndpointAnswer.isServableDocumentType("application/samlmetadata+xml"))
        #expect(!PluginEndpointAnswer.isServableDocumentType("application/xhtml+xml"))
        #expect(!PluginEndpointAnswer.isServableDocumentType("image/svg+xml"))
        #expect(!PluginEndpointAnswer.isServableDocumentType("text/javascript"))
    }

    /// Root endpoints the server serves itself, parameters outside a root path, pages for a caller a
    /// browser cannot prove, and `anyone` outside a root path are refused when the config is read.
    @Test func rootEndpointDeclarationsThatCannotWorkAreRefused() {
        func problem(_ endpoint: PluginEndpoint) -> String? { PluginRegistry.endpointProblem([endpoint]) }
        #expect(problem(PluginEndpoint(.get, "oauth2/token", summary: "", caller: .anyone, root: true))?.contains("serves itself") == true)
        #expect(problem(PluginEndpoint(.get, "v1/flows/x", summary: "", caller: .anyone, root: true))?.contains("serves itself") == true)
        #expect(problem(PluginEndpoint(.get, "items/:id", summary: "", caller: .admin))?.contains("parameter") == true)
        #expect(problem(PluginEndpoint(.get, "items", summary: "", caller: .anyone))?.contains("anyone") == true)
        #expect(problem(PluginEndpoint(.get, "items", summary: "", caller: .appClient, root: true, format: .page))?.contains("page") == true)
        #expect(problem(PluginEndpoint(.get, "items/:", summary: "", caller: .anyone, root: true))?.contains("unusable") == true)
        #expect(problem(PluginEndpoint(.get, "items/**", summary: "", caller: .anyone, root: true))?.contains("unusable") == true)
        #expect(problem(PluginEndpoint(.get, ":any/items", summary: "", caller: .anyone, root: true))?.contains("unusable") == true)
        #expect(problem(PluginEndpoint(.get, "items", summary: "", caller: .accessToken, root: true))?.contains("access token") == true)
        #expect(problem(PluginEndpoint(.get, "items/:id", summary: "", caller: .anyone, root: true)) == nil)
    }
}

extension GatehouseServerTests {
    /// A flow is handed on once: a provider that hands flows over is never handed one (by a
    /// continuation or a hand-over), and a hand-over is refused in a browser flow.
    @Test func aProviderThatHandsOverIsNeverHandedAFlow() async throws {
        let yaml =
            Self.sphinxAndOracle(sphinx: ", handOffTo: oracle", oracle: ", handOverTo: pythia") + """
                  - id: pythia
                    type: riddle
                    config: {question: "Know what?", answer: thyself}
                apps:
                  - id: thebes
                    redirectURIs: [https://thebes.example/callback]
                    policy: {identityProviders: [sphinx, oracle, pythia], selfRegistration: true}
                  - id: delphi
                    redirectURIs: [https://delphi.example/callback]
                    policy: {identityProviders: [oracle], selfRegistration: true}
                """
        let test = try await Self.riddleBroker(yaml: yaml)
        defer { test.temporary.remove() }
        let flow = try await test.start(FlowRequest(appID: "thebes", providerID: "sphinx")).flowID
        let refused = await thrownError(BrokerError.self) {
            _ = try await test.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "oedipus", "answer": "man"]), client: nil)
        }
        #expect(refused?.code == .providerNotAllowed)
        // In a browser, the oracle may not hand over (what it is told at the end is for an app), and
        // a provider that stops the flow sends the browser back to the app with access_denied.
        try await Self.application(test).test(.router) { client in
            let authorize = Self.authorizeQuery(client: "delphi", redirect: "https://delphi.example/callback")
            let page = try await Self.openSignInPage(client, authorizeURI: authorize)
            let handingOver = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: page.headers,
                body: ByteBuffer(string: Self.encode(["flow": page.flow, "csrf": page.csrf, "name": "oedipus", "answer": "future", "round": "1"]))
            )
            #expect(handingOver.status == .badRequest && String(buffer: handingOver.body).contains("flow API"))
            let again = try await Self.openSignInPage(client, authorizeURI: authorize)
            let givingUp = try await client.execute(
                uri: "/oauth2/authorize/answer", method: .post, headers: again.headers,
                body: ByteBuffer(string: Self.encode(["flow": again.flow, "csrf": again.csrf, "give_up": "true", "round": "1"]))
            )
            #expect(givingUp.status == .seeOther)
            let back = Self.query(of: try #require(givingUp.headers[.location]))
            #expect(back["error"] == "access_denied" && back["state"] == "s-123" && back["code"] == nil)
        }
    }

    /// Every page template of the built-in plugins and the riddle plugin parses.
    @Test func everyPluginPageTemplateParses() async throws {
        for test in [try await Self.brokerWithActivation(), try await Self.riddleBroker()] {
            defer { test.temporary.remove() }
            let routes = PluginRootRoutes(broker: test.broker)
            #expect(routes.renderer.brokenTemplates.isEmpty, "\(routes.renderer.brokenTemplates)")
            #expect(test.broker.plugins.pageTemplates.values.contains { !$0.isEmpty })
        }
    }
}

// MARK: - People's credentials in the console

extension GatehouseServerTests {
    /// A resource of people's data (the riddle's `sightings`: `accountField`, `creatable: false`) is
    /// listed on each person's page of the console with a remove button that comes back there; the
    /// provider's page offers no form to add one, and the broker refuses an add from anywhere.
    /// On the account page a person removes only what is theirs: another account's credential,
    /// device or session named by its id is not found.
    @Test func theAccountPageActsOnlyOnThePersonsOwnThings() async throws {
        let yaml = """
            providers:
              - id: sphinx
                type: riddle
                config: {question: "What walks on four legs in the morning?", answer: man}
            apps:
              - id: thebes
                name: Thebes
                redirectURIs: [https://thebes.example/callback]
                policy: {identityProviders: [sphinx], selfRegistration: true}
            """
        var registry = PluginRegistry()
        registry.register(RiddlePlugin.self)
        let test = try await TestBroker.make(yaml: yaml, registry: registry)
        defer { test.temporary.remove() }
        var accounts: [String] = []
        for name in ["oedipus", "antigone"] {
            let (tokens, account) = try await test.signIn(FlowRequest(appID: "thebes", providerID: "sphinx"), answer: ["name": .string(name), "answer": "man"])
            accounts.append(try #require(account?.id))
            _ = try await test.broker.accountOperations.perform(
                plugin: "sphinx", operation: "whoami", fields: [:], accessToken: PresentedToken(scheme: .bearer, token: tokens.accessToken), clientIP: nil)
        }
        let page = AccountPageService(broker: test.broker)
        // A sign-in that did not pass the credential's own provider (a password alone) removes nothing.
        let passwordOnly = await thrownError {
            try await page.removeCredential(provider: "sphinx", resource: "sightings", key: [accounts[0]], accountID: accounts[0], methods: ["pwd", "local"])
        }
        #expect(passwordOnly?.code == .reauthenticationRequired)
        let refused = await thrownError {
            try await page.removeCredential(provider: "sphinx", resource: "sightings", key: [accounts[1]], accountID: accounts[0], methods: ["sphinx"])
        }
        #expect(refused?.code == .notFound)
        #expect(try await test.broker.admin.accountResourceItems(accountID: accounts[1]).first?.items.count == 1)
        try await page.removeCredential(provider: "sphinx", resource: "sightings", key: [accounts[0]], accountID: accounts[0], methods: ["kba", "sphinx"])
        #expect(try await test.broker.admin.accountResourceItems(accountID: accounts[0]).first?.items.isEmpty == true)
        #expect(await thrownError { try await page.endSession("someone-elses", accountID: accounts[0]) }?.code == .notFound)
        #expect(await thrownError { try await test.broker.devices.remove("someone-elses", ownAccountID: accounts[0]) }?.code == .notFound)
        #expect(await thrownError { try await test.broker.devices.rename("someone-elses", alias: "x", ownAccountID: accounts[0]) }?.code == .notFound)
        #expect(await thrownError { try await test.broker.oauth.revokeConsent(appID: "thebes", accountID: accounts[0]) }?.code == .notFound)
    }

    @Test func theConsoleShowsAPersonsCredentialsOnTheirPageAndRemovesThem() async throws {
        let yaml = """
            providers:
              - id: local
                type: local
                config: {bcryptCost: 4}
              - id: sphinx
                type: riddle
                config: {question: "What walks on four legs in the morning?", answer: man}
            apps:
              - id: web
                name: Web
                secret: ${WEB_SECRET}
                redirectURIs: [https://web.example/callback]
                policy: {identityProviders: [local]}
              - id: thebes
                name: Thebes
                redirectURIs: [https://thebes.example/callback]
                policy: {identityProviders: [sphinx], selfRegistration: true}
            admin:
              tokens:
                - {name: bootstrap, token: \(Self.consoleToken)}
              console:
                identityProviders: [local]
            """
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        registry.register(RiddlePlugin.self)
        registry.register(HandingRiddlePlugin.self)
        let test = try await TestBroker.make(yaml: yaml, registry: registry, environment: ["WEB_SECRET": Self.webSecret])
        defer { test.temporary.remove() }
        let keeper = try #require(test.broker.plugins.passwordKeepers["local"])
        _ = try await keeper.addUser(username: "alice", password: "correct horse battery", policy: PasswordPolicy())
        let (tokens, oedipus) = try await test.signIn(FlowRequest(appID: "thebes", providerID: "sphinx"), answer: ["name": "oedipus", "answer": "man"])
        let accountID = try #require(oedipus?.id)
        _ = try await test.broker.accountOperations.perform(
            plugin: "sphinx", operation: "whoami", fields: [:], accessToken: PresentedToken(scheme: .bearer, token: tokens.accessToken), clientIP: nil
        )
        let added = await thrownError {
            _ = try await test.broker.admin.createResourceItem("sightings", of: .provider("sphinx"), fields: [:], by: AdminIdentity(name: "ops"))
        }
        #expect(added?.code == .invalidRequest)

        try await Self.application(test).test(.router) { client in
            let alice = try await Self.administratorSignIn(client, test)
            let provider = String(buffer: try await client.execute(uri: "/admin/providers/sphinx", method: .get, headers: [.cookie: alice.cookie]).body)
            #expect(provider.contains("People who asked the riddle who they are") && !provider.contains("/admin/resources/providers/sphinx/sightings/add"))
            let page = String(buffer: try await client.execute(uri: "/admin/users/\(accountID)", method: .get, headers: [.cookie: alice.cookie]).body)
            #expect(page.contains("<h2>People who asked the riddle who they are (sphinx)</h2>"))
            #expect(page.contains("<td>oedipus</td>"))
            // Remove asks first: the link opens a confirmation that names the item and carries its key.
            let link = try #require(page.firstMatch(of: try Regex(#"href="(/admin/resources/providers/sphinx/sightings/remove\?[^"]+)""#)))
            let confirmURI = String(link.output[1].substring!).replacingOccurrences(of: "&amp;", with: "&")
            let confirm = String(buffer: try await client.execute(uri: confirmURI, method: .get, headers: [.cookie: alice.cookie]).body)
            #expect(confirm.contains("id=\"confirm\"") && confirm.contains(accountID))
            let form = try Self.formValues(confirm, action: "/admin/resources/providers/sphinx/sightings/remove")
            #expect(form["key.account"] == accountID && form["return"] == "/admin/users/\(accountID)")
            let removed = try await client.execute(
                uri: "/admin/resources/providers/sphinx/sightings/remove", method: .post, headers: alice.headers, body: ByteBuffer(string: Self.encode(form))
            )
            #expect(removed.status == .seeOther)
            #expect(removed.headers[.location]?.hasPrefix("/admin/users/\(accountID)") == true)
            #expect(try await test.broker.admin.accountResourceItems(accountID: accountID).first?.items.isEmpty == true)
            let after = String(buffer: try await client.execute(uri: "/admin/users/\(accountID)", method: .get, headers: [.cookie: alice.cookie]).body)
            #expect(!after.contains("<td>oedipus</td>"))
        }
    }
}
