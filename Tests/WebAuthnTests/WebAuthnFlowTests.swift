import Foundation
import GatehouseAttestation
import GatehouseCore
import GatehouseTesting
import Testing

@testable import WebAuthn

/// Passkeys and security keys through the real flow engine: registration of a new account, sign-in
/// without a username, a second factor, every refusal a relying party owes, the person's and the
/// administrator's management.
extension WebAuthnTests {
    static let origin = "https://login.example.test"

    static func yaml(_ extra: String = "") -> String {
        """
        providers:
          - id: name
            type: name
          - id: knock
            type: knock
          - id: passkeys
            type: webauthn
            config:
              rpID: login.example.test
              rpName: Example Login
              origins: [\(origin)]
        \(extra)
        apps:
          - id: web
            policy:
              identityProviders: [passkeys]
              selfRegistration: true
          - id: bank
            policy:
              identityProviders: [name]
              authenticators: [passkeys]
              secondFactor: passkeys
              selfRegistration: true
          - id: vault
            policy:
              identityProviders: [passkeys]
              authenticators: [knock]
              secondFactor: knock
              selfRegistration: true
        """
    }

    static func broker(_ yaml: String = yaml(), temporary: TemporaryStore? = nil) async throws -> TestBroker {
        var registry = PluginRegistry()
        registry.register(NamePlugin.self)
        registry.register(KnockPlugin.self)
        registry.register(WebAuthnPlugin.self)
        return try await TestBroker.make(yaml: yaml, registry: registry, temporary: temporary)
    }

    /// The instance's policy holds at every use: after the operator stops accepting ES256, or starts
    /// requiring attested authenticators, a passkey registered before is refused at sign-in.
    @Test func aPolicyChangedAfterRegistrationHoldsAtTheNextUse() async throws {
        let before = try await Self.broker()
        defer { before.temporary.remove() }
        let phone = SoftAuthenticator()
        _ = try await Self.registerPasskey(before, phone, name: "ada")
        guard case .completed = try await Self.passkeySignIn(before, phone) else { Issue.record("no sign-in"); return }
        for (setting, reason) in [("algorithms: [EdDSA, RS256]", "algorithm_not_allowed"), ("attestation: direct", "untrusted_attestation")] {
            let after = try await Self.broker(
                Self.yaml().replacingOccurrences(of: "origins: [\(Self.origin)]", with: "origins: [\(Self.origin)]\n      \(setting)"), temporary: before.temporary
            )
            #expect(await Self.reason { _ = try await Self.passkeySignIn(after, phone) } == reason, "\(setting)")
        }
    }

