import Foundation
import GatehouseCore
import GatehouseTesting
import Logging
import Testing

@testable import LDAP

/// The `ldap` plugin against a real OpenLDAP server (Tests/ldap/slapd.sh, seed Tests/ldap/seed.ldif):
/// search-then-bind, groups, every refusal with its audit reason, injection attempts, a directory that
/// stops or stalls, StartTLS with a test CA, and 50 sign-ins at once.
@Suite("LDAP", .shared(Slapd.self))
struct LDAPTests {
    static let people = "ou=people,dc=example,dc=org"

    static func config(url: String, extra: String = "", bindPassword: String = "service-secret", timeout: String = "1s") -> String {
        """
        url: \(url)
        bindDN: cn=gatehouse,ou=services,dc=example,dc=org
        bindPassword: \(bindPassword)
        connectTimeout: \(timeout)
        operationTimeout: \(timeout)
        maxConnections: 4
        userSearch:
          baseDN: ou=people,dc=example,dc=org
          filter: (objectClass=inetOrgPerson)
          username: uid
          idAttr: entryUUID
          emailAttr: mail
          nameAttr: displayName
          lockedFilter: (employeeType=disabled)
        groupSearch:
          baseDN: ou=groups,dc=example,dc=org
          filter: (objectClass=groupOfNames)
          userMatchers:
            - userAttr: DN
              groupAttr: member
          nameAttr: cn
        \(extra)
        """
    }

    static func yaml(url: String, extra: String = "") -> String {
        let indented = config(url: url, extra: extra).split(separator: "\n").map { "          " + $0 }.joined(separator: "\n")
        return """
            providers:
              - id: corp-ldap
                type: ldap
                config:
            \(indented)
            apps:
              - id: notes
                policy:
                  identityProviders: [corp-ldap]
                  selfRegistration: true
                  allowedScopes: [openid, profile, email, groups]
                  defaultScopes: [openid, profile, email, groups]
            """
    }

    /// Timeouts default to 10 s: room for a slapd waiting for a core on a loaded machine; the tests
    /// about timeouts set their own.
    static func provider(_ slapd: Slapd, extra: String = "", bindPassword: String = "service-secret", timeout: String = "10s") throws -> LDAPProvider {
        try provider(url: slapd.url, extra: extra, bindPassword: bindPassword, timeout: timeout)
    }

    static func provider(url: String, extra: String = "", bindPassword: String = "service-secret", timeout: String = "1s") throws -> LDAPProvider {
        let node = try ConfigNode.parse(yaml: config(url: url, extra: extra, bindPassword: bindPassword, timeout: timeout), environment: [:]).node
        let config = try ConfigNodeDecoder.decode(LDAPConfig.self, from: node)
        var logger = Logger(label: "ldap.test")
        logger.logLevel = .critical
        return try LDAPPlugin.make(id: "corp-ldap", config: config, environment: environment(logger))
    }

    /// The plugin keeps nothing in storage; one scratch store serves every provider of the run.
    static let scratch = try! TemporaryStore()

    static func environment(_ logger: Logger) throws -> PluginEnvironment {
        .forTests(instance: "ldap", store: scratch.store, logger: logger)
    }

    var slapd: Slapd { Slapd.shared }

