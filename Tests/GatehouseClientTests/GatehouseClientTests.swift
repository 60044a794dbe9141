import Foundation
import GatehouseClient
import GatehouseTesting
import Testing

/// The SDK against a real broker process (and its real peers): every flow an app drives through it.
@Suite("GatehouseClient", .shared(SDKWorld.self))
struct GatehouseClientTests {
    var world: SDKWorld { SDKWorld.shared }

    /// Registers a phone with a device key and the PIN `pin` (after trying PINs that break rules).
    func registeredPhone(pin: String = "73051", client: GatehouseClient? = nil) async throws -> (GatehouseClient, SignInResult) {
        let client = client ?? world.client("phone")
        let outcome = try await client.register(
            provider: "device",
            delegate: ScriptedDelegate { challenge, _ in
                switch challenge {
                case .registerDeviceKey: .registerDeviceKey()
                case .createPIN: .pin(pin)
                default: throw GatehouseError.refused(code: "unexpected", description: challenge.type, status: 0, reason: nil)
                }
            })
        guard case .completed(let result) = outcome else { throw GatehouseError.transport("the registration stopped") }
        return (client, result)
    }

    func signInDelegate(pins: [String]) -> ScriptedDelegate {
        let remaining = Remaining(pins)
        return ScriptedDelegate { challenge, _ in
            switch challenge {
            case .deviceKeyAssertion: return .signWithDeviceKey
            case .pin: return .pin(remaining.next())
            default: throw GatehouseError.refused(code: "unexpected", description: challenge.type, status: 0, reason: nil)
            }
        }
    }

    @Test func registersWithADeviceKeyAndAPINTellingEachBrokenRuleThenSignsInWithBoth() async throws {
        let client = world.client("phone")
        let pins = Remaining(["12345", "11111", "1234", "73051"])
        let delegate = ScriptedDelegate { challenge, _ in
            switch challenge {
            case .registerDeviceKey(_, _, let algorithms, _, _, _):
                #expect(algorithms.contains("ES256"))
                return .registerDeviceKey()
            case .createPIN(let rules, let reset, _):
                #expect(rules.minLength == 5)
                #expect(!reset)
                return .pin(pins.next())
            default: throw GatehouseError.refused(code: "unexpected", description: challenge.type, status: 0, reason: nil)
            }
        }
        let outcome = try await client.register(provider: "device", delegate: delegate)
        guard case .completed(let registered) = outcome else { Issue.record("registration: \(outcome)"); return }
        #expect(delegate.refusals.map(\.code) == ["pin_sequence", "pin_repeated", "pin_too_short"])
        #expect(delegate.refusals.first == .pinRule(.sequence, message: delegate.refusals.first.map { if case .pinRule(_, let m) = $0 { m } else { "" } } ?? ""))
        #expect(registered.tokens.isBound, "the app's policy binds tokens when the completing request carries a proof")
        #expect(registered.tokens.refreshToken != nil)
        let account = try #require(registered.account)
        let key = try #require(try await client.deviceKey())
        #expect(registered.profile?.subject == account.id)

        let signIn = signInDelegate(pins: ["99999", "73051"])
        let signedIn = try await client.signIn(provider: "device", delegate: signIn)
        guard case .completed(let result) = signedIn else { Issue.record("sign-in: \(signedIn)"); return }
        #expect(result.account?.id == account.id)
        #expect(signIn.challengeTypes == ["assertion", "pin", "pin"])
        #expect(signIn.refusals == [.invalidPIN])
        // The tokens are bound to the installation's key: their cnf.jkt is its thumbprint.
        let claims = try #require(Self.claims(of: result.tokens.accessToken))
        #expect(claims["cnf"]?["jkt"]?.string == key.thumbprint)
        #expect(try await client.userInfo().subject == account.id)
    }

