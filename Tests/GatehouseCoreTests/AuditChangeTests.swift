import Foundation
@testable import GatehouseCore
import GatehouseTesting
import Testing

/// An audited change reads as what changed: one line per value, lists as what joined and left, and
/// switches as off/on, from a real policy change and from events written before this existed.
extension GatehouseCoreTests {
    @Test func aPolicyChangeReadsAsTheOneSwitchThatMoved() async throws {
        let test = try await TestBroker.make(
            yaml: """
                providers: [{id: name, type: named-subject}]
                apps:
                  - id: notes
                    redirectURIs: [https://notes.example/cb]
                    policy: {identityProviders: [name]}
                """, registry: TestRegistry.registry)
        defer { test.temporary.remove() }
        let admin = AdminIdentity(name: "ops")
        _ = try await test.broker.admin.patchPolicy(id: "notes", patch: ["statelessAuthentication": true], by: admin)
        _ = try await test.broker.admin.updateApp(id: "notes", changes: ["redirectURIs": ["https://notes.example/cb", "https://notes.example/cb2"]], by: admin)
        let events = try await test.broker.admin.audit(AuditQuery(appID: "notes"))
        let policy = try #require(events.first { $0.type == "policy.updated" })
        // The first change at run time also takes the app over from the config file, and says so.
        #expect(AuditChange.of(policy).map(\.summary) == ["managedBy: config → admin", "statelessAuthentication: off → on"])
        let app = try #require(events.first { $0.type == "app.updated" })
        #expect(AuditChange.of(app).map(\.summary) == ["redirectURIs: +https://notes.example/cb2"])
        // The prefix filter finds both kinds of policy and app events, and nothing else.
        #expect(try await test.broker.admin.audit(AuditQuery(type: "policy.", appID: "notes")).map(\.type) == ["policy.updated"])
        #expect(Set(try await test.broker.admin.audit(AuditQuery(type: "app.", appID: "notes")).map(\.type)) == ["app.updated"])
    }

    @Test func changesReadNestedValuesRemovalsAndAbsentKeys() {
        let event = AuditEvent(
            time: Date(), type: "app.updated",
            details: [
                "before": #"{"name":"Notes","version":3,"policy":{"lockout":{"maxFailures":5},"scopes":["a","b"],"webhook":null}}"#,
                "after": #"{"name":"Notes app","version":4,"policy":{"lockout":{"maxFailures":10},"scopes":["b","c"],"webhook":{"url":"https://h.example"}}}"#,
            ])
        #expect(
            AuditChange.of(event).map(\.summary) == [
                "name: Notes → Notes app", "policy.lockout.maxFailures: 5 → 10", "policy.scopes: +c -a",
                #"policy.webhook: (none) → {"url":"https://h.example"}"#,
            ])
        // Not a change: no lines; unreadable JSON: no lines rather than a guess.
        #expect(AuditChange.of(AuditEvent(time: Date(), type: "signin.success")).isEmpty)
        #expect(AuditChange.of(AuditEvent(time: Date(), type: "app.updated", details: ["before": "{", "after": "{}"])).isEmpty)
    }
}

/// A generated password passes the policy it is made for, a PIN-like one too.
extension GatehouseCoreTests {
    @Test func generatedPasswordsPassTheirPolicyDigitsOnlyIncluded() throws {
        for policy in [PasswordPolicy(), PasswordPolicy(minLength: 6, maxLength: 12, numericOnly: true), PasswordPolicy(minLength: 40)] {
            let password = try AdminService.generatedPassword(policy: policy, username: "someone")
            #expect((try? policy.check(password, username: "someone")) != nil)
            #expect(!policy.numericOnly || password.allSatisfy(\.isNumber))
        }
    }
}
