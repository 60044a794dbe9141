import Foundation
import GatehouseTesting
import Testing

@testable import GatehouseCore

/// The account decisions of a sign-in, step by step (`AccountDecisions`): each step decides one thing
/// about an identity its provider just vouched for.
extension GatehouseCoreTests {
    static let decisionsYAML = """
        providers:
          - {id: ext, type: named-subject}
          - {id: open, type: named-subject, config: {openEnrollment: true}}
          - {id: upstream-a, type: named-subject, config: {trustsEmail: true}}
          - {id: upstream-b, type: named-subject, config: {trustsEmail: true}}
        apps:
          - id: linking
            policy: {identityProviders: [upstream-a, upstream-b], selfRegistration: true, linkAccountsByVerifiedEmail: true}
          - id: closed
            policy: {identityProviders: [ext, open]}
          - id: welcoming
            policy: {identityProviders: [ext, open], selfRegistration: true}
        """

    static func decisionsBroker() async throws -> TestBroker {
        try await TestBroker.make(yaml: decisionsYAML, registry: TestRegistry.registry)
    }

    static func linkingCase(_ test: TestBroker, app appID: String, provider: String, purpose: FlowPurpose, known: Bool) async throws -> AccountDecisions.Case {
        let app = try #require(try await test.store.app(id: appID))
        let flow = FlowRecord(
            id: RandomToken.make(), appID: appID, providerID: provider, purpose: purpose, stateless: false, scopes: ["openid"], phase: .identify,
            pluginState: FlowState(), challenge: Challenge(type: "subject"), createdAt: test.clock.now, expiresAt: test.clock.now.addingTimeInterval(600),
            version: -1
        )
        return AccountDecisions.Case(flow: flow, identity: ExternalIdentity(providerID: provider, subject: "sam", username: "sam"), app: app, known: known)
    }

    @Test func aRegistrationOfAKnownIdentityIsRefusedAndNothingElseIs() async throws {
        let test = try await Self.decisionsBroker()
        defer { test.temporary.remove() }
        let step = AccountDecisions.RefuseKnownRegistration()
        var known = try await Self.linkingCase(test, app: "welcoming", provider: "ext", purpose: .register, known: true)
        let refusal = await brokerError { try await step.decide(&known, engine: test.engine) }
        #expect(refusal?.code == .alreadyRegistered)
        for (purpose, isKnown) in [(FlowPurpose.register, false), (.authenticate, true), (.authenticate, false)] {
            var linking = try await Self.linkingCase(test, app: "welcoming", provider: "ext", purpose: purpose, known: isKnown)
            try await step.decide(&linking, engine: test.engine)
            #expect(linking.known == isKnown)
        }
    }

    @Test func anUnknownIdentityFromAProviderAnyoneCanPassMakesNoAccountAtAClosedApp() async throws {
        let test = try await Self.decisionsBroker()
        defer { test.temporary.remove() }
        let step = AccountDecisions.RefuseUnknownWithoutSelfRegistration()
        var closed = try await Self.linkingCase(test, app: "closed", provider: "open", purpose: .authenticate, known: false)
        let refusal = await brokerError { try await step.decide(&closed, engine: test.engine) }
        #expect(refusal?.code == .registrationDisabled)
        let audited = try await test.store.auditEvents(type: "signin.failure", appID: "closed", accountID: nil, since: nil, limit: 5)
        #expect(audited.first?.details["reason"] == "unknown_identity")
        // A provider that proves who someone is, an app that welcomes them, or a known identity: on.
        for (app, provider, known) in [("closed", "ext", false), ("welcoming", "open", false), ("closed", "open", true)] {
            var linking = try await Self.linkingCase(test, app: app, provider: provider, purpose: .authenticate, known: known)
            try await step.decide(&linking, engine: test.engine)
        }
    }

    @Test func aNewIdentityJoinsTheAccountItsVerifiedAddressNamesOnlyWhereTheAppLinks() async throws {
        let test = try await Self.decisionsBroker()
        defer { test.temporary.remove() }
        let step = AccountDecisions.LinkByVerifiedEmail()
        // Neither app links by verified email, and a registration or a known identity never asks.
        for (purpose, known) in [(FlowPurpose.authenticate, false), (.register, false), (.authenticate, true)] {
            var linking = try await Self.linkingCase(test, app: "welcoming", provider: "ext", purpose: purpose, known: known)
            try await step.decide(&linking, engine: test.engine)
            #expect(linking.known == known)
        }
        #expect(try await test.store.auditEvents(type: "account.linked", appID: nil, accountID: nil, since: nil, limit: 5).isEmpty)

        // An app that links, two providers trusted with addresses: a new identity vouching for the
        // address of an existing account joins that account, audited.
        let address = IdentityClaims(email: "sam@example.com", emailVerified: true)
        let (existing, _) = try await test.store.linkIdentity(
            ExternalIdentity(providerID: "upstream-a", subject: "a-1", username: "sam", claims: address, emailTrustedForLinking: true), now: test.clock.now
        )
        var linking = try await Self.linkingCase(test, app: "linking", provider: "upstream-b", purpose: .authenticate, known: false)
        linking = AccountDecisions.Case(
            flow: linking.flow, identity: ExternalIdentity(providerID: "upstream-b", subject: "b-1", username: "sam", claims: address, emailTrustedForLinking: true),
            app: linking.app, known: false
        )
        try await step.decide(&linking, engine: test.engine)
        #expect(linking.known)
        #expect(try await test.store.identityLink(providerID: "upstream-b", subject: "b-1")?.accountID == existing.id)
        let linked = try await test.store.auditEvents(type: "account.linked", appID: "linking", accountID: existing.id, since: nil, limit: 5)
        #expect(linked.first?.details["by"] == "verified_email" && linked.first?.details["subject"] == "b-1")
    }

    @Test func theDecisionsRunInOrderThenLinkOrMakeTheAccount() async throws {
        let test = try await Self.decisionsBroker()
        defer { test.temporary.remove() }
        #expect(
            AccountDecisions.steps.map { String(describing: type(of: $0)) } == [
                "LinkToProvisionedUser", "LinkByVerifiedEmail", "RequireProvisioned", "RefuseKnownRegistration", "RefuseUnknownWithoutSelfRegistration",
            ])
        let linking = try await Self.linkingCase(test, app: "welcoming", provider: "open", purpose: .register, known: false)
        let (account, created) = try await AccountDecisions(engine: test.engine).decide(for: linking.flow, identity: linking.identity, app: linking.app)
        #expect(created && account.username == "sam")
        let again = await brokerError {
            _ = try await AccountDecisions(engine: test.engine).decide(for: linking.flow, identity: linking.identity, app: linking.app)
        }
        #expect(again?.code == .alreadyRegistered)
    }
}
