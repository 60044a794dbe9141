import Foundation

/// The account decisions of a sign-in once its identity provider identified someone, as a pipeline of
/// small steps, each deciding one thing in turn: link a new identity by a verified address, refuse
/// to register an identity that is known, refuse an unknown identity where the app allows no
/// self-registration, then link (or make) the account and, for a new one, ask for its profile.
struct AccountDecisions {
    let engine: FlowEngine

    /// What the steps know and decide: the identity, the flow and app it came through, and whether
    /// the identity is linked to an account already.
    struct Case {
        let flow: FlowRecord
        let identity: ExternalIdentity
        let app: App
        var known: Bool
    }

    /// One decision: it may change the case (link the identity) or refuse the sign-in.
    protocol Step: Sendable {
        func decide(_ linking: inout Case, engine: FlowEngine) async throws
    }

    /// The steps, in order.
    static let steps: [any Step] = [
        LinkToProvisionedUser(), LinkByVerifiedEmail(), RequireProvisioned(), RefuseKnownRegistration(), RefuseUnknownWithoutSelfRegistration(),
    ]

    /// The flow's account, and whether this sign-in created it.
    func decide(for flow: FlowRecord, identity: ExternalIdentity, app: App) async throws -> (Account, created: Bool) {
        let known = try await engine.store.identityLink(providerID: identity.providerID, subject: identity.subject) != nil
        var linking = Case(flow: flow, identity: identity, app: app, known: known)
        for step in Self.steps { try await step.decide(&linking, engine: engine) }
        let by = flow.handOff.map { ["by": $0.providerID] } ?? [:]
        var (account, created) = try await IdentityLinker(store: engine.store, clock: engine.clock)
            .link(identity, audit: engine.auditEvent("account.created", flow: flow, outcome: nil, details: by))
        if created { account = try await engine.awaitingProfileConfirmation(account, app: app) }
        try account.refuseSignInIfDisabled()
        return (account, created)
    }

    /// A new identity that a SCIM link rule matches to a provisioned user joins that user's account
    /// (`scim.links`), for a sign-in or a registration alike: the organisation made the account.
    struct LinkToProvisionedUser: Step {
        func decide(_ linking: inout Case, engine: FlowEngine) async throws {
            guard !linking.known else { return }
            linking.known = try await engine.provisioned.linkIfProvisioned(linking.identity, appID: linking.app.id, now: engine.clock.now)
        }
    }

    /// An app that takes provisioned accounts only refuses any other (`not_provisioned`).
    struct RequireProvisioned: Step {
        func decide(_ linking: inout Case, engine: FlowEngine) async throws {
            do {
                try await engine.provisioned.refuseUnlessProvisioned(linking.identity, app: linking.app)
            } catch let error as BrokerError {
                try? await engine.audit("signin.failure", flow: linking.flow, outcome: error.code.rawValue, details: ["reason": "not_provisioned"])
                throw error
            }
        }
    }

    /// A sign-in (not a registration) whose identity is new joins the account whose verified address
    /// it shares, where the app links by verified email and both providers are trusted to (audited
    /// as `account.linked`).
    struct LinkByVerifiedEmail: Step {
        func decide(_ linking: inout Case, engine: FlowEngine) async throws {
            guard !linking.known, linking.flow.purpose == .authenticate, let accountID = try await engine.accountToLink(linking.identity, app: linking.app) else {
                return
            }
            linking.known = try await engine.store.addIdentityLink(linking.identity, accountID: accountID, now: engine.clock.now)
            guard linking.known else { return }
            var event = engine.auditEvent("account.linked", flow: linking.flow, outcome: nil, details: ["by": "verified_email", "subject": linking.identity.subject])
            event.accountID = accountID
            try await engine.store.appendAudit(event)
        }
    }

    /// A registration of an identity that has an account is refused (`already_registered`).
    struct RefuseKnownRegistration: Step {
        func decide(_ linking: inout Case, engine: FlowEngine) async throws {
            guard linking.flow.purpose == .register, linking.known else { return }
            throw BrokerError(.alreadyRegistered, .conflict, "This identity is already registered; sign in instead.")
        }
    }

    /// An identity nobody registered, from a provider anyone can pass (an emailed code, an upstream),
    /// makes no account at an app without self-registration: the flow ends (`registration_disabled`).
    struct RefuseUnknownWithoutSelfRegistration: Step {
        func decide(_ linking: inout Case, engine: FlowEngine) async throws {
            let flow = linking.flow
            guard !linking.known, !linking.app.policy.selfRegistration, engine.plugins.identityProviders[flow.providerID]?.traits.openEnrollment == true else { return }
            if flow.version >= 0 { _ = try? await engine.store.deleteFlow(id: flow.id, version: flow.version) }
            try? await engine.audit("signin.failure", flow: flow, outcome: ErrorCode.registrationDisabled.rawValue, details: ["reason": "unknown_identity"])
            throw BrokerError(.registrationDisabled, .forbidden, "There is no account for this identity, and this app does not allow self-registration.")
        }
    }
}