    /// As a second factor, keys the policy now refuses are not offered, and an account with none left
    /// is told to ask an administrator (not counted as a wrong answer) instead of setting a new key up
    /// on the password alone.
    @Test func aSecondFactorWhoseKeysThePolicyNowRefusesSendsThePersonToAnAdministrator() async throws {
        let before = try await Self.broker()
        defer { before.temporary.remove() }
        let key = SoftAuthenticator()
        let (flow, _) = try await before.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let create, _) = try await before.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil) else { return }
        _ = try await before.finish(flow, answer: ["credential": key.create(try Self.options(create), origin: Self.origin)])
        let after = try await Self.broker(
            Self.yaml().replacingOccurrences(of: "origins: [\(Self.origin)]", with: "origins: [\(Self.origin)]\n      algorithms: [EdDSA]"), temporary: before.temporary
        )
        let (next, _) = try await after.start(FlowRequest(appID: "bank", providerID: "name"))
        let refusal = await thrownError(BrokerError.self) { _ = try await after.engine.resume(flowID: next, answer: ChallengeResponse(["name": "ada"]), client: nil) }
        #expect(refusal?.reason == "no_usable_credential" && refusal?.reasonIsPublic == true, "the reason webauthn.md promises reaches the app")
    }

    static func options(_ challenge: Challenge) throws -> JSONValue { try #require(challenge.fields["publicKey"]) }

    /// Registers `name` with a new passkey on `authenticator`; answers the account.
    static func registerPasskey(_ broker: TestBroker, _ authenticator: SoftAuthenticator, name: String) async throws -> Account {
        let (flow, asked) = try await broker.start(FlowRequest(appID: "web", providerID: "passkeys", purpose: .register))
        #expect(asked.type == "webauthn_username")
        guard case .challenge(_, let create, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["username": .string(name)]), client: nil) else {
            throw FlowDriverError.unexpectedOutcome("no webauthn_create")
        }
        let (_, account) = try await broker.finish(flow, answer: ["credential": authenticator.create(try options(create), origin: origin)])
        return try #require(account)
    }

    static func passkeySignIn(_ broker: TestBroker, _ authenticator: SoftAuthenticator, origin: String = origin) async throws -> FlowOutcome {
        let (flow, get) = try await broker.start(FlowRequest(appID: "web", providerID: "passkeys"))
        let credential = try #require(authenticator.get(try options(get), origin: origin))
        return try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["credential": credential]), client: nil)
    }

    static func reason(_ body: () async throws -> Void) async -> String? {
        do { try await body() } catch let error as BrokerError { return error.reason ?? error.code.rawValue } catch { return "\(error)" }
        return nil
    }

    @Test func aPasskeyMakesAnAccountAndSignsItInWithoutAUsername() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let phone = SoftAuthenticator()
        let (flow, _) = try await broker.start(FlowRequest(appID: "web", providerID: "passkeys", purpose: .register))
        guard case .challenge(_, let create, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["username": "ada"]), client: nil) else {
            Issue.record("no create")
            return
        }
        let options = try Self.options(create)
        #expect(options["rp"] == ["id": "login.example.test", "name": "Example Login"])
        #expect(options["user"]?["name"] == "ada")
        #expect(Base64URL.decode(options["user"]?["id"]?.stringValue ?? "")?.count == 32)
        #expect(Base64URL.decode(options["challenge"]?.stringValue ?? "")?.count == 32)
        #expect(options["pubKeyCredParams"]?.arrayValue?.compactMap { $0["alg"]?.numberValue } == [-7, -8, -257])
        #expect(options["authenticatorSelection"]?["residentKey"] == "required")
        #expect(options["attestation"] == "none")
        let (_, account) = try await broker.finish(flow, answer: ["credential": phone.create(options, origin: Self.origin)])
        let ada = try #require(account)
        #expect(ada.username == "ada")

        let (signIn, get) = try await broker.start(FlowRequest(appID: "web", providerID: "passkeys"))
        #expect(get.type == "webauthn_get")
        #expect(get.fields["mediation"] == "conditional")
        #expect(try Self.options(get)["allowCredentials"] == [])
        let (tokens, again) = try await broker.finish(signIn, answer: ["credential": try #require(phone.get(try Self.options(get), origin: Self.origin))])
        #expect(again?.id == ada.id)
        #expect(!tokens.accessToken.isEmpty)
        let events = try await broker.store.auditEvents(type: "webauthn.registered", appID: "web", accountID: nil, since: nil, limit: 5)
        #expect(events.count == 1)
    }

    /// §7.2 in the flow: an assertion from another origin, one replayed into a new flow (another
    /// challenge), one of a credential never registered, and a registration for a credential id
    /// registered already are each refused with their reason.
    @Test func assertionsAreRefusedForOriginChallengeAndUnknownCredentials() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let phone = SoftAuthenticator()
        _ = try await Self.registerPasskey(broker, phone, name: "ada")
        #expect(await Self.reason { _ = try await Self.passkeySignIn(broker, phone, origin: "https://evil.example") } == "origin_not_allowed")

        let (first, get) = try await broker.start(FlowRequest(appID: "web", providerID: "passkeys"))
        let assertion = try #require(phone.get(try Self.options(get), origin: Self.origin))
        _ = try await broker.finish(first, answer: ["credential": assertion])
        let (second, _) = try await broker.start(FlowRequest(appID: "web", providerID: "passkeys"))
        #expect(
            await Self.reason { _ = try await broker.engine.resume(flowID: second, answer: ChallengeResponse(["credential": assertion]), client: nil) }
                == "challenge_mismatch")

        let stranger = SoftAuthenticator()
        _ = stranger.create(["rp": ["id": "login.example.test"], "user": ["id": "eA"], "challenge": "eA"], origin: Self.origin)
        #expect(await Self.reason { _ = try await Self.passkeySignIn(broker, stranger) } == "unknown_credential")

        // The same credential id presented in a second registration.
        let (again, _) = try await broker.start(FlowRequest(appID: "web", providerID: "passkeys", purpose: .register))
        guard case .challenge(_, let create, _) = try await broker.engine.resume(flowID: again, answer: ChallengeResponse(["username": "eve"]), client: nil) else {
            return
        }
        let copy = SoftAuthenticator()
        copy.fixedID = phone.credentials[0].id
        #expect(
            await Self.reason {
                _ = try await broker.engine.resume(
                    flowID: again, answer: ChallengeResponse(["credential": copy.create(try Self.options(create), origin: Self.origin)]), client: nil)
            } == "credential_in_use")
    }

    /// A counter that goes back is recorded (and audited) and, by default, refused; with
    /// `counterRegression: record` the sign-in goes on, recorded.
    @Test func aCounterThatGoesBackIsRecordedAndRefusedByPolicy() async throws {
        for policy in ["refuse", "record"] {
            let broker = try await Self.broker(
                Self.yaml().replacingOccurrences(of: "origins: [\(Self.origin)]", with: "origins: [\(Self.origin)]\n      counterRegression: \(policy)"))
            defer { broker.temporary.remove() }
            let key = SoftAuthenticator()
            let ada = try await Self.registerPasskey(broker, key, name: "ada")
            guard case .completed = try await Self.passkeySignIn(broker, key) else { Issue.record("no sign-in"); return }
            guard case .completed = try await Self.passkeySignIn(broker, key) else { Issue.record("no sign-in"); return }
            key.counterOverride = 1
            let before = try await broker.broker.admin.resourceItems("credentials", of: .provider("passkeys")).items.first?["lastUsedAt"]
            broker.clock.advance(by: 60)
            let outcome = await Self.reason { _ = try await Self.passkeySignIn(broker, key) }
            let after = try await broker.broker.admin.resourceItems("credentials", of: .provider("passkeys")).items.first?["lastUsedAt"]
            #expect((before == after) == (policy == "refuse"), "a refused clone's use is not recorded as a use")
            #expect(outcome == (policy == "refuse" ? "counter_regressed" : nil), "\(policy)")
            let listed = try await broker.broker.admin.resourceItems("credentials", of: .provider("passkeys")).items
            #expect(listed.first?["counterRegressions"] == 1)
            #expect(listed.first?["account"] == .string(ada.id))
            #expect(
                try await broker.store.auditEvents(type: "webauthn.counter_regressed", appID: "web", accountID: ada.id, since: nil, limit: 5).count == 1,
                "an administrator searching the account's audit finds the suspected clone")
        }
    }

    /// A signed-in person adds a second passkey: it signs nobody in until that registration flow
    /// completes (an abandoned one leaves a passkey that is refused), and then it signs the same
    /// account in.
    @Test func aPasskeyASignedInPersonAddsCountsOnlyOnceTheirFlowCompletes() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let phone = SoftAuthenticator()
        let ada = try await Self.registerPasskey(broker, phone, name: "ada")
        let laptop = SoftAuthenticator()
        let (abandoned, create) = try await broker.start(FlowRequest(appID: "web", providerID: "passkeys", purpose: .register, signedInAccountID: ada.id))
        #expect(create.type == "webauthn_create")
        #expect(try Self.options(create)["excludeCredentials"]?.arrayValue?.count == 1, "the phone's passkey is excluded")
        let tablet = SoftAuthenticator()
        _ = tablet.create(try Self.options(create), origin: Self.origin)
        // The tablet made its credential, but the answer never reached the broker: nothing is stored.
        _ = abandoned
        #expect(await Self.reason { _ = try await Self.passkeySignIn(broker, tablet) } == "unknown_credential")

        let (flow, asked) = try await broker.start(FlowRequest(appID: "web", providerID: "passkeys", purpose: .register, signedInAccountID: ada.id))
        let credential = laptop.create(try Self.options(asked), origin: Self.origin)
        let (_, joined) = try await broker.finish(flow, answer: ["credential": credential])
        #expect(joined?.id == ada.id)
        guard case .completed(_, _, let account, _) = try await Self.passkeySignIn(broker, laptop) else { Issue.record("no sign-in"); return }
        #expect(account?.id == ada.id)
    }

    /// A passkey whose signed-in registration stored it but stopped at the app's second factor (and
    /// was abandoned there) signs nobody in: it was never linked to anyone. Answering the factor
    /// links it.
    @Test func aPasskeyWhoseRegistrationNeverCompletedSignsNobodyIn() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let ada = try await Self.registerPasskey(broker, SoftAuthenticator(), name: "ada")
        let laptop = SoftAuthenticator()
        let (flow, asked) = try await broker.start(FlowRequest(appID: "vault", providerID: "passkeys", purpose: .register, signedInAccountID: ada.id))
        let next = try await broker.engine.resume(
            flowID: flow, answer: ChallengeResponse(["credential": laptop.create(try Self.options(asked), origin: Self.origin)]), client: nil)
        guard case .challenge(_, let factor, _) = next else { Issue.record("no second factor: \(next)"); return }
        #expect(factor.type == "knock")
        #expect(await Self.reason { _ = try await Self.passkeySignIn(broker, laptop) } == "unknown_credential")
        _ = try await broker.finish(flow, answer: ["word": "open"])
        guard case .completed(_, _, let account, _) = try await Self.passkeySignIn(broker, laptop) else { Issue.record("no sign-in"); return }
        #expect(account?.id == ada.id)
    }

    /// §7.1 steps 21 and 22 under `attestation: none`: a format identifier nobody registered is
    /// refused; a registered format this app does not verify is accepted without its statement
    /// being judged, and the record, the list and the audit say `none`, not verified, never the
    /// claimed format. A passkey made for a new account is listed under the name typed for it.
    @Test func unknownAttestationFormatsAreRefusedAndUnverifiedOnesAreRecordedAsNone() async throws {
        let broker = try await Self.broker(
            Self.yaml().replacingOccurrences(of: "origins: [\(Self.origin)]", with: "origins: [\(Self.origin)]\n      attestationFormats: [packed]"))
        defer { broker.temporary.remove() }
        let bogus = SoftAuthenticator()
        bogus.claimedFormat = "bogus"
        #expect(await Self.reason { _ = try await Self.registerPasskey(broker, bogus, name: "eve") } == "attestation_format_not_allowed")
        #expect(try await broker.broker.admin.resourceItems("credentials", of: .provider("passkeys")).items.isEmpty)

        let unverified = SoftAuthenticator()
        unverified.claimedFormat = "android-key"
        let ada = try await Self.registerPasskey(broker, unverified, name: "ada")
        let listed = try #require(try await broker.broker.admin.resourceItems("credentials", of: .provider("passkeys")).items.first)
        #expect(listed["attestation"] == "none" && listed["attestationVerified"] == false)
        #expect(listed["name"] == "ada", "the name typed in webauthn_username")
        let event = try #require(try await broker.store.auditEvents(type: "webauthn.registered", appID: "web", accountID: nil, since: nil, limit: 5).first)
        #expect(event.details["format"] == "none" && event.details["attestationVerified"] == "false")
        // The account did not exist at the ceremony: the event names the user handle, and so does
        // the account's own `account.created`.
        let created = try #require(try await broker.store.auditEvents(type: "account.created", appID: "web", accountID: ada.id, since: nil, limit: 5).first)
        #expect(event.details["subject"] != nil && created.details["subject"] == event.details["subject"])

        let attested = SoftAuthenticator()
        attested.selfAttestation = true
        _ = try await Self.registerPasskey(broker, attested, name: "bob")
        let verified = try await broker.store.auditEvents(type: "webauthn.registered", appID: "web", accountID: nil, since: nil, limit: 5)
        #expect(verified.contains { $0.details["format"] == "packed" && $0.details["attestationVerified"] == "true" })
    }

    /// §7.2 step 6: a passkey sign-in (nobody identified before the ceremony) needs the user handle;
    /// a second factor, whose account is known, does not.
    @Test func aSignInWithoutAUsernameRefusesAnAssertionWithoutAUserHandle() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let phone = SoftAuthenticator()
        _ = try await Self.registerPasskey(broker, phone, name: "ada")
        phone.returnsUserHandle = false
        #expect(await Self.reason { _ = try await Self.passkeySignIn(broker, phone) } == "user_handle_missing")

        let key = SoftAuthenticator()
        key.returnsUserHandle = false
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let create, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "bo"]), client: nil) else { return }
        _ = try await broker.finish(flow, answer: ["credential": key.create(try Self.options(create), origin: Self.origin)])
        let (next, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let get, _) = try await broker.engine.resume(flowID: next, answer: ChallengeResponse(["name": "bo"]), client: nil) else { return }
        let (tokens, _) = try await broker.finish(next, answer: ["credential": try #require(key.get(try Self.options(get), origin: Self.origin))])
        #expect(!tokens.accessToken.isEmpty)
    }

    /// Origins are what `clientDataJSON.origin` carries, compared byte for byte: an origin with a path
    /// (or a query, a fragment, a default port, capitals) could never match, so check-config refuses
    /// it with its path, as it does a trust anchor that is neither PEM nor a file and a `freshSignIn`
    /// out of range; a trust anchor may be a PEM file's path.
    @Test func originsAndOtherSettingsAreCheckedWithTheirConfigPath() throws {
        var registry = PluginRegistry()
        registry.register(NamePlugin.self)
        registry.register(KnockPlugin.self)
        registry.register(WebAuthnPlugin.self)
        func issues(_ setting: String) -> [String] {
            configIssues(Self.yaml().replacingOccurrences(of: "      origins: [\(Self.origin)]", with: setting), registry: registry)
        }
        for bad in [
            "https://login.example.com/path", "https://login.example.com/", "https://login.example.com?x=1", "https://login.example.com#f",
            "https://Login.example.com", "https://login.example.com:443", "http://login.example.com", "login.example.com", "https://user@login.example.com",
            "android:apk-key-hash:short", "android:apk-key-hash:RzfQ3hFRzAnaKBAwpbVYlOF1VwPkgoQiXOlWMlRx6F+",
        ] {
            let found = issues("      origins: [\(Self.origin), \"\(bad)\"]")
            #expect(found.count == 1 && found.first?.hasPrefix("providers[2].config.origins[1]: must be an https:// origin") == true, "\(bad): \(found)")
        }
        for good in ["https://login.example.com:8443", "http://localhost:8080", "http://127.0.0.1", "android:apk-key-hash:RzfQ3hFRzAnaKBAwpbVYlOF1VwPkgoQiXOlWMlRx6Fc"] {
            #expect(issues("      origins: [\"\(good)\"]").isEmpty, "\(good)")
        }
        #expect(issues("      origins: [\(Self.origin)]\n      freshSignIn: 2h").first?.hasPrefix("providers[2].config.freshSignIn: must be between 30s and 1h") == true)
        let anchor = FileManager.default.temporaryDirectory.appendingPathComponent("anchor-\(UUID().uuidString).pem")
        try TrustAnchors.appleWebAuthnRoot.write(to: anchor, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: anchor) }
        #expect(issues("      origins: [\(Self.origin)]\n      trustAnchors: [\(anchor.path)]").isEmpty, "a PEM file's path")
        #expect(
            issues("      origins: [\(Self.origin)]\n      trustAnchors: [/nonexistent/root.pem]").first?.contains(
                "trustAnchors[0]: is neither PEM text nor a readable file") == true)
    }

    @Test func userVerificationAndAttestationAreRequiredWhereThePolicySaysSo() async throws {
        let strict = try await Self.broker(
            Self.yaml().replacingOccurrences(
                of: "origins: [\(Self.origin)]", with: "origins: [\(Self.origin)]\n      userVerification: required\n      attestation: direct"))
        defer { strict.temporary.remove() }
        let plain = SoftAuthenticator()
        plain.userVerifying = false
        #expect(await Self.reason { _ = try await Self.registerPasskey(strict, plain, name: "ada") } == "user_not_verified")
        let selfAttesting = SoftAuthenticator()
        selfAttesting.selfAttestation = true
        #expect(await Self.reason { _ = try await Self.registerPasskey(strict, selfAttesting, name: "bob") } == "untrusted_attestation")
        let unattested = SoftAuthenticator()
        #expect(await Self.reason { _ = try await Self.registerPasskey(strict, unattested, name: "cy") } == "attestation_format_not_allowed")
    }

    /// As a second factor: the first sign-in sets a key up (not discoverable), the next asks for it
    /// by id; that key is no passkey at the passkey sign-in.
    @Test func aSecurityKeyIsASecondFactorButNoPasskey() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let key = SoftAuthenticator()
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let create, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil) else { return }
        #expect(create.type == "webauthn_create")
        #expect(try Self.options(create)["authenticatorSelection"]?["residentKey"] == "discouraged")
        _ = try await broker.finish(flow, answer: ["credential": key.create(try Self.options(create), origin: Self.origin)])

        let (next, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let get, _) = try await broker.engine.resume(flowID: next, answer: ChallengeResponse(["name": "ada"]), client: nil) else { return }
        #expect(get.type == "webauthn_get")
        #expect(try Self.options(get)["allowCredentials"]?.arrayValue?.count == 1)
        let (tokens, _) = try await broker.finish(next, answer: ["credential": try #require(key.get(try Self.options(get), origin: Self.origin))])
        #expect(!tokens.accessToken.isEmpty)
        #expect(await Self.reason { _ = try await Self.passkeySignIn(broker, key) } == "unknown_credential")
    }

    /// From the account page a person adds a passkey through the passkey's own ceremony in the
    /// browser that started it: it joins their account (and signs it in later), no code or session
    /// comes out of it, and a page sign-in that did not pass their existing passkey adds none.
    @Test func aPasskeyAddedFromTheAccountPageJoinsTheAccount() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let phone = SoftAuthenticator()
        let ada = try await Self.registerPasskey(broker, phone, name: "ada")
        #expect(try await broker.engine.accountEnrolments().map(\.providerID) == ["passkeys"])
        let label = try #require(try await broker.engine.accountEnrolments().first?.label)
        for language in TextTranslations.languages.dropFirst() { #expect(WebAuthnPlugin.translations.text(label, in: language) != label, "\(language)") }
        let page = AccountPageService(broker: broker.broker)
        let binding = BrowserBinding(cookie: "ada's browser")
        let proof = BrowserProof(cookie: "ada's browser", csrfToken: binding.csrfToken)
        let session = try await broker.openBrowserSession(for: ada, provider: "passkeys")
        func begin(_ methods: [String]) async throws -> FlowOutcome {
            try await page.beginEnrolment(
                provider: "passkeys", accountID: ada.id, methods: methods, sessionID: session, binding: binding, clientIP: nil, language: "en")
        }
        #expect(await thrownError { _ = try await begin(["name"]) }?.code == .reauthenticationRequired, "a sign-in without her passkey")
        guard case .challenge(let flow, let create, _) = try await begin(["hwk", "user", "passkeys"]) else {
            Issue.record("no create")
            return
        }
        #expect(create.type == "webauthn_create")
        #expect(create.fields[Challenge.registrationPageField] == nil, "the page does not read as a new account's")
        #expect(create.fields[Challenge.offersSignInField] == nil && create.fields[Challenge.offersRegistrationField] == nil, "nor offers to switch")
        #expect(try Self.options(create)["excludeCredentials"]?.arrayValue?.count == 1, "the phone's passkey is excluded")
        let laptop = SoftAuthenticator()
        let credential = laptop.create(try Self.options(create), origin: Self.origin)
        guard
            case .authorized(_, let back, let cookie) = try await broker.engine.resume(
                flowID: flow, answer: ChallengeResponse(["credential": credential]), browser: proof
            ).outcome
        else {
            Issue.record("the flow did not end")
            return
        }
        #expect(back.hasSuffix("/account?notice=enrolled") && cookie == nil)
        guard case .completed(_, _, let account, _) = try await Self.passkeySignIn(broker, laptop) else {
            Issue.record("no sign-in")
            return
        }
        #expect(account?.id == ada.id)
        let events = try await broker.store.auditEvents(type: "account.credential_enrolled", appID: ConsoleConfig.accountAppID, accountID: ada.id, since: nil, limit: 5)
        #expect(events.first?.providerID == "passkeys")
        #expect(try await broker.store.auditEvents(type: "webauthn.registered", appID: nil, accountID: ada.id, since: nil, limit: 5).count == 2)
    }

    /// Where the account page uses the instance as a second factor only, a person adds another
    /// security key there: the factor's own sign-in then accepts either key.
    @Test func aSecurityKeyAddedFromTheAccountPageIsASecondFactorMore() async throws {
        let broker = try await Self.broker(Self.yaml("accountPage: {identityProviders: [name], authenticators: [passkeys]}"))
        defer { broker.temporary.remove() }
        let first = SoftAuthenticator()
        let (flow, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let create, _) = try await broker.engine.resume(flowID: flow, answer: ChallengeResponse(["name": "ada"]), client: nil) else { return }
        let (_, registered) = try await broker.finish(flow, answer: ["credential": first.create(try Self.options(create), origin: Self.origin)])
        let ada = try #require(registered)
        let binding = BrowserBinding(cookie: "ada's browser")
        let proof = BrowserProof(cookie: "ada's browser", csrfToken: binding.csrfToken)
        let session = try await broker.openBrowserSession(for: ada, provider: "name", factors: ["passkeys"])
        let outcome = try await AccountPageService(broker: broker.broker).beginEnrolment(
            provider: "passkeys", accountID: ada.id, methods: ["name", "hwk", "passkeys"], sessionID: session, binding: binding, clientIP: nil, language: "en")
        guard case .challenge(let enrolment, let another, _) = outcome else {
            Issue.record("no create")
            return
        }
        #expect(another.type == "webauthn_create")
        #expect(try Self.options(another)["authenticatorSelection"]?["residentKey"] == "discouraged")
        let second = SoftAuthenticator()
        let answer = ChallengeResponse(["credential": second.create(try Self.options(another), origin: Self.origin)])
        guard case .authorized = try await broker.engine.resume(flowID: enrolment, answer: answer, browser: proof).outcome else {
            Issue.record("the flow did not end")
            return
        }
        let (next, _) = try await broker.start(FlowRequest(appID: "bank", providerID: "name"))
        guard case .challenge(_, let get, _) = try await broker.engine.resume(flowID: next, answer: ChallengeResponse(["name": "ada"]), client: nil) else { return }
        #expect(try Self.options(get)["allowCredentials"]?.arrayValue?.count == 2)
        let (tokens, _) = try await broker.finish(next, answer: ["credential": try #require(second.get(try Self.options(get), origin: Self.origin))])
        #expect(!tokens.accessToken.isEmpty)
    }

    /// The person lists, renames and removes their passkeys (removal only with a recent passkey
    /// sign-in); an administrator lists them with their account and removes one.
    @Test func peopleAndAdministratorsManageCredentials() async throws {
        let broker = try await Self.broker()
        defer { broker.temporary.remove() }
        let phone = SoftAuthenticator()
        let ada = try await Self.registerPasskey(broker, phone, name: "ada")
        guard case .completed(_, let tokens, _, _) = try await Self.passkeySignIn(broker, phone) else { Issue.record("no sign-in"); return }
        func perform(_ operation: String, _ fields: [String: JSONValue] = [:]) async throws -> JSONValue {
            try await broker.broker.accountOperations.perform(
                plugin: "passkeys", operation: operation, fields: fields, accessToken: PresentedToken(scheme: .bearer, token: tokens.accessToken), clientIP: nil
            )
        }
        let listed = try #require(try await perform("list")["credentials"]?.arrayValue)
        #expect(listed.count == 1)
        let credential = try #require(listed.first?["credential"]?.stringValue)
        #expect(listed.first?["backupEligible"] == true && listed.first?["backupState"] == true && listed.first?["lastUsedAt"] != .null)
        #expect(try await perform("rename", ["credential": .string(credential), "name": "Ada's phone"])["name"] == "Ada's phone")
        #expect(await Self.reason { _ = try await perform("rename", ["credential": "nope", "name": "x"]) } == "not_found")
        broker.clock.advance(by: 301)
        #expect(await Self.reason { _ = try await perform("remove", ["credential": .string(credential)]) } == "insufficient_user_authentication")
        let items = try await broker.broker.admin.resourceItems("credentials", of: .provider("passkeys")).items
        #expect(items.map { $0["account"] } == [.string(ada.id)])
        #expect(items.first?["publicKey"] == nil)
        _ = try await broker.broker.admin.deleteResourceItem("credentials", of: .provider("passkeys"), key: [credential], by: AdminIdentity(name: "ops"))
        #expect(await Self.reason { _ = try await Self.passkeySignIn(broker, phone) } == "unknown_credential")
        #expect(try await broker.store.auditEvents(type: "webauthn.credential_removed", appID: nil, accountID: ada.id, since: nil, limit: 5).count == 1)
    }
}
