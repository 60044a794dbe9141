import Crypto
import Foundation
import GatehouseClient
import GatehouseTesting
import Testing

/// The provider types not covered by the main file, each driven through the SDK against the real
/// broker and its real peers: an app-signed JWT (fsso-jwt), a directory password (ldap on slapd), the
/// app's API in two steps (custom-api), an emailed code asked for again, a required device
/// attestation, and a device key added to an account that is signed in already.
extension GatehouseClientTests {
    @Test func anAppSignedJWTRegistersThePersonOnceAndEveryFreshJWTSignsThemIn() async throws {
        let world = self.world
        let subject = "fsso-\(UUID().uuidString.prefix(8).lowercased())"
        let seenAudiences = Remaining([])
        let delegate = ScriptedDelegate { challenge, _ in
            guard case .signedJWT(let audience, _) = challenge else { throw GatehouseError.transport(challenge.type) }
            seenAudiences.append(audience ?? "")
            return .signedJWT(try world.acmeJWT(subject: subject, audience: audience ?? ""))
        }
        let client = world.client("backend")
        guard case .completed(let registered) = try await client.register(provider: "acme-sso", delegate: delegate) else { Issue.record("no tokens"); return }
        #expect(seenAudiences.all == ["identity-service"], "the challenge names the audience the JWT must carry")
        let account = try #require(registered.account)
        #expect(account.username == subject)
        #expect(registered.profile?.subject == account.id)

        guard case .completed(let signedIn) = try await world.client("backend").signIn(provider: "acme-sso", delegate: delegate) else {
            Issue.record("no sign-in"); return
        }
        #expect(signedIn.account?.id == account.id)

        // A JWT is good once: the same one again is refused, and the flow is not asked again.
        let once = try world.acmeJWT(subject: subject, audience: "identity-service")
        let replay = ScriptedDelegate { _, _ in .signedJWT(once) }
        _ = try await world.client("backend").signIn(provider: "acme-sso", delegate: replay)
        let replayed = await thrownError(GatehouseError.self) { _ = try await world.client("backend").signIn(provider: "acme-sso", delegate: replay) }
        #expect(replayed?.code == "invalid_grant")
        #expect(replay.challengeTypes.count == 2)
    }

    @Test func aDirectoryPasswordSignsInWhileRegistrationIsLeftToTheDirectory() async throws {
        let client = world.client("staff")
        let refused = await thrownError(GatehouseError.self) { _ = try await client.startRegistration(provider: "corp") }
        #expect(refused == .registrationDisabled)

        let passwords = Remaining(["not-alices-password", "alice-password-1"])
        let delegate = ScriptedDelegate { challenge, _ in
            guard case .credentials(let provider, _, let policy, _) = challenge else { throw GatehouseError.transport(challenge.type) }
            #expect(provider == "corp")
            #expect(policy == nil, "a directory's passwords are not the broker's to rule")
            return .credentials(username: "alice", password: passwords.next())
        }
        guard case .completed(let result) = try await client.signIn(provider: "corp", delegate: delegate) else { Issue.record("no tokens"); return }
        #expect(delegate.refusals == [.invalidCredentials])
        #expect(result.account?.username == "alice")
        #expect(result.profile?.email == "alice@example.org")
        #expect(try await client.userInfo().email == "alice@example.org")
    }