    @Test func wrongPINsLockTheAccountOutWithTheMomentItOpensAgain() async throws {
        let (client, _) = try await registeredPhone()
        let delegate = signInDelegate(pins: ["11223", "44556", "77889"])
        let error = await thrownError(GatehouseError.self) { _ = try await client.signIn(provider: "device", delegate: delegate) }
        guard case .lockedOut(let until, let permanent) = error else { Issue.record("not a lockout: \(String(describing: error))"); return }
        #expect(!permanent)
        #expect(try #require(until) > Date())
        #expect(delegate.refusals == [.invalidPIN, .invalidPIN])
        // While locked, even the right PIN is refused the same way.
        let again = await thrownError(GatehouseError.self) { _ = try await client.signIn(provider: "device", delegate: signInDelegate(pins: ["73051"])) }
        #expect(again?.code == "locked_out")
    }

    @Test func registersWithAPasswordAndWithAnEmailedCode() async throws {
        let client = world.client("web")
        let username = "sdk-\(UUID().uuidString.prefix(8).lowercased())"
        let passwords = Remaining(["short", "a long and fine password"])
        let delegate = ScriptedDelegate { challenge, _ in
            guard case .credentials(_, _, let policy, _) = challenge else { throw GatehouseError.transport(challenge.type) }
            #expect(policy?.minLength != nil)
            return .credentials(username: username, password: passwords.next())
        }
        guard case .completed(let result) = try await client.register(provider: "local", delegate: delegate) else { Issue.record("no tokens"); return }
        #expect(result.account?.username == username)
        #expect(delegate.refusals.map(\.code) == ["password_too_short"])
        #expect(result.profile?.username == username)
        try await client.logout()
        let signIn = ScriptedDelegate { _, _ in .credentials(username: username, password: "a long and fine password") }
        guard case .completed(let again) = try await client.signIn(provider: "local", delegate: signIn) else { Issue.record("no sign-in"); return }
        #expect(again.account?.id == result.account?.id)

        let mailClient = world.client("web")
        let address = "\(username)@example.com"
        let smtp = world.smtp
        let mailDelegate = ScriptedDelegate { challenge, error in
            switch challenge {
            case .emailAddress: return .email(address)
            case .emailCode(let sentTo, let length, _, _, _):
                #expect(sentTo != nil && sentTo != address, "the address is shown masked")
                #expect(length == 6)
                // A wrong code first, then the one delivered.
                return error == nil ? .emailCode("000000") : .emailCode(try smtp.latestCode(to: address))
            default: throw GatehouseError.transport(challenge.type)
            }
        }
        guard case .completed(let mailed) = try await mailClient.register(provider: "email", delegate: mailDelegate) else { Issue.record("no tokens"); return }
        #expect(mailDelegate.refusals == [.invalidCode])
        #expect(mailed.account != nil)
    }

