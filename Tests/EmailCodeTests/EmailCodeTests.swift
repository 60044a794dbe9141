import Foundation
import GatehouseCore
import GatehouseStore
import GatehouseTesting
import LocalPassword
import Testing

@testable import EmailCode

/// The `email-code` plugin through the core's real flow engine, sending through a real SMTP server
/// (aiosmtpd with STARTTLS and AUTH) whose delivered messages the tests read the codes from:
/// passwordless sign-in, a second factor after `local`, wrong, expired and reused codes, lockouts
/// growing to permanent and an admin unlock, resend limits, a mail server that is down, and
/// provisional identities attached with and without verification.
@Suite("EmailCode", .shared(SMTPTestServer.self))
struct EmailCodeTests {
    static let vaultSecret = "vault-app-secret-0123456789abcdefghijklmnop"
    static let vault = ClientCredentials(clientID: "vault", secret: vaultSecret)

    var smtp: SMTPTestServer { SMTPTestServer.shared }

    static func yaml(mail: String, templates: Bool = true) -> String {
        """
        environment: development
        \(mail)
        providers:
          - id: local
            type: local
            config:
              bcryptCost: 4
          - id: email
            type: email-code
            config:
              resend: {interval: 30s, maxPerAddress: 3, maxPerIP: 1000}
              lockout: {maxFailures: 3, lockoutDuration: 60s, maxLockoutDuration: 1h, permanentAfter: 3}
        \(templates ? """
                  templates:
                    notes: {subject: "Notes sign-in: {{code}}", text: "Hello from {{app}}: {{code}} works {{minutes}} minutes.", html: "<b>{{app}}</b> {{code}}"}
            """ : "")
        apps:
          - id: notes
            name: Notes & Co
            policy:
              identityProviders: [email]
              selfRegistration: true
              flowLifetime: 30m
          - id: closed
            policy:
              identityProviders: [email]
          - id: plain
            policy:
              identityProviders: [local]
              selfRegistration: true
          - id: vault
            secret: \(vaultSecret)
            policy:
              identityProviders: [local]
              authenticators: [email]
              secondFactor: email
              selfRegistration: true
              lockout: {maxFailedAttemptsPerFlow: 10}
        """
    }

