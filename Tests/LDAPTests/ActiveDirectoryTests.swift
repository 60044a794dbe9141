import Foundation
import GatehouseCore
import GatehouseTesting
import Logging
import Testing

@testable import LDAP

/// The `ldap` plugin with `activeDirectory: true` against a real Samba AD domain controller
/// (Tests/samba/samba-dc.sh; its people are described there): the three username forms, objectGUID
/// as a GUID subject, nested groups, every refusal AD gives with the right and a wrong password, the
/// password change on the sign-in page, and disabled or expired accounts refused at refresh.
@Suite("Active Directory", .shared(SambaDC.self))
struct ActiveDirectoryTests {
    var dc: SambaDC { SambaDC.shared }

    /// The shortest AD config: the preset fills in the rest.
    static func config(_ dc: SambaDC, url: String? = nil, extra: String = "") -> String {
        """
        activeDirectory: true
        url: \(url ?? dc.ldapsURL)
        rootCA: \(dc.caFile)
        bindDN: gatehouse-svc@gatehouse.test
        bindPassword: Service-Secret-1
        connectTimeout: 10s
        operationTimeout: 10s
        userSearch:
          baseDN: DC=gatehouse,DC=test
        \(extra)
        """
    }

    static func provider(_ dc: SambaDC, url: String? = nil, extra: String = "", clock: TestClock = TestClock()) throws -> LDAPProvider {
        let node = try ConfigNode.parse(yaml: config(dc, url: url, extra: extra), environment: [:]).node
        let config = try ConfigNodeDecoder.decode(LDAPConfig.self, from: node)
        var logger = Logger(label: "ad.test")
        logger.logLevel = .critical
        var environment = PluginEnvironment.forTests(instance: "ldap", store: LDAPTests.scratch.store, logger: logger)
        environment.clock = clock
        return try LDAPPlugin.make(id: "corp-ad", config: config, environment: environment)
    }

    static func broker(_ dc: SambaDC, passwordChange: Bool = false) async throws -> TestBroker {
        let indented = config(dc).split(separator: "\n").map { "          " + $0 }.joined(separator: "\n")
        let yaml = """
            providers:
              - id: corp-ad
                type: ldap
                config:
            \(indented)
            apps:
              - id: notes
                policy:
                  identityProviders: [corp-ad]
                  allowedScopes: [openid, profile, email, groups, offline_access]
                  defaultScopes: [openid, profile, email, groups, offline_access]
                  plugins:
                    corp-ad:
                      passwordChange: \(passwordChange)
            """
        return try await TestBroker.make(yaml: yaml, registry: LDAPTests.registry)
    }

    /// The GUID samba-tool shows for a user: an independent rendering of objectGUID's bytes.
    func guid(of user: String) async throws -> String {
        let shown = try await dc.tool(["user", "show", user, "--attributes=objectGUID"])
        let line = try #require(shown.split(separator: "\n").first { $0.hasPrefix("objectGUID: ") })
        return String(line.dropFirst("objectGUID: ".count))
    }

    /// The error a sign-in throws; records an issue when it signs in.
    func refusal(_ provider: LDAPProvider, _ username: String, _ password: String) async -> BrokerError? {
        await thrownError { _ = try await provider.signIn(username: username, password: password) }
    }

    @Test func signsInBySAMAccountNameUPNAndDomainBackslashAsOneGUIDSubject() async throws {
        let provider = try Self.provider(dc)
        let alice = try await provider.signIn(username: "alice", password: "Alice-Secret-1")
        #expect(alice.subject == (try await guid(of: "alice")), "objectGUID in the byte order Windows shows")
        #expect(alice.username == "alice")
        #expect(alice.claims.preferredUsername == "alice")
        #expect(alice.claims.name == "Alice Liddell")
        #expect(alice.claims.email == "alice@gatehouse.test")
        // staff holds engineers, which holds alice: nested groups count.
        #expect(alice.claims.groups == ["admins", "engineers", "staff"])
        for typed in ["alice@gatehouse.test", "GATEHOUSE\\alice", "gatehouse\\ALICE", "ALICE"] {
            #expect(try await provider.signIn(username: typed, password: "Alice-Secret-1").subject == alice.subject, "\(typed)")
        }
        // A UPN that is not sAMAccountName@realm.
        let grace = try await provider.signIn(username: "grace.hopper@corp.example", password: "Grace-Secret-1")
        #expect(grace.username == "grace")
        #expect(try await provider.signIn(username: "grace", password: "Grace-Secret-1").subject == grace.subject)
        #expect(grace.claims.groups == [], "Domain Users is a primary group, not a member attribute")
        // Another domain's name, or a bare backslash, is nobody here.
        for typed in ["OTHER\\alice", "GATEHOUSE\\", "\\alice"] {
            #expect(await refusal(provider, typed, "Alice-Secret-1")?.reason == "unknown_user", "\(typed)")
        }
    }

