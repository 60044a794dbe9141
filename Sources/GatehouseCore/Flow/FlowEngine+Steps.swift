import Foundation

/// What the engine does with each kind of step a plugin answers (`FlowEngine.advance` dispatches):
/// a challenge to store, an identity to link, a factor passed, another factor or provider asked for.
extension FlowEngine {
    /// A plugin asks: the flow stores the challenge (with the browser-only links) and the plugin's state.
    func present(_ flow: FlowRecord, challenge: Challenge, state: FlowState, app: App) async throws -> FlowOutcome {
        var flow = flow
        let declaration = try challenges.declaration(of: challenge)
        if declaration.callback != nil, flow.authorization == nil {
            // A native app's sign-in goes through the system browser: it must say where the browser
            // returns to, and a public app must be able to prove it is the one that started the flow.
            guard flow.returnURI != nil else {
                throw BrokerError(.invalidRequest, .badRequest, "This provider signs in through a browser: name a returnURI, one of the app's registered redirect URIs.")
            }
            guard app.isConfidential || flow.codeChallenge != nil else {
                throw BrokerError(
                    .invalidRequest, .badRequest,
                    "This provider signs in through a browser: a public app must send a codeChallenge (PKCE S256, RFC 8252 section 8.1) and answer with its codeVerifier."
                )
            }
        }
        var challenge = challenge
        for (name, value) in flow.handOff?.annotations ?? [:] where challenge.fields[name] == nil { challenge.fields[name] = value }
        if flow.phase == .identify, flow.authorization != nil, !flow.isEnrolment {
            // Browser pages only: the links the sign-in page shows under the form.
            if offersRegistration(flow, app: app) { challenge.fields[Challenge.offersRegistrationField] = .bool(true) }
            if offersRecovery(flow, app: app) { challenge.fields[Challenge.offersRecoveryField] = .bool(true) }
            if flow.purpose == .register { challenge.fields[Challenge.registrationPageField] = .bool(true) }
            if offersSignIn(flow, app: app) { challenge.fields[Challenge.offersSignInField] = .bool(true) }
        }
        flow.challenge = challenge
        flow.pluginState = state
        try await save(&flow)
        return .challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt)
    }

    /// The identity provider identified someone: back to a provider that handed the flow over, or
    /// the account decided (`AccountDecisions`), then a second factor or the end.
    func identified(_ flow: FlowRecord, identity: ExternalIdentity, app: App, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        var identity = identity
        guard flow.phase == .identify else { throw BrokerError.internalFailure("An authenticator answered with an identity.") }
        identity.providerID = flow.providerID
        if let handOff = flow.handOff, handOff.mode == .adopts, !handOff.approved {
            identity = try await approvedByHandingProvider(&flow, handOff: handOff, identity: identity, app: app)
        } else if let suspended = flow.handOff, suspended.mode == .decides {
            return try await handBack(flow, to: suspended, identity: identity, app: app, dpopJKT: dpopJKT)
        }
        flow.identity = identity
        flow.signInKeyID = identity.signInKeyID ?? identity.newSignInKey?.keyID
        // `amr` names how (RFC 8176 values) and through which provider instance.
        flow.methods += identity.methods + [flow.providerID]
        if flow.stateless {
            if identity.newSignInKey != nil { throw BrokerError.stateless(.accountCredentials) }
            return try await complete(flow, app: app, account: nil, dpopJKT: dpopJKT)
        }
        if flow.authorization != nil, flow.signInKeyID != nil {
            // An authorization code does not carry the key, so its tokens would outlive the device.
            throw BrokerError(.invalidRequest, .badRequest, "Device keys sign in through the flow API, not the browser.")
        }
        if let accountID = flow.signedInAccountID {
            return try await addToSignedInAccount(flow, identity: identity, accountID: accountID, app: app, dpopJKT: dpopJKT)
        }
        let (account, created) = try await AccountDecisions(engine: self).decide(for: flow, identity: identity, app: app)
        flow.accountID = account.id
        // An account an administrator made is created, for the plugins, at the person's first sign-in.
        if created {
            flow.accountCreated = true
        } else {
            flow.accountCreated = try await FirstSignInMarks(store: store, clock: clock).isMarked(account.id)
        }
        guard let factorID = requiredFactor(app: app, account: account, request: flow.authorization?.request, passed: []) else {
            return try await complete(flow, app: app, account: account, dpopJKT: dpopJKT)
        }
        return try await beginFactor(flow, factorID: factorID, app: app, account: account, dpopJKT: dpopJKT)
    }

    /// The provider the flow was handed over to identified someone: the one that handed it over
    /// approves that identity, which then is the flow's (only its name may change). A refusal leaves
    /// the flow at the other provider's challenge (another key may be answered), unless it ends the flow.
    func approvedByHandingProvider(_ flow: inout FlowRecord, handOff: HandOff, identity: ExternalIdentity, app: App) async throws -> ExternalIdentity {
        let next: FlowStep
        do {
            let provider = try handingProvider(handOff, app: app)
            let request = flowRequest(for: flow)
            next = try await provider.resume(after: identity, in: stepContext(flowID: flow.id, app: app, request: request, state: handOff.state))
        } catch let refusal as BrokerError where refusal.endsFlow {
            _ = try? await store.deleteFlow(id: flow.id, version: flow.version)
            try? await audit("signin.failure", flow: flow, outcome: refusal.code.rawValue, details: ["reason": refusal.reason ?? "hand_over_refused"])
            throw refusal
        }
        guard case .identified(let approved) = next, approved.subject == identity.subject, approved.signInKeyID == identity.signInKeyID,
            approved.newSignInKey == identity.newSignInKey
        else {
            throw BrokerError.internalFailure("A provider that handed a flow over answered other than with the identity it was handed.")
        }
        // Only the name may change: a test marker, trust for linking or claims the other provider
        // did not vouch for would be stored under its id.
        var identity = identity
        identity.username = approved.username
        flow.handOff?.approved = true
        return identity
    }

    /// The provider another one handed the flow to for a moment (`continueWith`) has identified the
    /// person: back to that one, which decides who signed in. A refusal there ends the flow (its
    /// answer was counted as right already).
    func handBack(_ flow: FlowRecord, to suspended: HandOff, identity: ExternalIdentity, app: App, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        let otherID = flow.providerID
        flow.handOff = nil
        flow.methods += identity.methods + [otherID]
        flow.providerID = suspended.providerID
        flow.pluginState = suspended.state
        let next = try await endingFlowOnRefusal(flow) { () async throws -> FlowStep in
            // Continuations carry no device key yet: a key must stay with the provider that
            // registered it (its attestation rules), which a hand-back would lose.
            guard identity.signInKeyID == nil, identity.newSignInKey == nil else {
                throw BrokerError.internalFailure("A provider handed a flow to answered with a device key; continuations do not carry keys.")
            }
            let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: flow.stateless)
            guard let handing = plugins.handingOver[provider.id] else { throw BrokerError.internalFailure("'\(provider.id)' handed the flow to no other provider.") }
            let request = flowRequest(for: flow)
            let next = try await handing.resume(after: identity, in: stepContext(flowID: flow.id, app: app, request: request, state: suspended.state))
            switch next {
            case .continueWith, .handOver:
                throw BrokerError.internalFailure("A flow hands off once.")
            case .identified(let decided) where decided.providerID == otherID || decided.signInKeyID != nil || decided.newSignInKey != nil:
                // Linked under the deciding provider's id: another provider's subject (or key)
                // passed through as is would land in the wrong namespace.
                throw BrokerError.internalFailure("A provider answered with the identity it was handed, or with a device key.")
            default:
                return next
            }
        }
        return try await advance(flow, with: next, app: app, dpopJKT: dpopJKT)
    }

    /// An authenticator verified its factor: back to the one that asked for it, or the end.
    func factorPassed(_ flow: FlowRecord, factor: FactorResult, app: App, knownAccount: Account?, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        guard case .factor(let expected, let resumes) = flow.phase, expected == factor.authenticatorID, let accountID = flow.accountID else {
            throw BrokerError.internalFailure("A factor was verified outside its phase.")
        }
        guard let account = try await (knownAccount?.id == accountID ? knownAccount : store.account(id: accountID)) else {
            throw BrokerError(.flowNotFound, .notFound, "The flow's account no longer exists; start a new flow.")
        }
        try account.refuseSignInIfDisabled()
        if factor.enrolledEmail != nil, resumes != nil {
            // A factor run to prove the person for another one (a PIN reset) proves them only with
            // what the account already has: an address chosen now would let anyone through.
            _ = try? await store.deleteFlow(id: flow.id, version: flow.version)
            throw BrokerError(.noVerifiedEmail, .forbidden, "This account has no verified address to prove it with; ask an administrator.")
                .because("enrolment_during_reset")
        }
        if let address = factor.enrolledEmail {
            // Linked under a provider id no provider has, so the address proves itself for this
            // authenticator's codes but never signs anyone in on its own.
            let identity = ExternalIdentity(
                providerID: IdentityLink.enrolledAddressProvider(factor.authenticatorID), subject: address.value, username: address.value,
                claims: IdentityClaims(email: address.value, emailVerified: true)
            )
            guard try await store.addIdentityLink(identity, accountID: account.id, now: clock.now) else {
                _ = try? await store.deleteFlow(id: flow.id, version: flow.version)
                throw BrokerError(.emailInUse, .conflict, "This email address belongs to another account.")
            }
            try await audit("account.email_enrolled", flow: flow, outcome: nil, details: ["address": address.masked])
        }
        flow.methods += [factor.method, factor.authenticatorID]
        if flow.isEnrolment, resumes == nil { return try await finishEnrolment(flow, app: app, account: account, identity: nil) }
        if let suspended = resumes {
            // The factor another one asked for has passed: back to that one.
            flow.phase = .factor(authenticatorID: suspended.authenticatorID)
            guard let delegating = plugins.factorChainers[suspended.authenticatorID] else {
                throw BrokerError.internalFailure("'\(suspended.authenticatorID)' asked for no other factor.")
            }
            let context = try await factorContext(flow, app: app, account: account, state: suspended.state)
            let next = try await delegating.resume(after: factor, in: context)
            return try await advance(flow, with: next, app: app, account: account, dpopJKT: dpopJKT)
        }
        return try await complete(flow, app: app, account: account, dpopJKT: dpopJKT)
    }

    /// An authenticator asks for another to pass first (a PIN reset proven by an emailed code).
    func requireOtherFactor(_ flow: FlowRecord, otherID: String, state: FlowState, app: App, knownAccount: Account?, dpopJKT: String?) async throws -> FlowOutcome {
        guard case .factor(let current, let resumes) = flow.phase, otherID != current, let accountID = flow.accountID else {
            throw BrokerError.internalFailure("Only an authenticator may ask for another factor.")
        }
        guard resumes == nil else {
            throw BrokerError(.invalidRequest, .badRequest, "This step already stands in for another one; finish it first.")
        }
        guard app.policy.authenticators.contains(otherID), plugins.authenticators[otherID] != nil else {
            throw BrokerError(.providerNotAllowed, .forbidden, "This app does not allow '\(otherID)', which this step needs.")
        }
        guard let account = try await (knownAccount?.id == accountID ? knownAccount : store.account(id: accountID)) else {
            throw BrokerError(.flowNotFound, .notFound, "The flow's account no longer exists; start a new flow.")
        }
        try account.refuseSignInIfDisabled()
        return try await beginFactor(
            flow, factorID: otherID, resuming: SuspendedFactor(authenticatorID: current, state: state), app: app, account: account, dpopJKT: dpopJKT
        )
    }

    /// An identity provider hands the flow to another (`FlowStep.continueWith`).
    func handOff(_ flow: FlowRecord, to otherID: String, state: FlowState, app: App, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        guard flow.phase == .identify, otherID != flow.providerID else {
            throw BrokerError.internalFailure("Only an identity provider may hand the flow to another one.")
        }
        guard flow.handOff == nil else {
            throw BrokerError(.invalidRequest, .badRequest, "This step already stands in for another one; finish it first.")
        }
        flow.handOff = HandOff(providerID: flow.providerID, state: state)
        flow.providerID = otherID
        flow.pluginState = FlowState()
        let next = try await endingFlowOnRefusal(flow) { () async throws -> FlowStep in
            // The other provider must be one the app allows, as if the flow had started with it.
            let other = try identityProvider(otherID, allowedBy: app.policy, stateless: flow.stateless)
            try refuseAsTarget(other, of: flow)
            let request = flowRequest(for: flow)
            return try await other.begin(in: stepContext(flowID: flow.id, app: app, request: request))
        }
        return try await advance(flow, with: next, app: app, dpopJKT: dpopJKT)
    }

    /// An identity provider hands the flow over to another for good (`FlowStep.handOver`): that one
    /// begins for the hand-over's purpose (and account), and its identity becomes the flow's once the
    /// first one approved it.
    func handOver(_ flow: FlowRecord, _ handOver: HandOver, app: App, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        guard flow.phase == .identify, handOver.providerID != flow.providerID, plugins.handsOver(flow.providerID) else {
            throw BrokerError.internalFailure("Only an identity provider that declares it hands flows over may hand one over.")
        }
        // The handing provider's answer was counted as right (it may have claimed something for the
        // flow): a refusal from here on ends the flow, audited.
        let (next, handed) = try await endingFlowOnRefusal(flow) { () async throws -> (FlowStep, FlowRecord) in
            guard flow.handOff == nil else {
                throw BrokerError(.invalidRequest, .badRequest, "This step already stands in for another one; finish it first.")
            }
            // What the other provider establishes is linked to an account: nothing for a stateless flow.
            guard !flow.stateless else { throw BrokerError.stateless(.accountCredentials) }
            // What the provider handing over answers when the flow completes is for an app to read.
            guard flow.authorization == nil else {
                throw BrokerError(.invalidRequest, .badRequest, "This provider hands its flows over, which only the flow API can follow.")
            }
            guard handOver.purpose == .register || handOver.account == nil else {
                throw BrokerError.internalFailure("A hand-over names an account only to register a credential for it.")
            }
            // A person who signed in to register a credential keeps it for their own account.
            if let signedIn = flow.signedInAccountID, handOver.purpose != .register || (handOver.account ?? signedIn) != signedIn {
                throw BrokerError(.invalidRequest, .badRequest, "A signed-in registration registers for the signed-in account only.")
            }
            let other = try identityProvider(handOver.providerID, allowedBy: app.policy, stateless: false)
            try refuseAsTarget(other, of: flow)
            var handed = flow
            handed.methods += handOver.methods + [flow.providerID]
            handed.handOff = HandOff(providerID: flow.providerID, state: try FlowState(keeping: handOver.state), mode: .adopts, annotations: handOver.annotations)
            handed.providerID = handOver.providerID
            handed.purpose = handOver.purpose
            handed.signedInAccountID = flow.signedInAccountID ?? handOver.account
            handed.pluginState = FlowState()
            let request = flowRequest(for: handed)
            return (try await other.begin(in: stepContext(flowID: flow.id, app: app, request: request)), handed)
        }
        flow = handed
        return try await advance(flow, with: next, app: app, dpopJKT: dpopJKT)
    }

    /// The provider that handed the flow over, which the app still allows and which still declares
    /// that it hands flows over (a stored flow names it).
    func handingProvider(_ handOff: HandOff, app: App) throws -> any HandingOver {
        let provider = try identityProvider(handOff.providerID, allowedBy: app.policy, stateless: false)
        guard let handing = plugins.handingOver[provider.id] else {
            throw BrokerError.internalFailure("'\(provider.id)' holds a flow handed over but does not hand flows over.")
        }
        return handing
    }

    /// Refuses to hand a flow to a provider that hands flows over itself (a flow is handed on once),
    /// or, in a browser, to one that runs in the flow API only.
    func refuseAsTarget(_ other: any IdentityProvider, of flow: FlowRecord) throws {
        if plugins.handsOver(other.id) {
            throw BrokerError(.providerNotAllowed, .forbidden, "A flow cannot be handed to '\(other.id)', which hands flows over itself.")
        }
        if flow.authorization != nil, other.traits.flowAPIOnly {
            throw BrokerError(.providerNotAllowed, .forbidden, "'\(other.id)' signs in through the flow API only, not in a browser.")
        }
    }

    /// A provider ends the flow without tokens (`FlowStep.stop`): once the flow is claimed, the
    /// provider's `stopping` does what stopping does; the flow API answers `stopped` with the details,
    /// a browser goes back to the app with `access_denied`, as when the person cancels.
    func stop(_ flow: FlowRecord, state: FlowState, details: [String: JSONValue], app: App) async throws -> FlowOutcome {
        guard flow.phase == .identify else { throw BrokerError.internalFailure("Only an identity provider may stop its flow.") }
        if flow.version >= 0, try await !store.deleteFlow(id: flow.id, version: flow.version) {
            throw BrokerError(.flowConflict, .conflict, "The flow was answered concurrently; start a new one if it did not finish.")
        }
        let added: [String: JSONValue]
        do {
            let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: flow.stateless)
            let request = flowRequest(for: flow)
            added = try await plugins.flowStoppers[provider.id]?.stopping(in: stepContext(flowID: flow.id, app: app, request: request, state: state)) ?? [:]
        } catch {
            // The flow is gone either way; what stopping could not do is audited as the flow's end.
            let code = (error as? BrokerError)?.code ?? .serverError
            try? await audit("signin.failure", flow: flow, outcome: code.rawValue, details: ["reason": (error as? BrokerError)?.reason ?? "stopping_failed"])
            throw error
        }
        try await audit("signin.stopped", flow: flow, outcome: ErrorCode.accessDenied.rawValue)
        let details = details.merging(added) { _, new in new }
        guard let authorization = flow.authorization else { return .stopped(flowID: flow.id, status: "stopped", details: details) }
        if flow.isEnrolment { return .authorized(flowID: flow.id, redirect: enrolmentReturn("stopped")) }
        return .authorized(flowID: flow.id, redirect: appErrorRedirect(authorization.request, .accessDenied, "The sign-in was ended."))
    }

    /// An account made by a flow of an app that asks for profile confirmation waits for it.
    func awaitingProfileConfirmation(_ account: Account, app: App) async throws -> Account {
        guard app.policy.confirmProfile else { return account }
        var account = account
        account.profilePending = true
        _ = try await store.updateAccountProfile(id: account.id, profile: account.profile, pending: true)
        return account
    }

    /// Runs a step of a continuation, whose answer was counted as right already: a refusal there ends
    /// the flow, audited, so that nobody keeps answering the other provider for a sign-in that can no
    /// longer succeed.
    private func endingFlowOnRefusal<T>(_ flow: FlowRecord, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            // A flow saved further meanwhile has another version; the stored one ends either way.
            if let stored = try? await store.sealedFlow(id: flow.id, now: clock.now) { _ = try? await store.deleteFlow(id: stored.id, version: stored.version) }
            let code = (error as? BrokerError)?.code ?? .serverError
            try? await audit("signin.failure", flow: flow, outcome: code.rawValue, details: ["reason": (error as? BrokerError)?.reason ?? "continuation_refused"])
            throw error
        }
    }
}

extension Challenge {
    /// Set on a browser page's challenge when the flow creates an account: the page reads "Create
    /// your account", with the password rules first.
    public static let registrationPageField = "registrationPage"
    /// Set on a browser registration page's challenge when it offers "Already have an account? Sign in".
    public static let offersSignInField = "offersSignIn"
    /// The language the challenge's texts are shown in (`FlowRecord.language`).
    public static let languageField = "language"
}