    /// The audit reason of a refused sign-in; fails the test when the sign-in is not refused as wrong credentials.
    func refusalReason(_ provider: LDAPProvider, _ username: String, _ password: String) async -> String? {
        do {
            let identity = try await provider.signIn(username: username, password: password)
            Issue.record("'\(username)' signed in as \(identity.subject)")
            return nil
        } catch let error as BrokerError {
            #expect(error.code == .invalidCredentials)
            #expect(error.message == "Wrong username or password.")
            return error.reason
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test func signsInWithGroupsAndAttributesMappedToClaims() async throws {
        let provider = try Self.provider(slapd)
        let identity = try await provider.signIn(username: "alice", password: "alice-password-1")
        #expect(identity.username == "alice")
        #expect(UUID(uuidString: identity.subject) != nil, "the subject is the entryUUID")
        #expect(identity.claims.groups == ["admins", "engineers"])
        #expect(identity.claims.email == "alice@example.org")
        #expect(identity.claims.emailVerified)
        #expect(identity.claims.name == "Alice Liddell")
        #expect(identity.claims.preferredUsername == "alice")
        #expect(identity.methods == ["pwd"])
        // The same person is the same subject next time; someone else is not.
        #expect(try await provider.signIn(username: "ALICE", password: "alice-password-1").subject == identity.subject)
        let bob = try await provider.signIn(username: "bob", password: "bob-password-1")
        #expect(bob.subject != identity.subject)
        #expect(bob.claims.groups == ["engineers"])
    }

    /// An administrator finds people by part of a name, username or address before they sign in;
    /// what they type matches itself only (a `*` or a `)` widens nothing).
    @Test func searchesItsPeopleByPartOfANameUsernameOrAddress() async throws {
        let provider = try Self.provider(slapd)
        let byName = try await provider.searchDirectory("liddell", limit: 10)
        #expect(byName.people.map(\.username) == ["alice"] && !byName.truncated)
        let alice = try #require(byName.people.first)
        #expect(alice.name == "Alice Liddell" && alice.email == "alice@example.org")
        #expect(alice.subject == (try await provider.signIn(username: "alice", password: "alice-password-1")).subject)
        #expect(try await provider.searchDirectory("bob@example", limit: 10).people.map(\.username) == ["bob"])
        // `*` finds the one entry with a star in its name (star*user), not everyone.
        #expect(try await provider.searchDirectory("*", limit: 10).people.map(\.username) == ["star*user"])
        for injection in [")(uid=*", "*)(|(uid=*", "\\2a"] {
            #expect(try await provider.searchDirectory(injection, limit: 10).people.isEmpty, "\(injection) found people")
        }
        let all = try await provider.searchDirectory("example.org", limit: 2)
        #expect(all.people.count == 2 && all.truncated)
    }

    @Test func signsInThroughTheFlowAPIAndKeepsTheAccount() async throws {
        let broker = try await TestBroker.make(yaml: Self.yaml(url: slapd.url), registry: Self.registry)
        defer { broker.temporary.remove() }
        let started = try await broker.start(FlowRequest(appID: "notes", providerID: "corp-ldap"))
        #expect(started.challenge.type == "credentials")
        let first = try await broker.finish(started.flowID, answer: ["username": "alice", "password": "alice-password-1"])
        let account = try #require(first.account)
        #expect(account.username == "alice")
        let again = try await broker.signIn(FlowRequest(appID: "notes", providerID: "corp-ldap"), answer: ["username": "alice", "password": "alice-password-1"])
        #expect(again.account?.id == account.id)

        // Accounts live in the directory: registering here is refused by the plugin, even where the
        // app allows self-registration.
        await #expect {
            _ = try await broker.start(FlowRequest(appID: "notes", providerID: "corp-ldap", purpose: .register))
        } throws: { error in
            (error as? BrokerError)?.code == .registrationDisabled
        }
    }

    @Test func tellsRefusalsApartInTheAuditLogButNotOnTheWire() async throws {
        let broker = try await TestBroker.make(yaml: Self.yaml(url: slapd.url), registry: Self.registry)
        defer { broker.temporary.remove() }
        let attempts: [(String, String)] = [("alice", "wrong-password"), ("nobody", "whatever-password"), ("carol", "carol-password-1")]
        for (username, password) in attempts {
            do {
                _ = try await broker.signIn(FlowRequest(appID: "notes", providerID: "corp-ldap"), answer: ["username": .string(username), "password": .string(password)])
                Issue.record("\(username) signed in")
            } catch let error as BrokerError {
                #expect(error.code == .invalidCredentials)
                #expect(error.message == "Wrong username or password.")
            }
        }
        let failures = try await broker.store.auditEvents(type: "signin.failure", appID: nil, accountID: nil, since: nil, limit: 100)
        #expect(Set(failures.compactMap { $0.details["reason"] }) == ["wrong_password", "unknown_user", "account_locked"])
    }

    @Test func refusesWrongPasswordUnknownUserAndLockedAccount() async throws {
        let provider = try Self.provider(slapd)
        #expect(await refusalReason(provider, "alice", "alice-password-2") == "wrong_password")
        #expect(await refusalReason(provider, "nobody", "alice-password-1") == "unknown_user")
        // carol's password is right, but her entry matches the lockedFilter.
        #expect(await refusalReason(provider, "carol", "carol-password-1") == "account_locked")
    }

    @Test func refusesAnEmptyPasswordWithoutAskingTheDirectory() async throws {
        // Nothing listens on port 1: a call that reached the "directory" would answer
        // provider_unavailable, which refusalReason reports as a failure.
        let provider = try Self.provider(url: "ldap://127.0.0.1:1")
        #expect(await refusalReason(provider, "alice", "") == "empty_password")
        // A NUL would cut the password short for C code that measures it with strlen.
        #expect(await refusalReason(provider, "alice", "\0") == "invalid_password")
        #expect(await refusalReason(provider, "alice", "alice-password-1\0junk") == "invalid_password")
    }

    @Test(arguments: ["*", "load*", "alice)(uid=*", "*)(objectClass=*", "alice)(|(uid=*", "al*ce", "\\2a", "alice\0", "(uid=alice)"])
    func filterMetacharactersInTheUsernameCannotWidenTheSearch(username: String) async throws {
        let provider = try Self.provider(slapd)
        let reason = await refusalReason(provider, username, "alice-password-1")
        #expect(reason == "unknown_user" || reason == "invalid_username", "\(username.debugDescription): \(reason ?? "-")")
    }

    @Test func findsAUsernameWithMetacharactersLiterally() async throws {
        let provider = try Self.provider(slapd)
        let identity = try await provider.signIn(username: "star*user", password: "star-password-1")
        #expect(identity.username == "star*user")
        #expect(LDAPFilter.escape("a*b(c)d\\e\0") == "a\\2ab\\28c\\29d\\5ce\\00")
        // Binary attributes (objectGUID) are matched byte for byte; text that is no base64url matches nothing.
        #expect(LDAPFilter.equals("objectGUID", Base64URL.encode(Data([0x01, 0xff, 0x2a, 0x00])), format: .binary) == "(objectGUID=\\01\\ff\\2a\\00)")
        #expect(LDAPFilter.equals("objectGUID", "*", format: .binary) == "(!(objectClass=*))")
    }

    @Test func refusesAUsernameTwoEntriesMatch() async throws {
        let provider = try Self.provider(slapd)
        #expect(await refusalReason(provider, "twin", "twin-password-1") == "ambiguous_user")
    }

    @Test func reportsADirectoryStoppedMidTestAndRecoversWhenItIsBack() async throws {
        try await Slapd.withOwn { own in
            let provider = try Self.provider(own)
            _ = try await provider.signIn(username: "alice", password: "alice-password-1")
            #expect(await provider.health().healthy == true)

            await own.stop()
            let started = Date()
            await #expect {
                _ = try await provider.signIn(username: "alice", password: "alice-password-1")
            } throws: { error in
                (error as? BrokerError)?.code == .providerUnavailable && (error as? BrokerError)?.kind == .unavailable
            }
            // Well under the 10 s timeouts: a refused connection is not waited out (the bound leaves
            // room for a loaded machine).
            #expect(Date().timeIntervalSince(started) < 5, "a stopped directory is reported at once")
            let health = await provider.health()
            #expect(!health.healthy)
            #expect(health.detail != nil)

            try await own.restart()
            try await Task.sleep(for: .seconds(LDAPConnectionPool.failFastInterval + 0.2))
            let identity = try await provider.signIn(username: "alice", password: "alice-password-1")
            #expect(identity.claims.groups == ["admins", "engineers"])
            #expect(await provider.health().healthy == true)
        }
    }