    /// The domain's people are found by part of a name or UPN, each under the objectGUID a sign-in links.
    @Test func searchesTheDomainsPeopleBeforeTheySignIn() async throws {
        let provider = try Self.provider(dc)
        let found = try await provider.searchDirectory("Liddell", limit: 10)
        #expect(found.people.map(\.username) == ["alice"])
        #expect(found.people.first?.subject == (try await guid(of: "alice")) && found.people.first?.email == "alice@gatehouse.test")
        #expect(try await provider.searchDirectory("grace.hopper", limit: 10).people.map(\.username) == ["grace"])
        #expect(try await provider.searchDirectory("*", limit: 10).people.isEmpty)
    }

    @Test func reasonsTheRightPasswordEarnsAreToldAndOthersLookLikeAWrongPassword() async throws {
        let provider = try Self.provider(dc)
        let restricted: [(String, String, String)] = [
            ("dave", "Dave-Secret-1", "account_disabled"), ("erin", "Erin-Secret-1", "password_must_change"),
            ("frank", "Frank-Secret-1", "account_expired"), ("ivan", "Ivan-Secret-1", "outside_logon_hours"),
            ("judy", "Judy-Secret-1", "workstation_not_allowed"),
        ]
        for (user, password, reason) in restricted {
            let right = await refusal(provider, user, password)
            #expect(right?.code == .accessDenied && right?.httpStatus == 403, "\(user)")
            #expect(right?.reason == reason && right?.reasonIsPublic == true, "\(user): \(right?.reason ?? "-")")
            #expect(right?.isWrongAnswer == false, "the password was right")
            #expect(right?.message.contains("administrator") == true)
            // With a wrong password AD says 52e whatever the state: nothing tells the account apart.
            let wrong = await refusal(provider, user, "Not-The-Password-1")
            #expect(wrong?.code == .invalidCredentials && wrong?.message == "Wrong username or password.", "\(user)")
            #expect(wrong?.reason == "wrong_password" && wrong?.reasonIsPublic == false)
        }
        // AD says 775 for a locked account whatever the password: told as a wrong password both ways.
        for password in ["Heidi-Secret-1", "Not-The-Password-1"] {
            let locked = await refusal(provider, "heidi", password)
            #expect(locked?.code == .invalidCredentials && locked?.message == "Wrong username or password.")
            #expect(locked?.reason == "account_locked" && locked?.reasonIsPublic == false)
        }
        #expect(await refusal(provider, "nobody", "Whatever-1")?.reason == "unknown_user")
    }