    /// A broker sending through the suite's SMTP server, or as `mail` says; on `temporary`'s store
    /// when given (two brokers on one store are two nodes).
    func broker(mail: String? = nil, clock: TestClock = TestClock(), temporary: TemporaryStore? = nil, templates: Bool = true) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        registry.register(EmailCodePlugin.self)
        return try await TestBroker.make(
            yaml: Self.yaml(mail: mail ?? smtp.mailYAML(), templates: templates), registry: registry, temporary: temporary, clock: clock)
    }

    static func unique(_ name: String) -> String { "\(name)-\(UUID().uuidString.prefix(8).lowercased())@example.com" }

    /// The error an answer is refused with.
    static func refusal(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async -> BrokerError? {
        await thrownError(sourceLocation: sourceLocation, body)
    }

    func answer(_ test: TestBroker, _ flowID: String, _ values: [String: JSONValue], client: ClientCredentials? = nil) async throws -> FlowOutcome {
        try await test.engine.resume(flowID: flowID, answer: ChallengeResponse(values), client: client)
    }

    /// Starts a passwordless flow for `address` and returns it at the code challenge.
    func passwordlessFlow(_ test: TestBroker, _ address: String, app: String = "notes") async throws -> String {
        let started = try await test.start(FlowRequest(appID: app, providerID: "email", clientIP: "192.0.2.10"))
        #expect(started.challenge.type == "email_address")
        guard case .challenge(_, let challenge, _) = try await answer(test, started.flowID, ["email": .string(address)]) else {
            throw FlowDriverError.unexpectedOutcome("no code challenge")
        }
        #expect(challenge.type == "email_code")
        return started.flowID
    }

    // MARK: - Passwordless

    @Test func signsInWithoutPasswordByTheEmailedCode() async throws {
        let test = try await broker()
        defer { test.temporary.remove() }
        let address = Self.unique("pat")
        let flowID = try await passwordlessFlow(test, address.uppercased())
        let message = try #require(try smtp.messages(to: address).last)
        let code = try #require(message.code)
        #expect(message.subject == "Notes sign-in: \(code)")
        #expect(message.text == "Hello from Notes & Co: \(code) works 10 minutes.")
        #expect(message.html == "<b>Notes &amp; Co</b> \(code)")
        let signedIn = try await test.finish(flowID, answer: ["code": .string(code)])
        #expect(signedIn.account?.username == address)
        let links = try await test.store.identityLinks(accountID: try #require(signedIn.account?.id))
        #expect(links.map(\.verifiedEmail) == [EmailAddress(address)])

        // The next sign-in finds the same account.
        let again = try await passwordlessFlow(test, address)
        let second = try await test.finish(again, answer: ["code": .string(try smtp.latestCode(to: address))])
        #expect(second.account?.id == signedIn.account?.id)
    }

    /// The built-in message speaks the flow's language (an operator's own template is sent as written,
    /// as the test above shows).
    @Test func sendsTheBuiltInMessageInTheFlowsLanguage() async throws {
        let test = try await broker(templates: false)
        defer { test.temporary.remove() }
        for language in ["de", "es"] {
            let address = Self.unique("sprache-\(language)")
            var request = FlowRequest(appID: "notes", providerID: "email", clientIP: "192.0.2.10")
            request.language = language
            let started = try await test.start(request)
            _ = try await answer(test, started.flowID, ["email": .string(address)])
            let message = try #require(try smtp.messages(to: address).last)
            let code = try #require(message.code)
            let subject = EmailCodePlugin.translations.text("{{code}} is your {{app}} code", in: language)
            #expect(subject != "{{code}} is your {{app}} code")
            #expect(message.decodedSubject == subject.replacingOccurrences(of: "{{code}}", with: code).replacingOccurrences(of: "{{app}}", with: "Notes & Co"))
            let firstLine = EmailCodePlugin.translations.text("Your {{app}} code is", in: language).replacingOccurrences(of: "{{app}}", with: "Notes &amp; Co")
            #expect(message.html?.contains(firstLine) == true, "\(message.html ?? "")")
            #expect(!message.text.contains("minutes") && message.text.contains(code))
        }
    }

    @Test func createsNoAccountWhenTheAppDoesNotAllowSelfRegistration() async throws {
        let test = try await broker()
        defer { test.temporary.remove() }
        let address = Self.unique("stranger")
        let flowID = try await passwordlessFlow(test, address, app: "closed")
        let refused = await Self.refusal { _ = try await answer(test, flowID, ["code": .string(try smtp.latestCode(to: address))]) }
        #expect(refused?.code == .registrationDisabled)
        #expect(try await test.store.count(table: .accounts) == 0)
    }

    // MARK: - Second factor

    @Test func asksForTheEmailedCodeAfterTheLocalPasswordAndEnrolsTheAddressOnce() async throws {
        let test = try await broker()
        defer { test.temporary.remove() }
        let address = Self.unique("victor")
        let credentials: [String: JSONValue] = ["username": "victor", "password": "correct horse battery"]
        // Registration: the account has no verified address yet, so it names one and proves it.
        let registered = try await test.start(FlowRequest(appID: "vault", providerID: "local", purpose: .register), client: Self.vault)
        guard case .challenge(_, let enrol, _) = try await answer(test, registered.flowID, credentials, client: Self.vault) else {
            throw FlowDriverError.unexpectedOutcome("no enrolment challenge")
        }
        #expect(enrol.type == "email_address")
        _ = try await answer(test, registered.flowID, ["email": .string(address)], client: Self.vault)
        let first = try await test.finish(registered.flowID, answer: ["code": .string(try smtp.latestCode(to: address))], client: Self.vault)
        let account = try #require(first.account)

        // From now on the code goes to that address without asking.
        let started = try await test.start(FlowRequest(appID: "vault", providerID: "local"), client: Self.vault)
        guard case .challenge(_, let challenge, _) = try await answer(test, started.flowID, credentials, client: Self.vault) else {
            throw FlowDriverError.unexpectedOutcome("no code challenge")
        }
        #expect(challenge.type == "email_code")
        #expect(challenge.fields["sentTo"] == .string(try #require(EmailAddress(address)).masked))
        #expect(try smtp.messages(to: address).count == 2)
        // Not the notes template: vault has none, so the built-in one.
        let message = try #require(try smtp.messages(to: address).last)
        #expect(message.subject == "\(try #require(message.code)) is your vault code")
        let signedIn = try await test.finish(started.flowID, answer: ["code": .string(try #require(message.code))], client: Self.vault)
        #expect(signedIn.account?.id == account.id)
        let claims = try await test.broker.oauth.verifyAccessToken(signedIn.tokens.accessToken)
        #expect(claims.amr == ["pwd", "local", "otp", "email"])

        // The enrolled address is a second factor only: the code alone does not reach the account.
        let passwordless = try await passwordlessFlow(test, address)
        let stranger = try await test.finish(passwordless, answer: ["code": .string(try smtp.latestCode(to: address))])
        #expect(stranger.account?.id != account.id)

        // Removing victor's password leaves no way to sign in: the account goes, enrolled address and all.
        #expect(try await test.broker.admin.removePasswordUser(providerID: "local", username: "victor", by: AdminIdentity(name: "ops")))
        #expect(try await test.store.account(id: account.id) == nil)
    }

    @Test func enrolsOnlyInTheFlowThatCreatedTheAccount() async throws {
        let test = try await broker()
        defer { test.temporary.remove() }
        let credentials: [String: JSONValue] = ["username": "olga", "password": "correct horse battery"]
        // The account exists already (made through another app), without any address.
        _ = try await test.signIn(FlowRequest(appID: "plain", providerID: "local", purpose: .register), answer: credentials)
        let started = try await test.start(FlowRequest(appID: "vault", providerID: "local"), client: Self.vault)
        let refused = await Self.refusal { _ = try await answer(test, started.flowID, credentials, client: Self.vault) }
        #expect(refused?.code == .noVerifiedEmail)
        // The refusal ends the flow: whoever knows the password cannot go on to pick an address.
        #expect(try await test.store.flow(id: started.flowID, now: test.clock.now) == nil)
    }

    @Test func refusesAWrongCodeAndCountsItAgainstTheFlow() async throws {
        let test = try await broker()
        defer { test.temporary.remove() }
        let address = Self.unique("wrong")
        let flowID = try await passwordlessFlow(test, address)
        let code = try smtp.latestCode(to: address)
        let wrong = code == "000000" ? "111111" : "000000"
        let refused = await Self.refusal { _ = try await answer(test, flowID, ["code": .string(wrong)]) }
        #expect(refused?.code == .invalidCode)
        #expect(refused?.kind == .failedAttempt)
        let malformed = await Self.refusal { _ = try await answer(test, flowID, ["code": "12ab"]) }
        #expect(malformed?.code == .invalidAnswer)
        // The right code still works in the same flow.
        #expect(try await test.finish(flowID, answer: ["code": .string(code)]).account != nil)
        let failures = try await test.store.auditEvents(type: "signin.failure", appID: "notes", accountID: nil, since: nil, limit: 10)
        #expect(failures.first?.outcome == "invalid_code")
    }

    @Test func refusesAnExpiredCode() async throws {
        let clock = TestClock()
        let test = try await broker(clock: clock)
        defer { test.temporary.remove() }
        let address = Self.unique("late")
        let flowID = try await passwordlessFlow(test, address)
        let code = try smtp.latestCode(to: address)
        clock.advance(by: 9 * 60)
        #expect(await Self.refusal { _ = try await answer(test, flowID, ["code": "999999"]) }?.code != .codeExpired)
        clock.advance(by: 61)
        let refused = await Self.refusal { _ = try await answer(test, flowID, ["code": .string(code)]) }
        #expect(refused?.code == .codeExpired)
    }

    @Test func usesEachCodeOnceAndOnlyInItsOwnFlow() async throws {
        let test = try await broker()
        defer { test.temporary.remove() }
        let address = Self.unique("once")
        let first = try await passwordlessFlow(test, address)
        let code = try smtp.latestCode(to: address)
        let other = try await test.start(FlowRequest(appID: "notes", providerID: "email", clientIP: "192.0.2.10"))
        _ = try await answer(test, other.flowID, ["email": .string(address)])
        let otherCode = try smtp.latestCode(to: address)
        // A code works only for the flow it was sent for.
        if otherCode != code {
            #expect(await Self.refusal { _ = try await answer(test, other.flowID, ["code": .string(code)]) }?.code == .invalidCode)
        }
        _ = try await test.finish(first, answer: ["code": .string(code)])
        // Used: the flow is finished, and the code is gone from the store.
        #expect(await Self.refusal { _ = try await answer(test, first, ["code": .string(code)]) }?.code == .flowNotFound)
        #expect(try await test.store.pluginRecord(namespace: "email", key: "code:flow:\(first)", now: test.clock.now) == nil)
    }

    @Test func resendReplacesTheCodeWithinItsLimits() async throws {
        let clock = TestClock()
        let test = try await broker(clock: clock)
        defer { test.temporary.remove() }
        let address = Self.unique("resend")
        let flowID = try await passwordlessFlow(test, address)
        let firstCode = try smtp.latestCode(to: address)
        let tooSoon = await Self.refusal { _ = try await answer(test, flowID, ["resend": true]) }
        #expect(tooSoon?.code == .rateLimited)
        #expect((tooSoon?.retryAfter ?? 0) > 0)
        clock.advance(by: 31)
        _ = try await answer(test, flowID, ["resend": true])
        let secondCode = try smtp.latestCode(to: address)
        #expect(try smtp.messages(to: address).count == 2)
        if secondCode != firstCode {
            #expect(await Self.refusal { _ = try await answer(test, flowID, ["code": .string(firstCode)]) }?.code == .invalidCode)
        }
        clock.advance(by: 31)
        _ = try await answer(test, flowID, ["resend": true])
        clock.advance(by: 31)
        // The fourth code to one address within the hour is one too many (maxPerAddress: 3).
        let limited = await Self.refusal { _ = try await answer(test, flowID, ["resend": true]) }
        #expect(limited?.code == .rateLimited)
        #expect(try smtp.messages(to: address).count == 3)
    }

    // MARK: - Lockouts

    @Test func locksTheAddressGrowingToPermanentUntilAnAdminUnlocks() async throws {
        let clock = TestClock()
        let test = try await broker(clock: clock)
        defer { test.temporary.remove() }
        let address = Self.unique("locked")
        let key = "email:address:\(address)"
        var lockedFor: [TimeInterval] = []
        for _ in 0..<3 {
            clock.advance(by: 3600)
            let flowID = try await passwordlessFlow(test, address)
            let code = try smtp.latestCode(to: address)
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<2 { #expect(await Self.refusal { _ = try await answer(test, flowID, ["code": .string(wrong)]) }?.code == .invalidCode) }
            let locked = await Self.refusal { _ = try await answer(test, flowID, ["code": .string(wrong)]) }
            #expect(locked?.code == .lockedOut)
            if let until = locked?.lockedUntil { lockedFor.append(until.timeIntervalSince(clock.now)) }
            if locked?.permanent == true { lockedFor.append(.infinity) }
            // While locked, even the right code is refused, and no new code is sent.
            #expect(await Self.refusal { _ = try await answer(test, flowID, ["code": .string(code)]) }?.code == .lockedOut)
        }
        #expect(lockedFor == [60, 120, .infinity])
        let lockouts = try await test.broker.admin.lockouts()
        #expect(lockouts.first { $0.key == key }?.permanent == true)
        clock.advance(by: 86_400 * 365)
        let stillLocked = await Self.refusal { _ = try await passwordlessFlow(test, address) }
        #expect(stillLocked?.code == .lockedOut)
        #expect(stillLocked?.permanent == true)
        #expect(stillLocked?.lockedUntil == nil)
        let audit = try await test.store.auditEvents(type: "lockout.applied", appID: nil, accountID: nil, since: nil, limit: 10)
        #expect(audit.count == 3)
        #expect(audit.first?.details["permanent"] == "true")

        try await test.broker.admin.unlock(key: key, by: AdminIdentity(name: "ops"))
        let flowID = try await passwordlessFlow(test, address)
        #expect(try await test.finish(flowID, answer: ["code": .string(try smtp.latestCode(to: address))]).account != nil)
    }

    @Test func wrongRecoveryCodesLockTheRecoveryAndNeverTheSignIn() async throws {
        let test = try await broker()
        defer { test.temporary.remove() }
        let address = Self.unique("recover")
        let verifier = try #require(test.broker.plugins.addressVerifiers["email"])
        let app = try #require(try await test.store.app(id: "notes"))
        let binding = CodeBinding.recovery(flowID: "stranger-flow")
        _ = try await verifier.sendCode(to: try #require(EmailAddress(address)), binding: binding, app: app.view, clientIP: nil)
        let code = try smtp.latestCode(to: address)
        let wrong = code == "000000" ? "111111" : "000000"
        // A stranger guesses at the recovery codes up to the lock.
        for _ in 0..<2 { #expect(await Self.refusal { _ = try await verifier.checkCode(wrong, binding: binding) }?.code == .invalidCode) }
        #expect(await Self.refusal { _ = try await verifier.checkCode(wrong, binding: binding) }?.code == .lockedOut)
        #expect(await Self.refusal { _ = try await verifier.checkCode(code, binding: binding) }?.code == .lockedOut)
        let keys = try await test.broker.admin.lockouts().map(\.key)
        #expect(keys.contains("email:recovery:\(address)") && !keys.contains("email:address:\(address)"), "\(keys)")
        // The person's sign-in with an emailed code is untouched.
        let flowID = try await passwordlessFlow(test, address)
        #expect(try await test.finish(flowID, answer: ["code": .string(try smtp.latestCode(to: address))]).account != nil)
    }

    // MARK: - Delivery

    @Test func leavesNoUsableCodeWhenTheMailServerIsDown() async throws {
        let down = try await SMTPTestServer.start(security: "starttls", authentication: true)
        let test = try await broker(mail: down.mailYAML())
        defer { test.temporary.remove() }
        await down.remove()
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "email"))
        let refused = await Self.refusal { _ = try await answer(test, started.flowID, ["email": .string(Self.unique("nomail"))]) }
        #expect(refused?.code == .deliveryFailed)
        #expect(refused?.kind == .unavailable)
        #expect(try await test.store.pluginRecord(namespace: "email", key: "code:flow:\(started.flowID)", now: test.clock.now) == nil)
        // The flow is still there to try again.
        #expect(try await test.store.flow(id: started.flowID, now: test.clock.now) != nil)
    }

    @Test func keepsTheSecondFactorRetryableWhenTheCodeCannotBeSent() async throws {
        let clock = TestClock()
        let working = try await broker(clock: clock)
        defer { working.temporary.remove() }
        // Another node on the same store, whose mail fails: the server requires AUTH, and it has none.
        let failing = try await broker(mail: smtp.mailYAML(authentication: false), clock: clock, temporary: working.temporary)
        let address = Self.unique("rita")
        let credentials: [String: JSONValue] = ["username": "rita", "password": "correct horse battery"]

        // Enrolment: a failed delivery leaves the flow at the address step, not counted as a wrong answer.
        let registered = try await failing.start(FlowRequest(appID: "vault", providerID: "local", purpose: .register), client: Self.vault)
        _ = try await answer(failing, registered.flowID, credentials, client: Self.vault)
        let undelivered = await Self.refusal { _ = try await answer(failing, registered.flowID, ["email": .string(address)], client: Self.vault) }
        #expect(undelivered?.code == .deliveryFailed)
        #expect(try await working.store.flow(id: registered.flowID, now: working.clock.now)?.failedAttempts == 0)
        _ = try await answer(working, registered.flowID, ["email": .string(address)], client: Self.vault)
        _ = try await working.finish(registered.flowID, answer: ["code": .string(try smtp.latestCode(to: address))], client: Self.vault)

        // A later sign-in (after the hour that limits codes per address) whose code cannot be sent waits
        // with a retry challenge after the password...
        clock.advance(by: 3601)
        let started = try await failing.start(FlowRequest(appID: "vault", providerID: "local"), client: Self.vault)
        let refused = await Self.refusal { _ = try await answer(failing, started.flowID, credentials, client: Self.vault) }
        #expect(refused?.code == .deliveryFailed)
        let waiting = try #require(try await working.store.flow(id: started.flowID, now: working.clock.now))
        #expect(waiting.challenge.type == Challenge.retryType)
        #expect(waiting.failedAttempts == 0)
        // ...and an empty answer, here on the node whose mail works, sends the code without the password again.
        guard case .challenge(_, let challenge, _) = try await answer(working, started.flowID, [:], client: Self.vault) else {
            throw FlowDriverError.unexpectedOutcome("no code challenge")
        }
        #expect(challenge.type == "email_code")
        let signedIn = try await working.finish(started.flowID, answer: ["code": .string(try smtp.latestCode(to: address))], client: Self.vault)
        #expect(signedIn.account?.username == "rita")
    }

    @Test func refusesTheLogTransportOutsideDevelopment() throws {
        var registry = PluginRegistry()
        registry.register(EmailCodePlugin.self)
        let yaml = "mail:\n  transport: log\nproviders:\n  - id: email\n    type: email-code\n"
        let issues = configIssues(yaml, registry: registry)
        #expect(issues.contains { $0.hasPrefix("mail.transport:") })
        #expect(configIssues("environment: development\n" + yaml, registry: registry).isEmpty)
        let noMail = configIssues("environment: development\nproviders:\n  - id: email\n    type: email-code\n", registry: registry)
        #expect(noMail.contains { $0.hasPrefix("providers[0].config:") && $0.contains("mail:") })
        let provider = "environment: development\nmail: {transport: log}\nproviders:\n  - id: email\n    type: email-code\n    config:\n"
        #expect(configIssues(provider + "      codeLength: 4\n", registry: registry).contains { $0.hasPrefix("providers[0].config.codeLength:") })
        let template = configIssues(provider + "      templates:\n        default: {text: 'no code {{here}}'}\n", registry: registry)
        #expect(template.contains { $0.hasPrefix("providers[0].config.templates.default.text:") && $0.contains("{{here}}") })
    }

    // MARK: - Provisional identities

    func tokens(_ test: TestBroker, _ address: String) async throws -> (String, Account) {
        let flowID = try await passwordlessFlow(test, address)
        let signedIn = try await test.finish(flowID, answer: ["code": .string(try smtp.latestCode(to: address))])
        return (signedIn.tokens.accessToken, try #require(signedIn.account))
    }

    @Test func attachesAProvisionalIdentityAfterVerifyingItsAddress() async throws {
        let test = try await broker()
        defer { test.temporary.remove() }
        let service = test.broker.provisionalIdentities
        let admin = ProvisionalIdentityService.Manager.admin(AdminIdentity(name: "ops"), appID: "notes")
        let invited = Self.unique("invited")
        let (identity, created) = try await service.create(email: invited, grants: ["doc:1:read"], groups: ["editors"], by: admin)
        #expect(created)
        #expect(identity.id.hasPrefix("pi_"))
        _ = try await service.grant(id: identity.id, grants: ["doc:2:write", "doc:1:read"], groups: [], by: admin)

        // The person signed up with another address: the invited one must be proven first.
        let (token, account) = try await tokens(test, Self.unique("other"))
        guard case .verificationNeeded(let email, _) = try await service.attach(id: identity.id, accessToken: .bearer(token), clientIP: nil) else {
            Issue.record("attached without verification")
            return
        }
        #expect(email.value == invited)
        let code = try smtp.latestCode(to: invited)
        let wrong = code == "000000" ? "111111" : "000000"
        #expect(await Self.refusal { _ = try await service.verify(id: identity.id, code: wrong, accessToken: .bearer(token), clientIP: nil) }?.code == .invalidCode)
        let attached = try await service.verify(id: identity.id, code: code, accessToken: .bearer(token), clientIP: nil)
        #expect(attached.accountID == account.id)
        let visible = try await service.attached(accessToken: .bearer(token))
        #expect(visible.map(\.grants) == [["doc:1:read", "doc:2:write"]])
        #expect(visible.map(\.groups) == [["editors"]])
        #expect(try await service.identity(id: identity.id, by: admin).accountID == account.id)
        let user = try await test.broker.admin.user(id: account.id)
        #expect(user.provisionalIdentities.map(\.status) == ["attached"])
        #expect(user.provisionalIdentities.first?.grants == ["doc:1:read", "doc:2:write"])

        // Attaching again, by anyone, is refused with its own code.
        #expect(await Self.refusal { _ = try await service.attach(id: identity.id, accessToken: .bearer(token), clientIP: nil) }?.code == .provisionalIdentityAttached)
        let (intruder, _) = try await tokens(test, invited)
        #expect(await Self.refusal { _ = try await service.attach(id: identity.id, accessToken: .bearer(intruder), clientIP: nil) }?.code == .provisionalIdentityAttached)
    }

    @Test func attachesAtOnceWhenTheAccountHasTheVerifiedAddress() async throws {
        let test = try await broker()
        defer { test.temporary.remove() }
        let service = test.broker.provisionalIdentities
        let admin = ProvisionalIdentityService.Manager.admin(AdminIdentity(name: "ops"), appID: "notes")
        let address = Self.unique("ready")
        let (identity, _) = try await service.create(email: address, grants: ["doc:9:read"], groups: [], by: admin)
        let (again, createdAgain) = try await service.create(email: address.uppercased(), grants: [], groups: ["team"], by: admin)
        #expect(!createdAgain)
        #expect(again.id == identity.id)
        let (token, account) = try await tokens(test, address)
        let sent = try smtp.messages(to: address).count
        guard case .ready(let attached) = try await service.attach(id: identity.id, accessToken: .bearer(token), clientIP: nil) else {
            Issue.record("asked for verification although the address is verified")
            return
        }
        #expect(attached.accountID == account.id)
        #expect(try smtp.messages(to: address).count == sent)
        #expect(try await service.attached(accessToken: .bearer(token)).first?.groups == ["team"])
        // A deregistered account takes its provisional identities with it.
        #expect(try await test.broker.oauth.deleteAccount(id: account.id, appID: nil, admin: nil))
        #expect(try await test.store.provisionalIdentity(id: identity.id) == nil)
    }
}