    @Test func timesOutOnAStalledDirectoryAndRecovers() async throws {
        try await Slapd.withOwn { own in
            let provider = try Self.provider(own, timeout: "1s")
            _ = try await provider.signIn(username: "bob", password: "bob-password-1")

            await own.pause()
            let started = Date()
            await #expect {
                _ = try await provider.signIn(username: "bob", password: "bob-password-1")
            } throws: { error in
                (error as? BrokerError)?.code == .providerUnavailable
            }
            let waited = Date().timeIntervalSince(started)
            // At least the operation timeout (1 s); the upper bound only proves the call is bounded: a
            // machine with every suite and a CPU hog on its two cores adds seconds to any wall-clock wait.
            #expect(waited >= 0.9 && waited < 30, "operationTimeout is 1 s; waited \(waited) s")
            // Calls right after fail fast instead of each waiting for the timeout again.
            let again = Date()
            await #expect(throws: BrokerError.self) { _ = try await provider.signIn(username: "bob", password: "bob-password-1") }
            #expect(Date().timeIntervalSince(again) < 0.9, "a call in the fail-fast window waited for the operation timeout")
            #expect(await provider.health().healthy == false)

            await own.resume()
            try await Task.sleep(for: .seconds(LDAPConnectionPool.failFastInterval + 0.2))
            #expect(try await provider.signIn(username: "bob", password: "bob-password-1").username == "bob")
        }
    }

    @Test func signsInFiftyPeopleAtOnceEachAsThemselves() async throws {
        // Generous timeouts: this proves correctness under concurrency (4 connections, 50 callers), not
        // speed, and the whole suite shares two cores with it (and, in the proof that it holds on a
        // loaded machine, with a CPU hog): slapd may wait seconds for a core.
        let provider = try Self.provider(slapd, timeout: "60s")
        let results = try await withThrowingTaskGroup(of: (Int, String?, String?).self) { group in
            for index in 1...50 {
                let number = String(format: "%02d", index)
                // Every fifth has a wrong password.
                let password = index % 5 == 0 ? "wrong-\(number)" : "load-password-\(number)"
                group.addTask {
                    do {
                        let identity = try await provider.signIn(username: "load\(number)", password: password)
                        return (index, identity.username, identity.subject)
                    } catch let error as BrokerError where error.code == .invalidCredentials {
                        return (index, nil, error.reason)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 50)
        for (index, username, detail) in results {
            if index % 5 == 0 {
                #expect(username == nil && detail == "wrong_password", "load\(index)")
            } else {
                #expect(username == String(format: "load%02d", index))
            }
        }
        let subjects = results.compactMap { $0.1 == nil ? nil : $0.2 }
        #expect(Set(subjects).count == 40, "forty distinct people")
    }

    @Test func upgradesToTLSWithTheTestCAAndRefusesAnUntrustedCertificate() async throws {
        let trusted = try Self.provider(slapd, extra: "startTLS: true\nrootCA: \(slapd.caFile)")
        #expect(try await trusted.signIn(username: "alice", password: "alice-password-1").username == "alice")
        let steps = await trusted.diagnose(username: "alice", password: "alice-password-1")
        #expect(steps.map(\.name) == ["connect", "tls", "service bind", "search", "bind", "groups"])
        #expect(steps.allSatisfy { $0.passed })
        #expect(steps[1].detail.contains("certificate verified"))

        // Without the test CA the directory's certificate is not trusted.
        let untrusted = try Self.provider(slapd, extra: "startTLS: true")
        await #expect {
            _ = try await untrusted.signIn(username: "alice", password: "alice-password-1")
        } throws: { error in
            (error as? BrokerError)?.code == .providerUnavailable && (error as? BrokerError)?.reason == "directory_tls"
        }
        let failed = await untrusted.diagnose(username: "alice", password: nil)
        #expect(failed.last?.name == "tls")
        #expect(failed.last?.passed == false)
    }

    @Test func diagnosisNamesTheStepThatFails() async throws {
        let wrongService = await (try Self.provider(slapd, bindPassword: "not-the-secret")).diagnose(username: "alice", password: nil)
        #expect(wrongService.map(\.name) == ["connect", "tls", "service bind"])
        #expect(wrongService.last?.passed == false)
        #expect(wrongService.last?.detail.contains("Invalid credentials") == true)

        let unknown = await (try Self.provider(slapd)).diagnose(username: "nobody", password: nil)
        #expect(unknown.last?.name == "search")
        #expect(unknown.last?.detail.contains("no entry (with a DN) matches") == true)

        let locked = await (try Self.provider(slapd)).diagnose(username: "carol", password: "carol-password-1")
        #expect(locked.last?.name == "search")
        #expect(locked.last?.passed == false)
        #expect(locked.last?.detail.contains("lockedFilter") == true)

        let wrongPassword = await (try Self.provider(slapd)).diagnose(username: "bob", password: "nope")
        #expect(wrongPassword.last?.name == "bind")
        #expect(wrongPassword.last?.passed == false)
        #expect(wrongPassword.last?.detail.contains("wrong_password") == true)

        let nothing = await (try Self.provider(url: "ldap://127.0.0.1:1")).diagnose(username: nil, password: nil)
        #expect(nothing.map(\.name) == ["connect"])
        #expect(nothing.first?.passed == false)
    }

    @Test func rechecksWhetherASubjectIsStillInTheDirectory() async throws {
        let provider = try Self.provider(slapd)
        let alice = try await provider.signIn(username: "alice", password: "alice-password-1")
        #expect(try await provider.isStillValid(subject: alice.subject))
        #expect(try await !provider.isStillValid(subject: UUID().uuidString.lowercased()))
        #expect(try await !provider.isStillValid(subject: "*"))
    }

    @Test func reportsConfigMistakesWithTheirExactPath() throws {
        func issues(_ yaml: String) -> [String] { configIssues(yaml, registry: Self.registry) }
        let base = Self.yaml(url: "ldap://127.0.0.1:1")
        #expect(
            issues(base.replacingOccurrences(of: "url: ldap://127.0.0.1:1", with: "url: http://dir.example.org")).contains { $0.hasPrefix("providers[0].config.url:") })
        #expect(
            issues(base.replacingOccurrences(of: "url: ldap://127.0.0.1:1", with: "url: [ldap://a.example.org, ftp://b]")).contains {
                $0.hasPrefix("providers[0].config.url[1]:")
            })
        #expect(
            issues(base.replacingOccurrences(of: "bindPassword: service-secret", with: "bindPassword: \"${LDAP_PASSWORD:-}\"")).contains {
                $0.hasPrefix("providers[0].config.bindPassword:")
            })
        #expect(
            issues(base.replacingOccurrences(of: "filter: (objectClass=inetOrgPerson)", with: "filter: objectClass=inetOrgPerson")).contains {
                $0.hasPrefix("providers[0].config.userSearch.filter:")
            })
        #expect(
            issues(base.replacingOccurrences(of: "username: uid", with: "username: uid\n            scope: deep")).contains {
                $0.hasPrefix("providers[0].config.userSearch.scope:")
            })
        #expect(issues(base.replacingOccurrences(of: "maxConnections: 4", with: "maxConnections: 0")).contains { $0.hasPrefix("providers[0].config.maxConnections:") })
        #expect(issues(base.replacingOccurrences(of: "maxConnections: 4", with: "maxConection: 4")).contains { $0.hasPrefix("providers[0].config.maxConection:") })
        #expect(
            issues(base.replacingOccurrences(of: "url: ldap://127.0.0.1:1", with: "url: ldaps://127.0.0.1:1\n          startTLS: true")).contains {
                $0.hasPrefix("providers[0].config.url:")
            })
        #expect(issues(base).isEmpty)
        // Passwords in the clear to another host: refused outside development unless said on purpose.
        let remote = base.replacingOccurrences(of: "url: ldap://127.0.0.1:1", with: "url: ldap://127.evil.example:389")
        #expect(issues(remote).contains { $0.hasPrefix("providers[0].config.url: sends passwords in the clear") })
        #expect(issues(remote.replacingOccurrences(of: "maxConnections: 4", with: "maxConnections: 4\n          insecureNoTLS: true")).isEmpty)
        #expect(issues(remote.replacingOccurrences(of: "maxConnections: 4", with: "maxConnections: 4\n          startTLS: true")).isEmpty)
        #expect(issues("environment: development\n" + remote).isEmpty)
        // Not checking the directory's certificate: refused outside development, whatever else is said.
        let unchecked = base.replacingOccurrences(of: "maxConnections: 4", with: "maxConnections: 4\n          startTLS: true\n          insecureSkipVerify: true")
        #expect(issues(unchecked).contains { $0.hasPrefix("providers[0].config.insecureSkipVerify: turns off the check of the directory's certificate") })
        #expect(issues("environment: development\n" + unchecked).isEmpty)
        #expect(issues(base.replacingOccurrences(of: "nameAttr: cn", with: "nameAttr: \"cn)(x\"")).contains { $0.hasPrefix("providers[0].config.groupSearch.nameAttr:") })
    }

    static var registry: PluginRegistry {
        var registry = PluginRegistry()
        registry.register(LDAPPlugin.self)
        return registry
    }
}