    @Test func theAuditLogKeepsThePreciseReasonOfEachRefusal() async throws {
        let broker = try await Self.broker(dc)
        defer { broker.temporary.remove() }
        let attempts = [("dave", "Dave-Secret-1"), ("heidi", "Heidi-Secret-1"), ("frank", "Not-The-Password-1")]
        for (user, password) in attempts {
            await #expect(throws: BrokerError.self) {
                _ = try await broker.signIn(FlowRequest(appID: "notes", providerID: "corp-ad"), answer: ["username": .string(user), "password": .string(password)])
            }
        }
        let failures = try await broker.store.auditEvents(type: "signin.failure", appID: nil, accountID: nil, since: nil, limit: 100)
        #expect(Set(failures.compactMap { $0.details["reason"] }) == ["account_disabled", "account_locked", "wrong_password"])
    }

    @Test func startTLSAndLDAPSCheckTheDCCertificate() async throws {
        let startTLS = try Self.provider(dc, url: dc.ldapURL, extra: "startTLS: true")
        #expect(try await startTLS.signIn(username: "alice", password: "Alice-Secret-1").username == "alice")
        let steps = await startTLS.diagnose(username: "GATEHOUSE\\alice", password: "Alice-Secret-1")
        #expect(steps.map(\.name) == ["connect", "tls", "service bind", "search", "bind", "groups"])
        #expect(steps.allSatisfy { $0.passed })
        #expect(steps.last?.detail == "member of admins, engineers, staff")

        // The system CAs do not know the test CA.
        let untrusted = try Self.provider(dc, extra: "").withoutRootCA()
        await #expect {
            _ = try await untrusted.signIn(username: "alice", password: "Alice-Secret-1")
        } throws: { error in
            (error as? BrokerError)?.reason == "directory_tls"
        }
        // A must-change account's diagnosis says the password is right.
        let erin = await (try Self.provider(dc)).diagnose(username: "erin", password: "Erin-Secret-1")
        #expect(erin.last?.name == "bind" && erin.last?.passed == false)
        #expect(erin.last?.detail.contains("the password is right") == true && erin.last?.detail.contains("password_must_change") == true)
    }

    @Test func nestedGroupsCanBeTurnedOffAndGroupsTooThroughConfig() async throws {
        let direct = try Self.provider(dc, extra: "groupSearch:\n  nested: false")
        #expect(try await direct.signIn(username: "alice", password: "Alice-Secret-1").claims.groups == ["admins", "engineers"])
        let none = try Self.provider(dc, extra: "groupSearch: null")
        #expect(try await none.signIn(username: "alice", password: "Alice-Secret-1").claims.groups == nil)
    }

    @Test func anExpiredPasswordIsChangedOnTheSignInPageWhenThePolicyAllowsIt() async throws {
        let broker = try await Self.broker(dc, passwordChange: true)
        defer { broker.temporary.remove() }
        let started = try await broker.start(FlowRequest(appID: "notes", providerID: "corp-ad"))
        let change = try await broker.engine.resume(flowID: started.flowID, answer: ChallengeResponse(["username": "peggy", "password": "Peggy-Secret-1"]), client: nil)
        guard case .challenge(_, let challenge, _) = change else { throw FlowDriverError.unexpectedOutcome("\(change)") }
        #expect(challenge.type == "change_directory_password")
        #expect(challenge.fields["reason"] == .string("password_must_change"))

        func answer(_ current: String, _ new: String) async -> BrokerError? {
            await thrownError {
                _ = try await broker.engine.resume(
                    flowID: started.flowID, answer: ChallengeResponse(["currentPassword": .string(current), "newPassword": .string(new)]), client: nil)
            }
        }
        // The current password again (the flow keeps none): a wrong one counts as a wrong answer.
        let wrong = await answer("Not-The-Password-1", "Blue-Harbour-42!")
        #expect(wrong?.code == .invalidCredentials && wrong?.isWrongAnswer == true)
        // The app's password policy first, then the domain's (complexity: three kinds of characters).
        #expect(await answer("Peggy-Secret-1", "short")?.code == .passwordTooShort)
        let simple = await answer("Peggy-Secret-1", "lowercase only but long enough")
        #expect(simple?.code == .passwordDenied && simple?.reason == "directory_password_policy" && simple?.reasonIsPublic == true)
        let done = try await broker.finish(started.flowID, answer: ["currentPassword": "Peggy-Secret-1", "newPassword": "Blue-Harbour-42!"])
        #expect(done.account?.username == "peggy")
        let changed = try await broker.store.auditEvents(type: "ldap.password_changed", appID: "notes", accountID: nil, since: nil, limit: 10)
        #expect(changed.first?.details["username"] == "peggy")

        // The new password is the password now; the old one is not.
        let provider = try Self.provider(dc)
        #expect(try await provider.signIn(username: "peggy", password: "Blue-Harbour-42!").username == "peggy")
        #expect(await refusal(provider, "peggy", "Peggy-Secret-1")?.reason == "wrong_password")
    }

    @Test func withoutThePolicyAMustChangePasswordIsOnlyTold() async throws {
        let broker = try await Self.broker(dc, passwordChange: false)
        defer { broker.temporary.remove() }
        let error = await thrownError {
            _ = try await broker.signIn(FlowRequest(appID: "notes", providerID: "corp-ad"), answer: ["username": "erin", "password": "Erin-Secret-1"])
        }
        #expect(error?.code == .accessDenied && error?.reason == "password_must_change")
    }

    @Test func disabledAndExpiredAccountsAreRefusedAtRefresh() async throws {
        let broker = try await Self.broker(dc)
        defer { broker.temporary.remove() }
        let signedIn = try await broker.signIn(FlowRequest(appID: "notes", providerID: "corp-ad"), answer: ["username": "oscar", "password": "Oscar-Secret-1"])
        let refresh = try #require(signedIn.tokens.refreshToken)
        let first = try await broker.broker.oauth.token(
            try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "notes"], basic: nil))
        let next = try #require(first.refreshToken)

        try await dc.tool(["user", "disable", "oscar"])
        let refused = await thrownError {
            _ = try await broker.broker.oauth.token(try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": next, "client_id": "notes"], basic: nil))
        }
        #expect(refused?.code == .invalidGrant)
        let provider = try Self.provider(dc)
        let oscar = try await guid(of: "oscar")
        #expect(try await provider.recheck(subject: oscar) == .refused(reason: "account_disabled"))
        try await dc.tool(["user", "enable", "oscar"])
        #expect(try await provider.recheck(subject: oscar) == .valid(freshClaims: nil))

        // frank's account expired on 2000-01-01: refused now, valid on the injected clock's 1999.
        let frank = try await guid(of: "frank")
        #expect(try await provider.recheck(subject: frank) == .refused(reason: "account_expired"))
        let before = TestClock(Date(timeIntervalSince1970: 915_148_800))
        #expect(try await Self.provider(dc, clock: before).recheck(subject: frank) == .valid(freshClaims: nil))
        #expect(try await provider.recheck(subject: UUID().uuidString.lowercased()) == .refused(reason: "identity_refused"))
    }

    @Test func theADPresetFillsInADefaultsAndChecksItsOwnKeys() throws {
        let provider = try Self.provider(dc)
        let config = provider.config
        #expect(config.userSearch.usernameAttrs == ["sAMAccountName", "userPrincipalName"])
        #expect(config.userSearch.idAttr == "objectGUID")
        #expect(config.userSearch.filter == "(&(objectCategory=person)(objectClass=user))")
        #expect(config.groupSearch?.nested == true && config.groupSearch?.baseDN == "DC=gatehouse,DC=test")
        #expect(config.expectedDomain == "GATEHOUSE")

        func issues(_ yaml: String) -> [String] { configIssues(yaml, registry: LDAPTests.registry) }
        let base = LDAPTests.yaml(url: "ldap://127.0.0.1:1")
        #expect(
            issues(base.replacingOccurrences(of: "maxConnections: 4", with: "maxConnections: 4\n          netbiosDomain: CORP")).contains {
                $0.hasPrefix("providers[0].config.netbiosDomain: is for Active Directory")
            })
        #expect(
            issues(base.replacingOccurrences(of: "maxConnections: 4", with: "maxConnections: 4\n          activeDirectory: true\n          netbiosDomain: \"A\\\\B\""))
                .contains {
                    $0.hasPrefix("providers[0].config.netbiosDomain:")
                })
        #expect(
            issues(base.replacingOccurrences(of: "username: uid", with: "username: [uid, \"x)(y\"]")).contains {
                $0.hasPrefix("providers[0].config.userSearch.username[1]:")
            })
        #expect(
            issues(
                base.replacingOccurrences(of: "- userAttr: DN", with: "- userAttr: uid").replacingOccurrences(
                    of: "nameAttr: cn", with: "nameAttr: cn\n            nested: true")
            ).contains {
                $0.hasPrefix("providers[0].config.groupSearch.nested:")
            })
    }

    @Test func wrongPasswordsCountPerEntryWhicheverUsernameWasTyped() async throws {
        let provider = try Self.provider(dc, extra: "lockout: {maxFailures: 3, lockoutDuration: 5m}")
        for typed in ["trent", "trent@gatehouse.test"] {
            #expect(await refusal(provider, typed, "Not-The-Password-1")?.reason == "wrong_password", "\(typed)")
        }
        // The third wrong password, typed a third way, locks the entry.
        #expect(await refusal(provider, "GATEHOUSE\\trent", "Not-The-Password-1")?.reason == "too_many_failures")
        // Locked: even the right password is refused, looking like a wrong one (a locked_out would
        // tell anyone the username exists), and the directory is not asked.
        let locked = await refusal(provider, "TRENT", "Trent-Secret-1")
        #expect(locked?.code == .invalidCredentials && locked?.message == "Wrong username or password." && locked?.reason == "too_many_failures")
        // An unknown username is never locked: nothing tells the two apart.
        for _ in 0..<4 { #expect(await refusal(provider, "nobody-here", "Not-The-Password-1")?.reason == "unknown_user") }
    }

    @Test func aConfigThatListsBinaryAttributesKeepsBase64URLSubjects() async throws {
        let provider = try Self.provider(dc, extra: "binaryAttributes: [objectGUID, objectSid]")
        let alice = try await provider.signIn(username: "alice", password: "Alice-Secret-1")
        let bytes = try #require(LDAPValueFormat.guidBytes(try await guid(of: "alice")))
        #expect(alice.subject == Base64URL.encode(bytes))
        #expect(try await provider.recheck(subject: alice.subject) == .valid(freshClaims: nil))
    }

    @Test func objectGUIDTextRoundTripsToItsBytes() {
        // The example of MS-DTYP 2.3.4.3: {6B29FC40-CA47-1067-B31D-00DD010662DA}.
        let bytes = Data([0x40, 0xfc, 0x29, 0x6b, 0x47, 0xca, 0x67, 0x10, 0xb3, 0x1d, 0x00, 0xdd, 0x01, 0x06, 0x62, 0xda])
        #expect(LDAPValueFormat.guid.text(bytes) == "6b29fc40-ca47-1067-b31d-00dd010662da")
        #expect(LDAPValueFormat.guid.bytes("6B29FC40-CA47-1067-B31D-00DD010662DA") == bytes)
        #expect(
            LDAPFilter.equals("objectGUID", "6b29fc40-ca47-1067-b31d-00dd010662da", format: .guid)
                == "(objectGUID=\\40\\fc\\29\\6b\\47\\ca\\67\\10\\b3\\1d\\00\\dd\\01\\06\\62\\da)")
        // Full-width digits are hex digits to Character.isHexDigit, not to a GUID.
        for text in [
            "*", "6b29fc40ca471067b31d00dd010662da", "6b29fc40-ca47-1067-b31d-00dd010662dz", "", "\u{FF16}b29fc40-ca47-1067-b31d-00dd010662da",
            "6b29fc40-ca4-71067-b31d-00dd010662da",
        ] {
            #expect(LDAPFilter.equals("objectGUID", text, format: .guid) == "(!(objectClass=*))", "\(text)")
        }
        #expect(ActiveDirectoryRestriction.dataCode("80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext error, data 532, v4563") == "532")
        #expect(ActiveDirectoryRestriction(dataCode: "532") == .passwordExpired)
        #expect(ActiveDirectoryRestriction.refusalReason(dataCode: "525") == "unknown_user")
        #expect(ActiveDirectoryRestriction.refusalReason(dataCode: "52e") == "wrong_password")
    }
}

extension LDAPProvider {
    /// The same provider trusting only the system's CAs.
    func withoutRootCA() throws -> LDAPProvider {
        var config = config
        config.rootCA = nil
        var logger = Logger(label: "ad.test")
        logger.logLevel = .critical
        return try LDAPPlugin.make(id: id, config: config, environment: .forTests(instance: "ldap", store: LDAPTests.scratch.store, logger: logger))
    }
}