    @Test func theAppsAPIInTwoStepsHandsItsDataToTheAppAndTakesTheAnswerBack() async throws {
        let codes = Remaining(["9999", "1234"])
        var deepLinks: [String] = []
        let flow = try await world.client("eidapp").startRegistration(provider: "eid")
        while case .challenge(let challenge) = await flow.state {
            guard case .customData(_, let step, let data, let error, _) = challenge else { Issue.record("not custom data: \(challenge.type)"); return }
            #expect(step == "finish")
            deepLinks.append(data?["deepLink"]?.string ?? "")
            if deepLinks.count == 2 { #expect(error?.code == "wrong_code" && error?.message == "That code is not right.") }
            try await flow.answer(.customData(["code": .string(codes.next())]))
        }
        guard case .completed(let result) = await flow.state else { Issue.record("not completed: \(await flow.state)"); return }
        #expect(deepLinks.count == 2 && deepLinks.allSatisfy { $0.hasPrefix("bankid:///?token=T-") }, "\(deepLinks)")
        #expect(result.account?.username?.hasPrefix("eid-") == true)
    }

    @Test func aNewCodeReplacesTheLastAndOneAskedTooSoonIsToldHowLongToWait() async throws {
        let smtp = world.smtp
        let address = "resend-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        // `email` keeps the default 30 s between codes.
        let early = ScriptedDelegate { challenge, error in
            switch challenge {
            case .emailAddress: return .email(address)
            case .emailCode: return error == nil ? .resendCode : .emailCode(try smtp.latestCode(to: address))
            default: throw GatehouseError.transport(challenge.type)
            }
        }
        guard case .completed = try await world.client("web").register(provider: "email", delegate: early) else { Issue.record("no tokens"); return }
        guard case .rateLimited(let retryAfter)? = early.refusals.first else { Issue.record("not rate limited: \(early.refusals)"); return }
        #expect((1...30).contains(retryAfter ?? 0))

        // `quickmail` allows a new code at once: the first code stops working.
        let other = "resend-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let first = Remaining([])
        let delegate = ScriptedDelegate { challenge, error in
            switch challenge {
            case .emailAddress: return .email(other)
            case .emailCode:
                let code = try smtp.latestCode(to: other)
                if first.all.isEmpty {
                    first.append(code)
                    return .resendCode
                }
                // The old code, then the new one.
                return error == nil ? .emailCode(first.all[0]) : .emailCode(code)
            default: throw GatehouseError.transport(challenge.type)
            }
        }
        guard case .completed = try await world.client("family").register(provider: "quickmail", delegate: delegate) else { Issue.record("no tokens"); return }
        #expect(try smtp.messages(to: other).count == 2)
        #expect(delegate.refusals == [.invalidCode])
        #expect(delegate.challengeTypes == ["email_address", "email_code", "email_code", "email_code"])
    }

    @Test func aRequiredAttestationComesFromTheAppsProviderAndBindsTheKey() async throws {
        let plain = world.client("sensor")
        let refused = await thrownError(GatehouseError.self) {
            _ = try await plain.register(provider: "device", delegate: ScriptedDelegate { _, _ in .registerDeviceKey() })
        }
        #expect(refused?.code == "attestation_required")

        let created = try await world.broker.admin("POST", "/admin/v1/apps/sensor/test-keys")
        let item = created.json["item"] ?? created.json
        let kid = try #require(item["key"]?["kid"]?.string, "\(created)")
        let pem = try #require(item["private_key_pem"]?.string)
        let attestation = TestKeyAttestation(kid: kid, key: try P256.Signing.PrivateKey(pemRepresentation: pem), issuer: world.broker.baseURL.absoluteString)
        let client = world.client("sensor", attestation: attestation)
        let delegate = ScriptedDelegate { challenge, _ in
            guard case .registerDeviceKey(_, _, _, let asked, let formats, _) = challenge else { throw GatehouseError.transport(challenge.type) }
            #expect(asked == "required")
            #expect(formats.contains("test"))
            return .registerDeviceKey()
        }
        guard case .completed(let result) = try await client.register(provider: "device", delegate: delegate) else { Issue.record("no tokens"); return }
        let key = try #require(try await client.deviceKey())
        let asked = try #require(attestation.asked.all.first)
        #expect(attestation.asked.all.count == 1)
        // Play Integrity's request hash binds the nonce and this key.
        #expect(asked.requestHash == Base64.encodeURL(Data(SHA256.hash(data: Data("\(asked.challenge).\(key.thumbprint)".utf8)))))
        let account = try #require(result.account)
        #expect(try await world.broker.admin("GET", "/admin/v1/users/\(account.id)").json["testAccount"] == true)

        // Another installation's attestation does not vouch for this one's key.
        let thief = world.client("sensor", attestation: ForeignKeyAttestation(inner: attestation))
        let mismatch = await thrownError(GatehouseError.self) {
            _ = try await thief.register(provider: "device", delegate: ScriptedDelegate { _, _ in .registerDeviceKey() })
        }
        guard case .refused(let code, _, let status, let reason)? = mismatch else { Issue.record("not refused: \(String(describing: mismatch))"); return }
        #expect(code == "invalid_attestation" && status == 400 && reason == "key_mismatch")
    }

    @Test func aSignedInPersonAddsADeviceKeyToTheirAccountAndSignsInWithIt() async throws {
        let client = world.client("family")
        let username = "family-\(UUID().uuidString.prefix(8).lowercased())"
        let password = ScriptedDelegate { _, _ in .credentials(username: username, password: "a long and fine password") }
        guard case .completed(let registered) = try await client.register(provider: "local", delegate: password) else { Issue.record("no tokens"); return }
        let account = try #require(registered.account)

        let flow = try await client.startRegistration(provider: "device", addingToSignedInAccount: true)
        guard case .challenge(.registerDeviceKey) = await flow.state else { Issue.record("not register_key: \(await flow.state)"); return }
        guard case .completed(let added) = try await flow.answer(.registerDeviceKey()) else { Issue.record("not completed"); return }
        #expect(added.account?.id == account.id, "the key joined the signed-in account, not a new one")

        // The key alone signs in to the same account now.
        try await client.logout()
        let keyOnly = ScriptedDelegate { _, _ in .signWithDeviceKey }
        guard case .completed(let signedIn) = try await client.signIn(provider: "device", delegate: keyOnly) else { Issue.record("no sign-in"); return }
        #expect(signedIn.account?.id == account.id)

        // Without a sign-in there is nothing to add to.
        let stranger = world.client("family")
        #expect(await thrownError(GatehouseError.self) { _ = try await stranger.startRegistration(provider: "device", addingToSignedInAccount: true) } == .notSignedIn)
    }
}

/// Signs `test` attestations for a key other than the one being registered (a stolen attestation).
struct ForeignKeyAttestation: AttestationProvider {
    let inner: TestKeyAttestation
    let foreign = SoftwareKeyStore()

    func attestation(challenge: String, formats: [String], requestHash: String?, key: any DeviceKey) async throws -> AttestationEvidence {
        let other = try await foreign.existingOrNewKey(named: "other")
        return try await inner.attestation(challenge: challenge, formats: formats, requestHash: requestHash, key: other)
    }
}
