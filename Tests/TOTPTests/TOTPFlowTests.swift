import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

@testable import TOTP

/// A `totp` second factor through the real flow engine: enrolment, codes, replay, recovery codes,
/// lockouts, the person's operations and an administrator's reset.
extension TOTPTests {
    static let yaml = """
        providers:
          - id: name
            type: name
          - id: app-code
            type: totp
            config:
              issuer: Gatehouse Bank
              lockout: {maxFailures: 5, failureWindow: 15m, lockoutDuration: 60s, maxLockoutDuration: 1h}
        apps:
          - id: bank
            policy:
              identityProviders: [name]
              authenticators: [app-code]
              secondFactor: app-code
              selfRegistration: true
              lockout: {maxFailedAttemptsPerFlow: 50, maxFailedAttemptsPerAccount: 500}
          - id: notes
            policy:
              identityProviders: [name]
              authenticators: [app-code]
        accountPage:
          authenticators: [app-code]
        """

    static var registry: PluginRegistry {
        var registry = PluginRegistry()
        registry.register(NamePlugin.self)
        registry.register(TOTPPlugin.self)
        return registry
    }

    static func broker(clock: TestClock = TestClock(), temporary: TemporaryStore? = nil) async throws -> TestBroker {
        try await TestBroker.make(yaml: yaml, registry: registry, temporary: temporary, clock: clock)
    }

    /// An enrolled person: their account, the secret their app holds, the recovery codes they saved.
    struct Enrolled {
        var account: Account
        var app: OneTimePassword
        var recoveryCodes: [String]
    }