    @Test func customDataRegistersAndStatelessFollowsTheAppsPolicyAtRunTime() async throws {
        let client = world.client("bankapp")
        let delegate = ScriptedDelegate { challenge, _ in
            guard case .customData = challenge else { throw GatehouseError.transport(challenge.type) }
            return .customData(["subject": "cust-sdk-1"])
        }
        guard case .completed(let stateful) = try await client.register(provider: "bank", delegate: delegate) else { Issue.record("no tokens"); return }
        #expect(stateful.account?.username == "cust-sdk-1")
        #expect(stateful.tokens.refreshToken != nil)

        let refused = await thrownError(GatehouseError.self) { _ = try await client.registerStateless(provider: "bank", delegate: delegate) }
        #expect(refused == .statelessDisabled)
        #expect(
            try await world.broker.admin("PATCH", "/admin/v1/apps/bankapp/policy", #"{"statelessAuthentication": true}"#).json["policy"]?["statelessAuthentication"]
                == true)
        let statelessClient = world.client("bankapp")
        guard case .completed(let stateless) = try await statelessClient.registerStateless(provider: "bank", delegate: delegate) else { Issue.record("no token"); return }
        #expect(stateless.account == nil)
        #expect(stateless.tokens.refreshToken == nil)
        #expect(Self.claims(of: stateless.tokens.accessToken)?["sub"] == "bank|cust-sdk-1")
        // Without a refresh token there is nothing to renew.
        #expect(await thrownError(GatehouseError.self) { _ = try await statelessClient.renew() } == .notSignedIn)
        try await world.broker.admin("PATCH", "/admin/v1/apps/bankapp/policy", #"{"statelessAuthentication": false}"#)
        #expect(await thrownError(GatehouseError.self) { _ = try await client.registerStateless(provider: "bank", delegate: delegate) } == .statelessDisabled)
    }

    @Test func theBrowserFlowCompletesWithTheReturnURLTheAppHandsBack() async throws {
        let client = world.client("native")
        let flow = try await client.startSignIn(provider: "upstream")
        guard case .browser(let url, _, _)? = await flow.challenge else { Issue.record("not a browser challenge: \(await flow.state)"); return }
        // The system browser's part: the upstream's sign-in page, then the broker's callback.
        let returned = try await Browser().signIn(at: url, username: "ursula", password: SDKWorld.ursulaPassword)
        #expect(returned.absoluteString.hasPrefix(SDKWorld.nativeReturn))
        // Another flow's return URL is not this one's.
        let other = try await client.startSignIn(provider: "upstream")
        #expect(await thrownError(GatehouseError.self) { try await other.answer(.browserReturn(returned)) }?.code == "invalid_request")
        let state = try await flow.answer(.browserReturn(returned))
        guard case .completed(let result) = state else { Issue.record("not completed: \(state)"); return }
        #expect(result.profile?.username == "ursula")
        #expect(try await client.tokens() == result.tokens)
    }

    @Test func boundTokensAreRefusedWithoutTheirProofAndARequiredProofIsSent() async throws {
        let (client, registered) = try await registeredPhone()
        let token = registered.tokens.accessToken
        let userinfo = world.broker.baseURL.appendingPathComponent("oauth2/userinfo")
        let transport = URLSessionTransport()
        let asBearer = try await transport.send(HTTPRequest(method: "GET", url: userinfo, headers: ["Authorization": "Bearer \(token)"]))
        #expect(asBearer.status == 401)
        #expect(try JSONDecoder().decode(JSON.self, from: asBearer.body)["error"] == "invalid_token")
        let withoutProof = try await transport.send(HTTPRequest(method: "GET", url: userinfo, headers: ["Authorization": "DPoP \(token)"]))
        #expect(withoutProof.status == 401)
        #expect(try JSONDecoder().decode(JSON.self, from: withoutProof.body)["error"] == "invalid_dpop_proof")
        // The SDK's own request carries the proof.
        let authorized = try await client.authorize(HTTPRequest(method: "GET", url: userinfo))
        #expect(try await transport.send(authorized).status == 200)

        // An app whose policy requires proofs (and nonces): the SDK answers the nonce request itself.
        let (keys, tokens) = (SoftwareKeyStore(), InMemoryTokenStore())
        let strict = world.client("strict", keys: keys, tokens: tokens)
        let outcome = try await strict.register(provider: "device", delegate: ScriptedDelegate { _, _ in .registerDeviceKey() })
        guard case .completed(let result) = outcome else { Issue.record("no tokens"); return }
        #expect(result.tokens.isBound)
        #expect(try await strict.renew().isBound)
        // A resource server asking for a nonce (here the broker's userinfo): `send` answers with one.
        // A client that has not met the server yet is asked once, then sends it.
        let counting = CountingTransport()
        let resourceClient = world.client("strict", keys: keys, tokens: tokens, transport: counting)
        let answered = try await resourceClient.send(HTTPRequest(method: "GET", url: userinfo))
        #expect(answered.status == 200)
        #expect(counting.count("/oauth2/userinfo") == 2)
        #expect(try await resourceClient.send(HTTPRequest(method: "GET", url: userinfo)).status == 200)
        #expect(counting.count("/oauth2/userinfo") == 3, "the nonce is kept for the next call")
        let unbound = world.client("strict", bindTokens: false)
        #expect(await thrownError(GatehouseError.self) { _ = try await unbound.startRegistration(provider: "device") } == .invalidDPoPProof)
    }

    @Test func concurrentRenewalsSendOneRefresh() async throws {
        let tokens = InMemoryTokenStore()
        let counting = CountingTransport()
        let (client, registered) = try await registeredPhone(client: world.client("phone", tokens: tokens, transport: counting))
        // As if the access token had expired.
        var expired = registered.tokens
        expired.expiresAt = Date().addingTimeInterval(-1)
        try await tokens.save(expired)
        let before = counting.count("/oauth2/token")
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await client.validAccessToken() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(counting.count("/oauth2/token") == before + 1)
        #expect(Set(results).count == 1)
        #expect(results.first != registered.tokens.accessToken)
        #expect(try await tokens.load()?.refreshToken != registered.tokens.refreshToken, "the rotated refresh token is kept")
    }

    @Test func logoutRevokesSoTheOldRefreshTokenNoLongerRenews() async throws {
        let tokens = InMemoryTokenStore()
        let (client, registered) = try await registeredPhone(client: world.client("phone", tokens: tokens))
        guard case .active(_, _, _, let account, _) = try await client.registrationState() else { Issue.record("not active"); return }
        #expect(account?.id == registered.account?.id)
        try await client.logout()
        #expect(try await client.tokens() == nil)
        #expect(await thrownError(GatehouseError.self) { _ = try await client.renew() } == .notSignedIn)
        #expect(try await client.registrationState() == .registrationRequired(reason: "no_token"))
        // The refresh token the broker revoked is refused if presented again.
        try await tokens.save(registered.tokens)
        let refused = await thrownError(GatehouseError.self) { _ = try await client.renew() }
        #expect(refused?.code == "invalid_grant")
        #expect(try await client.tokens() == nil, "a refused renewal forgets the tokens")
    }

    @Test func activationDataRegisterTheInstallationsKeyForTheirAccountOnce() async throws {
        let (_, phone) = try await registeredPhone()
        let account = try #require(phone.account)
        let issued = try await world.broker.admin("POST", "/admin/v1/apps/mobile/activations", #"{"account": "\#(account.id)", "pin": "48027"}"#)
        let payload = try #require(issued.json["payload"]?.string, "\(issued)")
        let client = world.client("mobile")
        let delegate = ScriptedDelegate { challenge, error in
            switch challenge {
            case .activation: return .activation(code: payload, pin: error == nil ? "11111" : "48027")
            case .registerDeviceKey: return .registerDeviceKey()
            default: throw GatehouseError.transport(challenge.type)
            }
        }
        guard case .completed(let result) = try await client.signIn(provider: "activation", delegate: delegate) else { Issue.record("no tokens"); return }
        #expect(delegate.refusals.map(\.code) == ["invalid_pin"])
        #expect(delegate.challengeTypes == ["activation", "activation", "register_key"])
        #expect(result.account?.id == account.id)
        #expect(result.activation?["outcome"] == "new")
        // Activation data are used once: the broker's public reason says so.
        let again = await thrownError(GatehouseError.self) {
            _ = try await world.client("mobile").signIn(provider: "activation", delegate: ScriptedDelegate { _, _ in .activation(code: payload, pin: "48027") })
        }
        #expect(
            again
                == .refused(
                    code: "invalid_activation", description: again.map { if case .refused(_, let d, _, _) = $0 { d } else { "" } } ?? "", status: 400,
                    reason: "activation_used"))
    }

    @Test func aFlowsStatesFollowItStepByStepToItsEnd() async throws {
        let client = world.client("phone")
        let flow = try await client.startRegistration(provider: "device")
        var seen: [String] = []
        var completed: SignInResult?
        for await state in flow.states {
            switch state {
            case .challenge(let challenge):
                seen.append(challenge.type)
                switch challenge {
                case .registerDeviceKey: try await flow.answer(.registerDeviceKey())
                case .createPIN:
                    // A refusal leaves the flow where it was: the sequence yields nothing new for it.
                    let refused = await thrownError(GatehouseError.self) { try await flow.answer(.pin("12")) }
                    #expect(refused?.code == "pin_too_short")
                    try await flow.answer(.pin("73051"))
                default: Issue.record("unexpected \(challenge.type)")
                }
            case .completed(let result): completed = result
            case .stopped: Issue.record("stopped")
            }
        }
        #expect(seen == ["register_key", "create_pin"])
        #expect(completed?.account != nil)
        #expect(try await client.tokens() == completed?.tokens)
    }

    @Test func aRefusalNoPersonCanCorrectIsThrownNotAskedAgain() async throws {
        let delegate = ScriptedDelegate { _, _ in .fields(["bogus": "x"]) }
        let refused = await thrownError(GatehouseError.self) { _ = try await world.client("web").register(provider: "local", delegate: delegate) }
        #expect(refused?.code == "invalid_request")
        #expect(delegate.challengeTypes == ["credentials"])
    }

    @Test func deregistrationDeletesTheAccountAndForgetsTheKey() async throws {
        let (client, registered) = try await registeredPhone()
        try await client.deregister()
        #expect(try await client.deviceKey() == nil)
        #expect(try await client.tokens() == nil)
        #expect(try await world.broker.admin("GET", "/admin/v1/accounts/\(registered.account?.id ?? "")").status == 404)
    }

    /// The README's tour: the demo tool with its defaults against the default config (`make run`).
    @Test func theDemoToolRegistersSignsInRenewsAndLogsOutOnTheDefaultConfig() async throws {
        let broker = try await BrokerProcess.startDefault()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-demo-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let demo = BrokerProcess.binary("gatehouse-client-demo")
        let run = await ChildProcess.run([demo, "--broker", broker.baseURL.absoluteString, "--state", folder.path])
        #expect(run.status == 0, "\(run.output)")
        for line in ["registered: account", "signed in: account", "renewed: DPoP token", "state: active", "logged out: state registrationRequired"] {
            #expect(run.output.contains(line), "\(line) in \(run.output)")
        }
        // A second tour signs in with the key the first registered.
        let second = await ChildProcess.run([demo, "--broker", broker.baseURL.absoluteString, "--state", folder.path])
        #expect(second.status == 0 && second.output.contains("registered before") && second.output.contains("signed in: account"), "\(second.output)")
        // The steps one by one keep the key and tokens in --state between runs; a wrong PIN is refused.
        let signIn = await ChildProcess.run([demo, "sign-in", "--broker", broker.baseURL.absoluteString, "--state", folder.path])
        #expect(signIn.status == 0 && signIn.output.contains("signed in: account"), "\(signIn.output)")
        let wrong = await ChildProcess.run([demo, "sign-in", "--broker", broker.baseURL.absoluteString, "--state", folder.path, "--pin", "864200"])
        #expect(wrong.status != 0 && wrong.output.contains("invalidPIN"), "\(wrong.output)")
        await broker.stop()
    }

    static func claims(of jwt: String) -> JSON? {
        let parts = jwt.split(separator: ".")
        guard parts.count == 3, let payload = Base64.decodeURL(String(parts[1])) else { return nil }
        return try? JSONDecoder().decode(JSON.self, from: payload)
    }
}

/// Values handed out one by one (the last one again when they run out), or gathered one by one.
final class Remaining: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String]
    init(_ values: [String]) { self.values = values }
    func next() -> String { lock.withLock { values.count > 1 ? values.removeFirst() : values[0] } }
    func append(_ value: String) { lock.withLock { values.append(value) } }
    var all: [String] { lock.withLock { values } }
}

enum Base64 {
    static func encodeURL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decodeURL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
