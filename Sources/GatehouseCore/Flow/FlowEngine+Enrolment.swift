import Foundation
import GatehousePluginKit

/// Setting a credential up from the account page: a browser flow of the account page's app, bound
/// to the browser like any sign-in, that runs one plugin's own enrolment for the signed-in person
/// (`PluginTraits.accountEnrolment`, `FlowContext.enrolling`) and ends back on the account page.
/// An identity provider (a passkey) runs as a signed-in registration and its identity joins the
/// account; an authenticator (an authenticator app) runs for the account and asks what it asks
/// (the current code before a new app replaces it). No code, no token and no session come out of it:
/// the page's own sign-in is what it was.
extension FlowEngine {
    /// Where an enrolment flow sends the browser when it ends (`notice` says how: `enrolled`, or
    /// `stopped` when the person left it, which may be after the plugin stored something).
    func enrolmentReturn(_ notice: String) -> String { tokens.issuer + ConsoleSite.account.path + "?notice=" + notice }

    /// The plugin instances whose credentials people set up on the account page: those that declare
    /// it and that the page's app allows (an identity provider among its providers, an authenticator
    /// among its authenticators), with the button's text.
    public func accountEnrolments() async throws -> [(providerID: String, label: String)] {
        guard let app = try await store.app(id: ConsoleConfig.accountAppID), !app.disabled else { return [] }
        var found: [(String, String)] = []
        for id in app.policy.identityProviders {
            guard let traits = plugins.identityProviders[id]?.traits, !traits.flowAPIOnly, let label = traits.accountEnrolment else { continue }
            found.append((id, label))
        }
        for id in app.policy.authenticators where !found.contains(where: { $0.0 == id }) {
            if let label = plugins.authenticators[id]?.traits.accountEnrolment { found.append((id, label)) }
        }
        return found
    }

    /// Starts an enrolment of `providerID`'s credential for `accountID`, whose account page session
    /// signed in through `signedInWith` (its `amr`) in the single sign-on session `sessionID`.
    /// Answers the plugin's first challenge, for the browser holding `binding`. The caller has checked
    /// the page session (recent, its second factor); the flow lasts at most `lifetime` and ends with
    /// that sign-on session (a password change elsewhere, a sign-out), checked at every step.
    public func startEnrolment(
        accountID: String, providerID: String, signedInWith methods: [String], sessionID: String?, lifetime: Seconds, binding: BrowserBinding,
        clientIP: String?, language: String
    ) async throws -> FlowOutcome {
        guard let app = try await store.app(id: ConsoleConfig.accountAppID), !app.disabled else {
            throw BrokerError(.notFound, .notFound, "The account page is not enabled.")
        }
        guard try await accountEnrolments().contains(where: { $0.providerID == providerID }) else {
            throw BrokerError(.invalidRequest, .badRequest, "'\(providerID)' sets up no credential on this page.")
        }
        try await attempts.checkStart(clientIP: clientIP, policy: app.policy.lockout)
        guard let account = try await store.account(id: accountID) else {
            throw BrokerError(.loginRequired, .unauthenticated, "The signed-in account no longer exists.")
        }
        try account.refuseSignInIfDisabled()
        let now = clock.now
        guard let sessionID, try await store.browserSession(id: sessionID)?.isLive(at: now) == true else {
            throw BrokerError(.reauthenticationRequired, .unauthenticated, "Sign in to this page again first.")
        }
        let request = AuthorizationRequest(
            clientID: app.id, redirectURI: enrolmentReturn("stopped"), scopes: [], state: nil, nonce: nil, codeChallenge: "")
        var flow = FlowRecord(
            id: RandomToken.make(), appID: app.id, providerID: providerID, purpose: .register, stateless: false, scopes: [],
            phase: .identify, pluginState: FlowState(), challenge: Challenge(type: "none"), clientIP: clientIP,
            authorization: BrowserAuthorization(request: request, binding: binding), createdAt: now,
            expiresAt: now.addingTimeInterval(min(app.policy.flowLifetime.timeInterval, lifetime.timeInterval)), version: -1
        )
        flow.authorization?.sessionID = sessionID
        flow.signedInAccountID = account.id
        flow.enrolling = true
        flow.language = language
        if let provider = plugins.identityProviders[providerID], app.policy.identityProviders.contains(providerID) {
            let step = try await provider.begin(in: stepContext(flowID: flow.id, app: app, request: flowRequest(for: flow)))
            return try await advance(flow, with: step, app: app)
        }
        // An authenticator's turn comes after an identity provider's: the flow keeps the one the
        // page was signed in through, which the app allows at every answer.
        guard let via = methods.first(where: { app.policy.identityProviders.contains($0) && plugins.identityProviders[$0] != nil }) else {
            throw BrokerError(.reauthenticationRequired, .unauthenticated, "Sign in to this page again first.")
        }
        flow.providerID = via
        flow.accountID = account.id
        flow.accountCreated = false
        return try await beginFactor(flow, factorID: providerID, app: app, account: account)
    }

    /// An enrolment goes on only while the single sign-on session its account page was signed in
    /// with is live: ending it (signing out, a password change elsewhere) ends the enrolment too.
    func refuseUnlessEnrolmentSessionIsLive(_ flow: FlowRecord) async throws {
        guard flow.isEnrolment else { return }
        if let sessionID = flow.authorization?.sessionID, try await store.browserSession(id: sessionID)?.isLive(at: clock.now) == true { return }
        _ = try? await store.deleteFlow(id: flow.id, version: flow.version)
        throw BrokerError(.flowNotFound, .notFound, "The sign-in to your account page has ended; sign in there again and start over.")
            .because(Self.enrolmentSessionEnded)
    }

    /// The reason of the refusal of an enrolment whose page session ended.
    static let enrolmentSessionEnded = "enrolment_session_ended"

    /// The enrolment's plugin is done: the flow ends (claimed first, so a second answer adds nothing),
    /// an identity provider's identity joins the account, and the browser goes back to the page.
    func finishEnrolment(_ flow: FlowRecord, app: App, account: Account, identity: ExternalIdentity?) async throws -> FlowOutcome {
        try await refuseUnlessEnrolmentSessionIsLive(flow)
        if flow.version >= 0, try await !store.deleteFlow(id: flow.id, version: flow.version) {
            throw BrokerError(.flowConflict, .conflict, "The flow was answered concurrently; start a new one if it did not finish.")
        }
        let enrolled: String
        if let identity {
            enrolled = identity.providerID
            _ = try await completeCredentials(flow, identity: identity, app: app, account: account)
        } else if case .factor(let authenticatorID, _) = flow.phase {
            enrolled = authenticatorID
        } else {
            throw BrokerError.internalFailure("An enrolment ended without a credential.")
        }
        var event = auditEvent("account.credential_enrolled", flow: flow, outcome: nil, details: ["enrolled": enrolled])
        event.accountID = account.id
        event.providerID = enrolled
        try await store.appendAudit(event)
        return .authorized(flowID: flow.id, redirect: enrolmentReturn("enrolled"))
    }
}