    /// Names `name`, sets up an app from the `totp_setup` challenge and confirms it with its code.
    static func enrol(_ broker: TestBroker, _ name: String) async throws -> Enrolled {
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name", purpose: .register))
        guard case .challenge(_, let setup, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": .string(name)]), client: nil) else {
            throw FlowDriverError.unexpectedOutcome("no totp_setup")
        }
        #expect(setup.type == "totp_setup")
        let text = try #require(setup.fields["otpauthURI"]?.stringValue)
        let uri = try #require(URLComponents(string: text))
        let base32 = try #require(uri.queryItems?.first { $0.name == "secret" }?.value)
        let secret = try #require(Base32.decode(base32))
        let app = OneTimePassword(secret: secret)
        guard
            case .challenge(_, let codes, _) = try await broker.engine.resume(
                flowID: flow, answer: ChallengeResponse(["code": .string(app.code(at: broker.clock.now))]), client: nil)
        else {
            throw FlowDriverError.unexpectedOutcome("no recovery codes")
        }
        #expect(codes.type == "totp_recovery_codes")
        let recovery = try #require(codes.fields["recoveryCodes"]?.arrayValue).compactMap(\.stringValue)
        let (_, account) = try await broker.finish(flow, answer: [:])
        return Enrolled(account: try #require(account), app: app, recoveryCodes: recovery)
    }

    /// Names `name` and answers the `totp` challenge with `answer`.
    static func signIn(_ broker: TestBroker, _ name: String, _ answer: [String: JSONValue]) async throws -> FlowOutcome {
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let challenge, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": .string(name)]), client: nil) else {
            throw FlowDriverError.unexpectedOutcome("no totp challenge")
        }
        #expect(challenge.type == "totp")
        return try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(answer), client: nil)
    }

    static func code(_ broker: TestBroker, _ name: String, _ code: String) async throws -> FlowOutcome { try await signIn(broker, name, ["code": .string(code)]) }

    static func completes(_ outcome: FlowOutcome) -> Bool { if case .completed = outcome { true } else { false } }

    @Test func enrollmentShowsTheKeyAsURIQRCodeAndTextThenTheFirstCodeConfirmsIt() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name", purpose: .register))
        guard case .challenge(_, let setup, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil) else {
            Issue.record("no setup")
            return
        }
        let uri = try #require(setup.fields["otpauthURI"]?.stringValue)
        #expect(uri.hasPrefix("otpauth://totp/Gatehouse%20Bank:ada?secret="))
        #expect(uri.hasSuffix("&issuer=Gatehouse%20Bank&algorithm=SHA1&digits=6&period=30"))
        let secret = try #require(URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value)
        #expect(Base32.decode(secret)?.count == 20, "a 160-bit key for SHA-1")
        #expect(setup.fields["secret"]?.stringValue?.replacingOccurrences(of: " ", with: "") == secret)
        #expect(setup.fields["qrCode"]?.stringValue.map(ChallengeImage.isUsable) == true)
        let app = OneTimePassword(secret: try #require(Base32.decode(secret)))

        // A wrong first code keeps the setup; a right one stores the enrolment and shows the codes.
        let wrong = await thrownError { _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["code": "000000"]), client: nil) }
        #expect(wrong?.code == .invalidCode)
        guard
            case .challenge(_, let codes, _) = try await broker.engine.resume(
                flowID: flow, answer: ChallengeResponse(["code": .string(app.code(at: broker.clock.now))]), client: nil)
        else {
            Issue.record("no recovery codes")
            return
        }
        let recovery = try #require(codes.fields["recoveryCodes"]?.arrayValue).compactMap(\.stringValue)
        #expect(recovery.count == 10 && Set(recovery).count == 10)
        #expect(recovery.allSatisfy { $0.count == 11 && RecoveryCodes.normalized($0) != nil })
        let (_, account) = try await broker.finish(flow, answer: [:])
        let accountID = try #require(account?.id)

        // The store holds neither the secret nor a recovery code, in any form a reader could use.
        let stored = try await broker.store.pluginRecord(namespace: "app-code", key: "account:\(accountID)", now: broker.clock.now)
        let text = String(decoding: try #require(stored).value, as: UTF8.self)
        let rawSecret = Data(try #require(Base32.decode(secret))).base64EncodedString()
        #expect(!text.contains(secret) && !text.contains(rawSecret))
        #expect(recovery.allSatisfy { !text.contains($0) && !text.contains(RecoveryCodes.normalized($0)!) })
        let events = try await broker.store.auditEvents(type: "totp.enrolled", appID: nil, accountID: accountID, since: nil, limit: 5)
        #expect(events.count == 1)
    }

    /// The setup flow's state and challenge carry the secret and then the recovery codes: after
    /// seven enrolments (and their flows deleted), a copy of the database files, WAL and `-shm`
    /// included, holds none of them in any form a reader could use.
    @Test func noCopyOfTheDatabaseFilesHoldsAnEnrollmentsSecretOrRecoveryCodes() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        var secrets: [String] = []
        for index in 0..<7 {
            let enrolled = try await Self.enrol(broker, "person\(index)")
            let base32 = Base32.encode(enrolled.app.secret)
            secrets += [base32, Data(enrolled.app.secret).base64EncodedString()]
            secrets.append(stride(from: 0, to: base32.count, by: 4).map { String(base32.dropFirst($0).prefix(4)) }.joined(separator: " "))
            secrets += enrolled.recoveryCodes + enrolled.recoveryCodes.compactMap(RecoveryCodes.normalized)
        }
        var bytes = Data()
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: broker.temporary.path + suffix) {
            bytes.append(try Data(contentsOf: URL(fileURLWithPath: broker.temporary.path + suffix)))
        }
        #expect(bytes.count > 10_000)
        for secret in secrets {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is in the database files")
        }
    }

    /// RFC 6238 section 5.2: one step of drift either side is accepted, two are not; the step of the
    /// confirmation code, and any step up to the last one used, is never accepted again.
    @Test func eachStepIsAcceptedOnceWithinOneStepOfDrift() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        let now = { broker.clock.now }
        let confirmation = await thrownError { _ = try await Self.code(broker, "ada", ada.app.code(at: now())) }
        #expect(confirmation?.code == .invalidCode, "the confirmation code was used")
        #expect(confirmation?.reason == "replayed_step")

        broker.clock.advance(by: 30 * 10)
        #expect(await thrownError { _ = try await Self.code(broker, "ada", ada.app.code(at: now().addingTimeInterval(-60))) }?.code == .invalidCode, "two steps behind")
        #expect(await thrownError { _ = try await Self.code(broker, "ada", ada.app.code(at: now().addingTimeInterval(60))) }?.code == .invalidCode, "two steps ahead")
        #expect(Self.completes(try await Self.code(broker, "ada", ada.app.code(at: now().addingTimeInterval(-30)))), "one step behind")
        #expect(Self.completes(try await Self.code(broker, "ada", ada.app.code(at: now()))), "the current step")
        let replayed = await thrownError { _ = try await Self.code(broker, "ada", ada.app.code(at: now())) }
        #expect(replayed?.code == .invalidCode)
        #expect(replayed?.reason == "replayed_step")
        #expect(Self.completes(try await Self.code(broker, "ada", ada.app.code(at: now().addingTimeInterval(30)))), "one step ahead")
        // Now the current step is behind the last one used: refused until the clock passes it.
        #expect(await thrownError { _ = try await Self.code(broker, "ada", ada.app.code(at: now())) }?.reason == "replayed_step")
        broker.clock.advance(by: 60)
        #expect(Self.completes(try await Self.code(broker, "ada", ada.app.code(at: now()))))
    }

    /// Codes computed by `oathtool` (OATH Toolkit) and `pyotp` at fixed times on the broker's clock,
    /// from the secret the setup showed: the step before, the current one and the step after pass
    /// (each once), two steps either side do not; a time at a step's last second still counts as it.
    @Test func independentlyComputedCodesPassWithinTheWindowEdgesOnly() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        let secret = Base32.encode(ada.app.secret)
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] ?? repository.appendingPathComponent(".build/test-venv/bin/python").path
        func oathtool(_ date: Date) async -> String {
            await ChildProcess.run(["oathtool", "--totp", "--base32", "--now=@\(Int(date.timeIntervalSince1970))", secret]).output.trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
        func pyotp(_ date: Date) async -> String {
            await ChildProcess.run([
                python, "-c", "import pyotp, sys; sys.stdout.write(pyotp.TOTP(sys.argv[1]).at(int(sys.argv[2])))", secret, String(Int(date.timeIntervalSince1970)),
            ]).output
        }
        broker.clock.advance(by: 30 * 20 + 29)  // the last second of a step
        let now = broker.clock.now
        let (fromOathtool, fromPyotp) = (await oathtool(now), await pyotp(now))
        #expect(fromOathtool == ada.app.code(at: now) && fromPyotp == ada.app.code(at: now), "three implementations agree")
        for (offset, passes) in [(-60.0, false), (60.0, false), (-30.0, true), (0.0, true), (30.0, true)] {
            for source in ["oathtool", "pyotp"] {
                let code = source == "oathtool" ? await oathtool(now.addingTimeInterval(offset)) : await pyotp(now.addingTimeInterval(offset))
                var refused: ErrorCode?
                do { _ = try await Self.code(broker, "ada", code) } catch let error as BrokerError { refused = error.code }
                // A step once accepted is used: the second source's same code is a replay.
                let expected: ErrorCode? = passes && source == "oathtool" ? nil : .invalidCode
                #expect(refused == expected, "\(source) at \(offset)")
            }
        }
    }

    /// Two brokers on one store, as two nodes: the same code given to both at once passes once.
    @Test func aCodeGivenToTwoNodesAtOncePassesOnce() async throws {
        let first = try await Self.broker()
        defer { first.temporary.remove() }
        let second = try await Self.broker(clock: first.clock, temporary: first.temporary)
        let ada = try await Self.enrol(first, "ada")
        for round in 1...5 {
            first.clock.advance(by: 30)
            let code = ada.app.code(at: first.clock.now)
            async let one = Self.completes((try? await Self.code(first, "ada", code)) ?? .stopped(flowID: "", status: "", details: [:]))
            async let two = Self.completes((try? await Self.code(second, "ada", code)) ?? .stopped(flowID: "", status: "", details: [:]))
            let passed = [await one, await two].filter { $0 }.count
            #expect(passed == 1, "round \(round)")
        }
    }

    @Test func aRecoveryCodeSignsInOnceAndItsUseIsAuditedAndCounted() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil)
        guard case .challenge(_, let asked, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["use_recovery_code": true]), client: nil) else {
            Issue.record("no recovery challenge")
            return
        }
        #expect(asked.type == "totp_recovery")
        // Typed loosely: lower case, with spaces instead of the dash.
        let typed = ada.recoveryCodes[3].lowercased().replacingOccurrences(of: "-", with: " ")
        let (tokens, _) = try await broker.finish(flow, answer: ["recoveryCode": .string(typed)])
        #expect(!tokens.accessToken.isEmpty)
        let events = try await broker.store.auditEvents(type: "totp.recovery_code_used", appID: "bank", accountID: ada.account.id, since: nil, limit: 5)
        #expect(events.map { $0.details["recoveryCodesLeft"] } == ["9"])

        let (again, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        _ = try await broker.engine.resume(flowID: again, answer: ChallengeResponse(["name": "ada"]), client: nil)
        _ = try await broker.engine.resume(flowID: again, answer: ChallengeResponse(["use_recovery_code": true]), client: nil)
        let reused = await thrownError {
            _ = try await broker.engine.resume(flowID: again, answer: ChallengeResponse(["recoveryCode": .string(ada.recoveryCodes[3])]), client: nil)
        }
        #expect(reused?.code == .invalidCode)
        // `use_app` goes back to the app's code.
        guard case .challenge(_, let back, _) = try await broker.engine.resume(flowID: again, answer: ChallengeResponse(["use_app": true]), client: nil) else {
            Issue.record("no way back")
            return
        }
        #expect(back.type == "totp")
        let status = try await broker.broker.admin.resourceItems("enrollments", of: .provider("app-code")).items
        #expect(status.first?["recoveryCodesLeft"] == 9)
        #expect(status.first?["recoveryCodesUsed"] == 1)
    }

    /// Wrong codes and wrong recovery codes count together; the fifth locks the account's codes, even
    /// the right one, until the lock runs out.
    @Test func wrongCodesLockTheAccountsCodesUntilTheLockRunsOut() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        broker.clock.advance(by: 30)
        for attempt in 1...4 {
            let refused = await thrownError { _ = try await Self.code(broker, "ada", "123456") }
            #expect(refused?.code == .invalidCode, "attempt \(attempt)")
        }
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil)
        _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["use_recovery_code": true]), client: nil)
        let locked = await thrownError { _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["recoveryCode": "22222-22222"]), client: nil) }
        #expect(locked?.code == .lockedOut)
        let right = ada.app.code(at: broker.clock.now)
        let stillLocked = await thrownError { _ = try await Self.code(broker, "ada", right) }
        #expect(stillLocked?.code == .lockedOut)
        #expect(try await broker.broker.admin.lockouts().map(\.key).contains("app-code:account:\(ada.account.id)"))
        broker.clock.advance(by: 61)
        #expect(Self.completes(try await Self.code(broker, "ada", ada.app.code(at: broker.clock.now))))
    }

    /// The person sees their app, gets new recovery codes and removes it, the last two only with a
    /// sign-in of the last five minutes; the next sign-in sets an app up again.
    @Test func thePersonManagesTheirAppWithAFreshSignIn() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        broker.clock.advance(by: 30)
        guard case .completed(_, let tokens, _, _) = try await Self.code(broker, "ada", ada.app.code(at: broker.clock.now)) else {
            Issue.record("no sign-in")
            return
        }
        func perform(_ operation: String) async throws -> JSONValue {
            try await broker.broker.accountOperations.perform(
                plugin: "app-code", operation: operation, fields: [:], accessToken: PresentedToken(scheme: .bearer, token: tokens.accessToken), clientIP: nil
            )
        }
        let status = try await perform("status")
        #expect(status["enrolled"] == true)
        #expect(status["recoveryCodesLeft"] == 10)
        #expect(status["secret"] == nil && status["sealedSecret"] == nil && status["recoveryCodes"] == nil)
        let fresh = try #require(try await perform("regenerate_recovery_codes")["recoveryCodes"]?.arrayValue).compactMap(\.stringValue)
        #expect(fresh.count == 10 && Set(fresh).isDisjoint(with: ada.recoveryCodes))

        broker.clock.advance(by: 301)
        for operation in ["remove", "regenerate_recovery_codes"] {
            let stale = await thrownError { _ = try await perform(operation) }
            #expect(stale?.code == .insufficientUserAuthentication, "\(operation)")
            #expect(stale?.maxAge == 300)
        }
        #expect(try await perform("status")["enrolled"] == true)

        guard case .completed(_, let again, _, _) = try await Self.code(broker, "ada", ada.app.code(at: broker.clock.now)) else {
            Issue.record("no sign-in")
            return
        }
        let removed = try await broker.broker.accountOperations.perform(
            plugin: "app-code", operation: "remove", fields: [:], accessToken: PresentedToken(scheme: .bearer, token: again.accessToken), clientIP: nil
        )
        #expect(removed == ["removed": true])
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let next, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil) else {
            Issue.record("no challenge")
            return
        }
        #expect(next.type == "totp_setup")
        let audited = try await broker.store.auditEvents(type: "totp.removed", appID: "bank", accountID: ada.account.id, since: nil, limit: 5)
        #expect(audited.count == 1)
    }

    /// From the account page a person sets a new app up in place of the old one: the flow runs in the
    /// browser that started it only, asks the current app's code first (a wrong one sets nothing up),
    /// then the new app's first code; afterwards the old app's codes and recovery codes sign nobody
    /// in and the new one does. A page sign-in that did not pass the factor starts nothing.
    @Test func aNewAppFromTheAccountPageReplacesTheOldOneOnlyAfterTheOldOnesCode() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        broker.clock.advance(by: 30)
        let page = AccountPageService(broker: broker.broker)
        let binding = BrowserBinding(cookie: "ada's browser")
        let proof = BrowserProof(cookie: "ada's browser", csrfToken: binding.csrfToken)
        #expect(try await broker.engine.accountEnrolments().map(\.providerID) == ["app-code"])
        let label = try #require(try await broker.engine.accountEnrolments().first?.label)
        for language in TextTranslations.languages.dropFirst() { #expect(TOTPPlugin.translations.text(label, in: language) != label, "\(language)") }
        let session = try await broker.openBrowserSession(for: ada.account, provider: "name", factors: ["app-code"])
        func begin(_ methods: [String]) async throws -> FlowOutcome {
            try await page.beginEnrolment(
                provider: "app-code", accountID: ada.account.id, methods: methods, sessionID: session, binding: binding, clientIP: nil, language: "en")
        }
        #expect(await thrownError { _ = try await begin(["name"]) }?.code == .reauthenticationRequired, "a page sign-in without the factor")
        let undeclared = await thrownError {
            _ = try await page.beginEnrolment(
                provider: "name", accountID: ada.account.id, methods: ["name", "app-code"], sessionID: session, binding: binding, clientIP: nil, language: "en")
        }
        #expect(undeclared?.code == .invalidRequest)
        guard case .challenge(let flow, let current, _) = try await begin(["name", "otp", "app-code"]) else {
            Issue.record("no challenge")
            return
        }
        #expect(current.type == "totp", "the current app's code comes first")
        let fromAnotherBrowser = await thrownError {
            _ = try await broker.engine.resume(
                flowID: flow, answer: ChallengeResponse(["code": "123456"]), browser: BrowserProof(cookie: "other", csrfToken: binding.csrfToken))
        }
        #expect(fromAnotherBrowser?.code == .flowNotFound)
        #expect(await thrownError { _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["code": "123456"]), client: nil) }?.code == .flowNotFound)
        let wrong = await thrownError { _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["code": "000000"]), browser: proof) }
        #expect(wrong?.code == .invalidCode)
        guard
            case .challenge(_, let setup, _) = try await broker.engine.resume(
                flowID: flow, answer: ChallengeResponse(["code": .string(ada.app.code(at: broker.clock.now))]), browser: proof
            ).outcome
        else {
            Issue.record("no setup")
            return
        }
        #expect(setup.type == "totp_setup")
        let uri = try #require(setup.fields["otpauthURI"]?.stringValue)
        let base32 = try #require(URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value)
        let newApp = OneTimePassword(secret: try #require(Base32.decode(base32)))
        broker.clock.advance(by: 30)
        guard
            case .challenge(_, let codes, _) = try await broker.engine.resume(
                flowID: flow, answer: ChallengeResponse(["code": .string(newApp.code(at: broker.clock.now))]), browser: proof
            ).outcome
        else {
            Issue.record("no recovery codes")
            return
        }
        let newRecovery = try #require(codes.fields["recoveryCodes"]?.arrayValue).compactMap(\.stringValue)
        guard case .authorized(_, let back, let cookie) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse([:]), browser: proof).outcome else {
            Issue.record("the flow did not end")
            return
        }
        #expect(back.hasSuffix("/account?notice=enrolled") && cookie == nil, "back to the page, with no new session")

        broker.clock.advance(by: 30)
        #expect(await thrownError { _ = try await Self.code(broker, "ada", ada.app.code(at: broker.clock.now)) }?.code == .invalidCode, "the old app")
        func recoverySignIn(_ code: String) async throws -> FlowOutcome {
            let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
            _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil)
            _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["use_recovery_code": true]), client: nil)
            return try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["recoveryCode": .string(code)]), client: nil)
        }
        #expect(await thrownError { _ = try await recoverySignIn(ada.recoveryCodes[1]) }?.code == .invalidCode, "an old recovery code")
        #expect(Self.completes(try await Self.code(broker, "ada", newApp.code(at: broker.clock.now))), "the new app")
        #expect(Self.completes(try await recoverySignIn(newRecovery[0])), "a new recovery code")
        let replaced = try await broker.store.auditEvents(type: "totp.replaced", appID: ConsoleConfig.accountAppID, accountID: ada.account.id, since: nil, limit: 5)
        let enrolled = try await broker.store.auditEvents(type: "account.credential_enrolled", appID: nil, accountID: ada.account.id, since: nil, limit: 5)
        #expect(replaced.count == 1 && enrolled.first?.providerID == "app-code")
    }

    /// Starts the account page's setup of a new app for `enrolled` in `browser`; answers the flow and
    /// the browser's proof.
    static func beginSetup(_ broker: TestBroker, _ enrolled: Enrolled, session: String, browser: String) async throws -> (String, BrowserProof) {
        let binding = BrowserBinding(cookie: browser)
        let outcome = try await AccountPageService(broker: broker.broker).beginEnrolment(
            provider: "app-code", accountID: enrolled.account.id, methods: ["name", "app-code"], sessionID: session, binding: binding, clientIP: nil,
            language: "en")
        guard case .challenge(let flow, _, _) = outcome else { throw FlowDriverError.unexpectedOutcome("no challenge") }
        return (flow, BrowserProof(cookie: browser, csrfToken: binding.csrfToken))
    }

    /// Leaving the account page's setup goes back to the page and changes nothing; ending the
    /// sign-on session the page was signed in with (a sign-out, a password change elsewhere) ends
    /// the setup too.
    @Test func aSetupFromTheAccountPageEndsWhenLeftOrWhenThePagesSessionEnds() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        let session = try await broker.openBrowserSession(for: ada.account, provider: "name", factors: ["app-code"])
        let (left, proof) = try await Self.beginSetup(broker, ada, session: session, browser: "ada's browser")
        #expect(try await broker.engine.cancel(flowID: left, browser: proof).hasSuffix("/account?notice=stopped"))

        let (flow, again) = try await Self.beginSetup(broker, ada, session: session, browser: "ada's browser")
        let (other, otherProof) = try await Self.beginSetup(broker, ada, session: session, browser: "ada's laptop")
        #expect(try await broker.broker.oauth.sessions.end(sessionID: session, accountID: ada.account.id, reason: "person"))
        broker.clock.advance(by: 30)
        let ended = await thrownError {
            _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["code": .string(ada.app.code(at: broker.clock.now))]), browser: again)
        }
        #expect(ended?.code == .flowNotFound)
        #expect(try await broker.engine.cancel(flowID: other, browser: otherProof).hasSuffix("/account?notice=stopped"), "leaving it goes back to the page")
        let refused = await thrownError { _ = try await Self.beginSetup(broker, ada, session: session, browser: "ada's browser") }
        #expect(refused?.code == .reauthenticationRequired)
        #expect(Self.completes(try await Self.code(broker, "ada", ada.app.code(at: broker.clock.now))), "the old app still signs in")
    }

    /// Two setups that both proved the old app: the first replaces it, the second (which never
    /// proved the new one) cannot replace that.
    @Test func aSetupReplacesOnlyTheAppItsCodeProved() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        let session = try await broker.openBrowserSession(for: ada.account, provider: "name", factors: ["app-code"])
        let (first, firstProof) = try await Self.beginSetup(broker, ada, session: session, browser: "phone")
        let (second, secondProof) = try await Self.beginSetup(broker, ada, session: session, browser: "laptop")
        func newApp(_ flow: String, _ proof: BrowserProof, code: String) async throws -> OneTimePassword {
            let outcome = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["code": .string(code)]), browser: proof).outcome
            guard case .challenge(_, let setup, _) = outcome else { throw FlowDriverError.unexpectedOutcome("no setup") }
            let uri = try #require(setup.fields["otpauthURI"]?.stringValue)
            let base32 = try #require(URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value)
            return OneTimePassword(secret: try #require(Base32.decode(base32)))
        }
        broker.clock.advance(by: 30)
        let firstApp = try await newApp(first, firstProof, code: ada.app.code(at: broker.clock.now))
        broker.clock.advance(by: 30)
        let secondApp = try await newApp(second, secondProof, code: ada.app.code(at: broker.clock.now))
        _ = try await broker.engine.resume(flowID: first, answer: ChallengeResponse(["code": .string(firstApp.code(at: broker.clock.now))]), browser: firstProof)
        let stale = await thrownError {
            _ = try await broker.engine.resume(flowID: second, answer: ChallengeResponse(["code": .string(secondApp.code(at: broker.clock.now))]), browser: secondProof)
        }
        #expect(stale?.code == .conflict)
        #expect(TOTPPlugin.translations.text(stale?.message ?? "", in: "de") != stale?.message, "told in the flow's language")
        #expect(await thrownError { _ = try await broker.engine.pending(flowID: second, browser: secondProof) }?.code == .flowNotFound, "the losing setup ended")
        broker.clock.advance(by: 30)
        #expect(Self.completes(try await Self.code(broker, "ada", firstApp.code(at: broker.clock.now))), "the first setup's app")
    }

    /// A fresh sign-in that did not pass the factor (a password-only sign-in at an app that lists the
    /// factor without asking it) neither removes the app nor gets new recovery codes.
    @Test func aSignInWithoutTheFactorCannotRemoveItOrTakeNewRecoveryCodes() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        let (tokens, _) = try await broker.signIn(FlowRequest(appID: "notes", providerID: "name"), answer: ["name": "ada"])
        for operation in ["remove", "regenerate_recovery_codes"] {
            let refused = await thrownError {
                _ = try await broker.broker.accountOperations.perform(
                    plugin: "app-code", operation: operation, fields: [:], accessToken: PresentedToken(scheme: .bearer, token: tokens.accessToken), clientIP: nil
                )
            }
            #expect(refused?.code == .insufficientUserAuthentication, "\(operation)")
        }
        let status = try await broker.broker.accountOperations.perform(
            plugin: "app-code", operation: "status", fields: [:], accessToken: PresentedToken(scheme: .bearer, token: tokens.accessToken), clientIP: nil
        )
        #expect(status["recoveryCodesLeft"] == 10)
        #expect(try await broker.store.pluginRecord(namespace: "app-code", key: "account:\(ada.account.id)", now: broker.clock.now) != nil)
    }

    /// A username in any script, however long, makes a URI that fits a QR code: the label keeps RFC
    /// 3986's unreserved ASCII and percent-encodes the rest as UTF-8.
    @Test func theKeyURIEncodesAnyUsernameAndFitsAQRCode() throws {
        let otp = OneTimePassword(secret: Array(repeating: 7, count: 64), algorithm: .sha512)
        #expect(otp.uri(issuer: "Bank", account: "José").hasPrefix("otpauth://totp/Bank:Jos%C3%A9?"))
        let long = String(repeating: "\u{1F600}", count: 64)
        #expect(QRCode(otp.uri(issuer: "Bank", account: long)) != nil)
    }

    /// An administrator lists the apps (never a secret) and resets one: the next sign-in sets one up.
    @Test func anAdministratorResetsAnAccountsApp() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.enrol(broker, "ada")
        _ = try await Self.enrol(broker, "bob")
        let listed = try await broker.broker.admin.resourceItems("enrollments", of: .provider("app-code")).items
        #expect(listed.compactMap { $0["username"]?.stringValue }.sorted() == ["ada", "bob"])
        #expect(listed.allSatisfy { $0["sealedSecret"] == nil && $0["recoveryCodes"] == nil })
        // Ada locked herself out with her old app: the reset lifts that too.
        broker.clock.advance(by: 30)
        for _ in 1...5 { _ = await thrownError { _ = try await Self.code(broker, "ada", "123456") } }
        #expect(await thrownError { _ = try await Self.code(broker, "ada", ada.app.code(at: broker.clock.now)) }?.code == .lockedOut)
        let created = await thrownError {
            _ = try await broker.broker.admin.createResourceItem("enrollments", of: .provider("app-code"), fields: [:], by: AdminIdentity(name: "ops"))
        }
        #expect(created?.code == .invalidRequest)
        _ = try await broker.broker.admin.deleteResourceItem("enrollments", of: .provider("app-code"), key: [ada.account.id], by: AdminIdentity(name: "ops"))
        #expect(try await broker.broker.admin.resourceItems("enrollments", of: .provider("app-code")).items.count == 1)
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let next, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil) else {
            Issue.record("no challenge")
            return
        }
        #expect(next.type == "totp_setup")
        let uri = try #require(next.fields["otpauthURI"]?.stringValue)
        let secret = try #require(URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value)
        let bytes = try #require(Base32.decode(secret))
        let newApp = OneTimePassword(secret: bytes)
        _ = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["code": .string(newApp.code(at: broker.clock.now))]), client: nil)
        _ = try await broker.finish(flow, answer: [:])
        #expect(Self.completes(try await Self.code(broker, "ada", newApp.code(at: broker.clock.now.addingTimeInterval(30)))), "no lock left")
        let audited = try await broker.store.auditEvents(type: "totp.reset", appID: nil, accountID: ada.account.id, since: nil, limit: 5)
        #expect(audited.count == 1)
    }

    @Test func configurationMistakesAreReportedWithTheirPath() async throws {
        let yaml = """
            providers:
              - {id: a, type: totp, config: {algorithm: MD5}}
              - {id: b, type: totp, config: {digits: 5, period: 5}}
              - {id: c, type: totp, config: {window: 3}}
              - {id: d, type: totp, config: {recoveryCodes: 2}}
              - {id: e, type: totp, config: {issuer: "a:b"}}
            """
        let issues = await thrownError(ConfigIssues.self) { _ = try ConfigLoader(registry: Self.registry).load(yaml: yaml, environment: [:]) }
        #expect(
            issues?.issues.map(\.description) == [
                "providers[0].config.algorithm: must be SHA1, SHA256 or SHA512, got 'MD5'",
                "providers[1].config.digits: must be 6, 7 or 8, got 5",
                "providers[2].config.window: must be 0, 1 or 2 steps, got 3",
                "providers[3].config.recoveryCodes: must be between 5 and 20, got 2",
                "providers[4].config.issuer: must be a non-empty name without ':' (authenticator apps split the label at it)",
            ])
    }
}
