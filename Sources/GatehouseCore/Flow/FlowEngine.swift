import Foundation
import Logging

/// Runs flows: starts one for an app and provider, persists it between steps, feeds each answer to the
/// right plugin, links the identity to an account, runs the second factor the policy requires, and
/// issues tokens. Every policy rule is checked here, on every step, so that a policy changed while a
/// flow is open takes effect at once.
public struct FlowEngine: Sendable {
    public let store: any BrokerStore
    public let plugins: PluginInstances
    public let tokens: TokenIssuer
    public let clock: any BrokerClock
    public let logger: Logger
    public let metrics: BrokerMetrics
    public let attempts: AttemptGuard
    /// Failed client authentications of the flow API, counted with the token endpoint's.
    let clientFailures: FailedAuthenticationLimit
    /// Every declared challenge type: answers are checked against it before a plugin sees them.
    public let challenges: ChallengeCatalog
    /// Every app's policy, for the lockout rule; the flow's own app is always read fresh.
    let apps: AppCache
    /// Binds the tokens a JSON flow issues to the client's DPoP key; nil: DPoP headers are ignored.
    let dpop: DPoPVerifier?
    /// Takes back tokens: of keys a reinstall retires, of a person whose password was reset.
    let revoker: Revoker
    /// Ends a browser session another person's sign-in replaces (with back-channel logout).
    let sessions: BrowserSessionService
    /// The limits of requests that name no app yet (a user code typed at `/device`).
    let defaultLockout: LockoutPolicy
    /// Seals flows at rest (`SealedFlow`).
    let sealer: SecretSealer
    /// SCIM's side of sign-in: links to provisioned users, `provisionedOnly`, groups.
    let provisioned: ProvisionedAccounts

    public init(
        store: any BrokerStore, plugins: PluginInstances, challenges: ChallengeCatalog, tokens: TokenIssuer, clock: any BrokerClock, logger: Logger,
        metrics: BrokerMetrics = BrokerMetrics(), apps: AppCache? = nil, dpop: DPoPVerifier? = nil,
        revoker: Revoker, sessions: BrowserSessionService, defaultLockout: LockoutPolicy = LockoutPolicy(), sealer: SecretSealer,
        provisioned: ProvisionedAccounts? = nil
    ) {
        self.sealer = sealer
        self.provisioned = provisioned ?? .off(store)
        self.defaultLockout = defaultLockout
        self.sessions = sessions
        self.dpop = dpop
        self.revoker = revoker
        self.store = store
        self.challenges = challenges
        self.apps = apps ?? AppCache(store: store, clock: clock)
        self.plugins = plugins
        self.tokens = tokens
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        self.attempts = AttemptGuard(store: store, audit: store, clock: clock, metrics: metrics)
        self.clientFailures = FailedAuthenticationLimit(store: store, clock: clock, metrics: metrics)
    }

    /// Checks the client credentials a flow request presents, counting failures like the token endpoint.
    func verifyClient(_ client: ClientCredentials?, for app: App, clientIP: String?) async throws {
        try await clientFailures.guarded(.client, clientIP: clientIP, clientID: app.id, policy: app.policy.lockout) {
            try ClientAuthenticator.verify(client, for: app)
        }
    }

    /// Starts a flow; answers with the first challenge (or, for a provider that needs none, the tokens).
    /// `verifiedDPoPKey`: the key of a DPoP proof the caller checked already (the one that came with
    /// a signed-in registration's bound access token), used instead of `dpop`.
    public func start(
        _ request: FlowRequest, returnURI: String? = nil, codeChallenge: String? = nil, client: ClientCredentials?, dpop presentation: DPoPPresentation? = nil,
        verifiedDPoPKey: String? = nil
    ) async throws -> FlowOutcome {
        guard let app = try await store.app(id: request.appID), !app.disabled else {
            throw BrokerError(.invalidClient, .unauthenticated, "Unknown app '\(request.appID)'.")
        }
        try await verifyClient(client, for: app, clientIP: request.clientIP)
        var request = request
        request.language = request.language ?? app.view.language
        // The consent page is a browser page: an app that needs consent gets no tokens without it.
        guard !app.policy.consentRequired else {
            throw BrokerError(.unauthorizedClient, .forbidden, "This app needs the person's consent, which is asked in the browser: sign in through /oauth2/authorize.")
        }
        try await attempts.checkStart(clientIP: request.clientIP, policy: app.policy.lockout)
        let provider = try identityProvider(request.providerID, allowedBy: app.policy, stateless: request.stateless)
        // Adding a credential to one's own account is not self-registration.
        if request.purpose == .register, !app.policy.selfRegistration, request.signedInAccountID == nil {
            throw BrokerError(.registrationDisabled, .forbidden, "This app does not allow self-registration.")
        }
        let scopes = try app.policy.grantScopes(request.scopes)
        if request.stateless, scopes.contains("offline_access") { throw BrokerError.stateless(.refresh) }
        let returnURI = try Self.returnURI(returnURI, of: app)
        if let challenge = codeChallenge, !PKCE.isValidChallenge(challenge) {
            throw BrokerError(.invalidRequest, .badRequest, "codeChallenge must be an S256 challenge: the unpadded base64url SHA-256 of the verifier (43 characters).")
        }
        if request.signedInAccountID != nil, request.purpose != .register || request.stateless {
            throw BrokerError(
                .invalidRequest, .badRequest, "An access token goes with a flow only to register a credential for its account (purpose register, not stateless).")
        }
        let dpopJKT: String?
        if let verifiedDPoPKey {
            dpopJKT = app.policy.dpop == .off ? nil : verifiedDPoPKey
        } else {
            dpopJKT = try await dpopBinding(presentation, app: app)
        }
        let now = clock.now
        let flowID = RandomToken.make()
        if let installationID = request.installationID { try RegistrationState.checkInstallationID(installationID) }
        let step = try await provider.begin(in: stepContext(flowID: flowID, app: app, request: request))
        var flow = FlowRecord(
            id: flowID, appID: app.id, providerID: provider.id, purpose: request.purpose, stateless: request.stateless,
            scopes: scopes, phase: .identify, pluginState: FlowState(), challenge: Challenge(type: "none"),
            clientIP: request.clientIP, createdAt: now, expiresAt: now.addingTimeInterval(app.policy.flowLifetime.timeInterval),
            version: -1
        )
        flow.returnURI = returnURI
        flow.codeChallenge = codeChallenge
        flow.signedInAccountID = request.signedInAccountID
        flow.installationID = request.installationID
        flow.language = request.language
        return try await advance(flow, with: step, app: app, dpopJKT: dpopJKT)
    }

    /// Feeds an answer to the current challenge of a JSON flow. A DPoP proof binds the tokens this
    /// answer may yield to the proof's key (RFC 9449).
    public func resume(flowID: String, answer: ChallengeResponse, client: ClientCredentials?, dpop presentation: DPoPPresentation? = nil) async throws -> FlowOutcome {
        try await step(flowID: flowID, answer: answer, client: client, browser: nil, dpop: presentation).outcome
    }

    /// The DPoP key a JSON flow request binds its tokens to, as the app's policy says: `off` ignores
    /// proofs, `allowed` checks one when it is there, `required` refuses a request without.
    func dpopBinding(_ presentation: DPoPPresentation?, app: App) async throws -> String? {
        guard let dpop else { return nil }
        return try await dpop.binding(presentation, app: app)
    }

    /// Browser flows must bring `browser`; JSON flows must not. The answer is checked against the
    /// challenge's declaration, then goes to the phase it belongs to: a choice phase's own handler, or
    /// the plugin whose turn it is (`answerPlugin`).
    func step(
        flowID: String, answer: ChallengeResponse, client: ClientCredentials?, browser: BrowserProof?, dpop presentation: DPoPPresentation? = nil
    ) async throws -> (outcome: FlowOutcome, app: App) {
        let (flow, app) = try await load(flowID, browser: browser)
        // A browser flow's client authenticates at the token endpoint, when it exchanges the code.
        if flow.authorization == nil { try await verifyClient(client, for: app, clientIP: flow.clientIP) }
        let dpopJKT = flow.authorization == nil ? try await dpopBinding(presentation, app: app) : nil
        guard flow.phase != .chooseProvider else {
            throw BrokerError(.invalidRequest, .badRequest, "Choose a provider first.")
        }
        let (answer, declaration) = try checkedAnswer(answer, to: flow, fromBrowser: browser != nil)
        if flow.challenge.type == Challenge.callbackReceivedType { return (try await continueAfterCallback(flow, app: app, answer: answer, dpopJKT: dpopJKT), app) }
        // Choices and a profile are not guesses: they do not count as attempts (the emailed code a
        // changed address needs is counted by the plugin that sent it).
        switch flow.phase {
        case .confirmProfile(let pending): return (try await ProfilePhase(engine: self, flow: flow, app: app).answer(answer, pending: pending, dpopJKT: dpopJKT), app)
        case .consent: return (try await ConsentPhase(engine: self, app: app).answer(answer, in: flow), app)
        case .recovery(let recovery): return (try await answerRecovery(flow, recovery: recovery, app: app, answer: answer), app)
        case .chooseProvider, .identify, .factor:
            return (try await answerPlugin(flow, app: app, answer: answer, counted: !declaration.choice, dpopJKT: dpopJKT), app)
        }
    }

    /// Unknown, mistyped or oversized fields never reach the plugin, and do not count as attempts; a
    /// form's fields are read as the declaration says.
    func checkedAnswer(_ answer: ChallengeResponse, to flow: FlowRecord, fromBrowser: Bool) throws -> (ChallengeResponse, ChallengeDescription) {
        let declaration = try challenges.declaration(of: flow.challenge)
        let answer = fromBrowser ? declaration.readingForm(answer) : answer
        try declaration.validate(answer)
        if declaration.callback != nil {
            throw BrokerError(
                .invalidRequest, .badRequest,
                "This step is answered by the sign-in page the challenge's URL opens: it sends the browser back to the broker, which then sends it to your return URI."
            )
        }
        return (answer, declaration)
    }

    /// An answer to the plugin whose turn it is: counted against the address and account lockouts
    /// (unless it is a choice), the flow claimed before it is evaluated (of parallel answers only one
    /// is), then counted right or wrong by what the plugin answered.
    func answerPlugin(_ flow: FlowRecord, app: App, answer: ChallengeResponse, counted: Bool, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        // The app must still allow the flow's provider, in every phase (its policy may have changed).
        let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: flow.stateless)
        let context = try await turnContext(flow, app: app)
        // The lockout settings of an account are the strictest of all apps that may reach it.
        let lockout = try await strictestLockout(for: flow, app: app)
        let accountKey = AttemptGuard.accountKey(flow: flow, answer: answer)
        if counted { try await attempts.reserve(clientIP: flow.clientIP, accountKey: accountKey, policy: lockout, appID: app.id, providerID: flow.providerID) }
        // It counts against the flow's limit until it proves right.
        flow.failedAttempts += 1
        do {
            try await save(&flow)
        } catch {
            if counted { try? await attempts.release(clientIP: flow.clientIP, accountKey: accountKey) }
            throw error
        }
        let step: FlowStep
        do {
            step = try await pluginStep(flow, provider: provider, app: app, answer: answer, context: context)
        } catch {
            throw try await refused(&flow, app: app, error: error, counted: counted, accountKey: accountKey, lockout: lockout)
        }
        flow.failedAttempts -= 1
        switch step {
        case _ where !counted: break
        case .identified, .verified, .continueWith, .handOver: try await attempts.recordSuccess(clientIP: flow.clientIP, accountKey: accountKey)
        case .challenge, .requireFactor, .stop: try await attempts.release(clientIP: flow.clientIP, accountKey: accountKey)
        }
        return try await advance(flow, with: step, app: app, account: context.account, dpopJKT: dpopJKT)
    }

    /// The context of the plugin whose turn it is: the flow's account and sign-in key, when it has them.
    func turnContext(_ flow: FlowRecord, app: App) async throws -> FlowContext {
        var context = stepContext(flowID: flow.id, app: app, request: flowRequest(for: flow), state: flow.pluginState)
        if let accountID = flow.accountID {
            guard let account = try await store.account(id: accountID) else {
                throw BrokerError(.flowNotFound, .notFound, "The flow's account no longer exists; start a new flow.")
            }
            // Disabled while the person was at a later step.
            try account.refuseSignInIfDisabled()
            context.account = account
        }
        if let keyID = flow.signInKeyID { context.signInKey = try await store.signInKey(id: keyID) }
        context.accountCreated = flow.accountCreated ?? false
        return context
    }

    /// What the plugin whose turn it is answers: the identity provider, or the phase's authenticator
    /// (begun again when it could not start last time).
    func pluginStep(
        _ flow: FlowRecord, provider: any IdentityProvider, app: App, answer: ChallengeResponse, context: FlowContext
    ) async throws -> FlowStep {
        switch flow.phase {
        case .identify:
            return try await provider.resume(with: answer, in: context)
        case .factor(let authenticatorID, _) where flow.challenge.type == Challenge.retryType:
            // The factor could not start last time (a code was not delivered): start it again.
            return try await authenticator(authenticatorID).begin(in: try await factorContext(flow, app: app, account: context.account))
        case .factor(let authenticatorID, _):
            return try await authenticator(authenticatorID).resume(with: answer, in: context)
        case .chooseProvider, .confirmProfile, .consent, .recovery:
            throw BrokerError(.invalidRequest, .badRequest, "Choose a provider first.")
        }
    }

    /// What a refused answer does: a wrong one counts (against the address and account too, unless it
    /// was a choice), is audited and may lock; anything else (a malformed answer, a provider that is
    /// down) is given back. Answers the error to throw.
    func refused(_ flow: inout FlowRecord, app: App, error: any Error, counted: Bool, accountKey: String?, lockout: LockoutPolicy) async throws -> any Error {
        if let error = error as? BrokerError, error.isWrongAnswer {
            metrics.signIn(provider: flow.providerID, outcome: error.code.rawValue)
            // A wrong answer to a choice (which should check no secret) still counts against the
            // flow and is audited; only the address and account lockouts are not asked.
            let locked =
                counted
                ? try await attempts.recordFailure(clientIP: flow.clientIP, accountKey: accountKey, policy: lockout, appID: app.id, providerID: flow.providerID)
                : nil
            try await recordFailedAttempt(flow, app: app, error: error)
            if error.endsFlow { _ = try await store.deleteFlow(id: flow.id, version: flow.version) }
            if let reason = error.reason {
                logger.notice("answer refused", metadata: ["app": .string(app.id), "provider": .string(flow.providerID), "reason": .string(reason)])
            }
            return locked ?? error
        }
        flow.failedAttempts -= 1
        if let refusal = error as? BrokerError, refusal.endsFlow {
            _ = try? await store.deleteFlow(id: flow.id, version: flow.version)
            try? await audit("signin.failure", flow: flow, outcome: refusal.code.rawValue, details: refusal.reason.map { ["reason": $0] } ?? [:])
        } else {
            try? await save(&flow)
        }
        if counted { try? await attempts.release(clientIP: flow.clientIP, accountKey: accountKey) }
        return error
    }

    func strictestLockout(for flow: FlowRecord, app: App) async throws -> LockoutPolicy {
        let pluginID: String
        switch flow.phase {
        case .identify: pluginID = flow.providerID
        case .factor(let authenticatorID, _): pluginID = authenticatorID
        case .chooseProvider, .confirmProfile, .consent, .recovery: return app.policy.lockout
        }
        // The other apps' policies may be a second old; the flow's own app is the one just read.
        // The admin console's app (default lockout, every provider) does not tighten the apps'
        // own rules; its own sign-ins get the strictest of its rules and theirs.
        let others = try await apps.all().filter { $0.id != app.id && !ConsoleConfig.isBuiltIn($0.id) }.map(\.policy)
            .filter { $0.identityProviders.contains(pluginID) || $0.authenticators.contains(pluginID) }
        return others.map(\.lockout).reduce(app.policy.lockout) { $0.strictest($1) }
    }

    /// The language a flow's texts are in, for telling of a refusal in it; nil for a flow that is
    /// gone (or that chose none). Read only when an answer was refused.
    public func language(ofFlow flowID: String) async -> String? {
        guard let flow = try? await store.flow(id: flowID, now: clock.now, sealer: sealer) else { return nil }
        return flow.language
    }

    func load(_ flowID: String, browser: BrowserProof?) async throws -> (FlowRecord, App) {
        let notFound = BrokerError(.flowNotFound, .notFound, "No such flow, or it has expired or finished; start a new one.")
        guard let flow = try await store.flow(id: flowID, now: clock.now, sealer: sealer), let app = try await store.app(id: flow.appID), !app.disabled else {
            throw notFound
        }
        // A browser flow answers only to its own browser; a JSON flow never to a browser form.
        switch (flow.authorization, browser) {
        case (let authorization?, let proof?) where authorization.binding.accepts(proof): break
        case (nil, nil): break
        default: throw notFound
        }
        try await refuseUnlessEnrolmentSessionIsLive(flow)
        return (flow, app)
    }

    func flowRequest(for flow: FlowRecord) -> FlowRequest {
        var request = FlowRequest(
            appID: flow.appID, providerID: flow.providerID, purpose: flow.purpose, stateless: flow.stateless, scopes: flow.scopes,
            clientIP: flow.clientIP, loginHint: flow.authorization?.request.loginHint, signedInAccountID: flow.signedInAccountID,
            installationID: flow.installationID
        )
        // What the app asked of the authentication, as plugins need it (not OIDC's parameters).
        let prompt = flow.authorization?.request.prompt ?? []
        let maxAge = flow.authorization?.request.maxAge
        request.signInAgain = prompt.contains("login")
        request.freshSignInWithin = maxAge.map(Seconds.init)
        request.selectAccount = prompt.contains("select_account")
        request.language = flow.language
        // Only the plugin being set up enrols: a factor it asks for to prove the person checks as usual.
        // (nor a provider it hands the flow to).
        var chained = flow.handOff != nil
        if case .factor(_, .some) = flow.phase { chained = true }
        request.enrolling = flow.isEnrolment && !chained
        return request
    }

    // MARK: - Steps

    /// Dispatches what a plugin's step answered to its handler. `account` is the flow's account when
    /// the caller has it at hand already; `dpopJKT` the DPoP key the request that yields tokens binds
    /// them to.
    func advance(_ flow: FlowRecord, with step: FlowStep, app: App, account knownAccount: Account? = nil, dpopJKT: String? = nil) async throws -> FlowOutcome {
        switch step {
        case .challenge(let challenge, let state):
            return try await present(flow, challenge: challenge, state: try FlowState(keeping: state), app: app)
        case .identified(let identity):
            return try await identified(flow, identity: identity, app: app, dpopJKT: dpopJKT)
        case .verified(let factor):
            return try await factorPassed(flow, factor: factor, app: app, knownAccount: knownAccount, dpopJKT: dpopJKT)
        case .requireFactor(let otherID, let state):
            return try await requireOtherFactor(flow, otherID: otherID, state: try FlowState(keeping: state), app: app, knownAccount: knownAccount, dpopJKT: dpopJKT)
        case .continueWith(let otherID, let state):
            return try await handOff(flow, to: otherID, state: try FlowState(keeping: state), app: app, dpopJKT: dpopJKT)
        case .handOver(let handOver):
            return try await self.handOver(flow, handOver, app: app, dpopJKT: dpopJKT)
        case .stop(let state, let details):
            return try await stop(flow, state: try FlowState(keeping: state), details: details, app: app)
        }
    }

    /// Begins the second factor. When it cannot start (a code could not be sent, the address is
    /// locked), the flow is kept at this point with a `retry` challenge: answering it (`{}`) tries
    /// again, without asking for the first factor again. A refusal that ends the flow ends it.
    /// `resuming`: the authenticator that asked for this one, which goes on once it passed.
    func beginFactor(_ flow: FlowRecord, factorID: String, resuming: SuspendedFactor? = nil, app: App, account: Account, dpopJKT: String? = nil) async throws
        -> FlowOutcome
    {
        var flow = flow
        flow.phase = .factor(authenticatorID: factorID, resumes: resuming)
        flow.pluginState = FlowState()
        let next: FlowStep
        do {
            next = try await authenticator(factorID).begin(in: try await factorContext(flow, app: app, account: account))
        } catch let error as BrokerError where !error.endsFlow && Self.retryableFactorErrors.contains(error.code) {
            flow.challenge = Challenge(type: Challenge.retryType, fields: ["error": .string(error.code.rawValue)])
            try await save(&flow)
            throw error
        } catch {
            // Anything else will not go away by trying again: the flow ends.
            if flow.version >= 0 { _ = try? await store.deleteFlow(id: flow.id, version: flow.version) }
            let code = (error as? BrokerError)?.code ?? .serverError
            try? await audit("signin.failure", flow: flow, outcome: code.rawValue, details: (error as? BrokerError)?.reason.map { ["reason": $0] } ?? [:])
            throw error
        }
        return try await advance(flow, with: next, app: app, account: account, dpopJKT: dpopJKT)
    }

    /// A step's situation, with the device-attestation checker the app allows.
    func stepContext(flowID: String, app: App, request: FlowRequest, account: Account? = nil, state: FlowState = FlowState()) -> FlowContext {
        var context = FlowContext(flowID: flowID, app: app.view, request: request, account: account, state: state)
        context.deviceAttestation = plugins.deviceAttester(for: app)
        return context
    }

    /// Refusals of a second factor that may pass if tried again later; the flow waits for that.
    static let retryableFactorErrors: Set<ErrorCode> = [.deliveryFailed, .rateLimited, .lockedOut]

    /// What an authenticator begins with: the account, the addresses the app trusts it to have (for
    /// authenticators that send codes), and whether this flow created it.
    func factorContext(_ flow: FlowRecord, app: App, account: Account?, state: FlowState = FlowState()) async throws -> FlowContext {
        var context = stepContext(flowID: flow.id, app: app, request: flowRequest(for: flow), account: account, state: state)
        if let account { context.verifiedEmails = app.policy.verifiedEmails(in: try await store.identityLinks(accountID: account.id)) }
        context.accountCreated = flow.accountCreated ?? false
        if let keyID = flow.signInKeyID { context.signInKey = try await store.signInKey(id: keyID) }
        return context
    }

    /// Claims the flow (so that only one of two racing answers finishes it), then issues tokens, or
    /// for a browser flow an authorization code.
    func complete(_ flow: FlowRecord, app: App, account: Account?, dpopJKT: String? = nil) async throws -> FlowOutcome {
        try await provisioned.refuseCompletionUnlessProvisioned(flow, account: account, app: app)
        if account == nil, let identity = flow.identity, try await store.linkedAccount(providerID: identity.providerID, subject: identity.subject)?.isDisabled == true {
            // A stateless sign-in makes no account, but the person's disabled one still says no.
            throw BrokerError(.accessDenied, .forbidden, "This account is disabled. Ask an administrator.").publicly(because: "account_disabled").endingFlow()
        }
        if let account, account.profilePending, app.policy.confirmProfile, !flow.stateless {
            return try await ProfilePhase(engine: self, flow: flow, app: app).ask(account: account)
        }
        if let account, flow.authorization != nil, flow.phase != .consent,
            let request = flow.authorization?.request, try await ConsentPhase(engine: self, app: app).isNeeded(accountID: account.id, request: request)
        {
            var waiting = flow
            return try await ConsentPhase(engine: self, app: app).ask(&waiting)
        }
        if flow.version >= 0, try await !store.deleteFlow(id: flow.id, version: flow.version) {
            throw BrokerError(.flowConflict, .conflict, "The flow was answered concurrently; start a new one if it did not finish.")
        }
        guard let identity = flow.identity else { throw BrokerError.internalFailure("A flow completed without an identity.") }
        // A provider call can take seconds (a custom API): an app disabled meanwhile gets nothing.
        guard let current = try await store.app(id: app.id), !current.disabled else {
            throw BrokerError(.invalidClient, .unauthenticated, "The app '\(app.id)' is disabled.")
        }
        let notice = try await completeCredentials(flow, identity: identity, app: app, account: account)
        // The first sign-in of an account an administrator made is done: later ones are not first.
        if let account, flow.accountCreated == true, !flow.stateless { try await FirstSignInMarks(store: store, clock: clock).clear(account.id) }
        let now = clock.now
        metrics.signIn(provider: flow.providerID, outcome: "success")
        let success = ["stateless": String(flow.stateless), "purpose": flow.purpose.rawValue]
        logger.info("flow completed", metadata: ["app": .string(app.id), "provider": .string(flow.providerID), "stateless": .stringConvertible(flow.stateless)])

        if let authorization = flow.authorization, let account {
            try await audit("signin.success", flow: flow, outcome: nil, details: success)
            return try await authorizeBrowser(flow, authorization: authorization, app: app, account: account, identity: identity)
        }

        let subject = account?.id ?? "\(identity.providerID)|\(identity.subject)"
        let grant = TokenIssuer.Grant(
            app: app, subject: subject, accountID: account?.id, scopes: flow.scopes, methods: flow.methods, identityProvider: identity.providerID,
            authTime: identity.authTime.map { min($0, now) } ?? now,
            profile: try await provisioned.adding(
                groupsOf: account?.id,
                to: ProfileClaims.make(username: account?.username ?? identity.username, claims: identity.claims.overlaid(with: account?.profile), scopes: flow.scopes),
                scopes: flow.scopes, app: app.id),
            stateless: flow.stateless, signInKeyID: flow.signInKeyID, dpopJKT: dpopJKT, installation: installationDigest(of: flow, app: app),
            acr: AuthenticationLevel(methods: flow.methods, identityProvider: identity.providerID, plugins: plugins).rawValue
        )
        // The audit event goes beside the refresh token: one commit instead of two in a row.
        var tokens = try await SideBySide.run(
            { try await self.tokens.issue(grant) }, beside: { try await self.audit("signin.success", flow: flow, outcome: nil, details: success) })
        if dpopJKT != nil, let dpop { tokens.dpopNonce = try await dpop.nonceToHandOut(for: app) }
        return .completed(flowID: flow.id, tokens: tokens, account: account, notice: notice)
    }

    /// The plugins' part of a completion, around the flow's new credentials: a provider that handed
    /// the flow over checks before they are stored (`completing`), the provider that identified the
    /// person makes what it kept permanent, and the one that handed over finishes (`completed`,
    /// answering what the app is told).
    func completeCredentials(_ flow: FlowRecord, identity: ExternalIdentity, app: App, account: Account?) async throws -> [String: JSONValue] {
        let handedOver = try flow.handOff.flatMap { $0.mode == .adopts ? $0 : nil }.map { ($0, try handingProvider($0, app: app)) }
        let completion = account.map {
            FlowCompletion(
                flowID: flow.id, app: app.view, account: $0, identity: identity, signInKeyID: flow.signInKeyID, newSignInKey: identity.newSignInKey,
                changes: CompletionWriter(engine: self, flow: flow, accountID: $0.id, providerID: handedOver?.0.providerID ?? flow.providerID),
                savedState: handedOver?.0.state.data ?? Data()
            )
        }
        if let (_, provider) = handedOver, let completion { try await provider.completing(completion) }
        if let account { try await storeNewCredentials(of: flow, identity: identity, app: app, account: account) }
        if let completion, let identifier = plugins.identityCompleters[identity.providerID] {
            // The provider that identified the person sees none of the state the other one handed over.
            var own = completion
            own.savedState = Data()
            try await identifier.identifiedFlowCompleted(own)
        }
        if let (_, provider) = handedOver, let completion { return try await provider.completed(completion) }
        return [:]
    }

    /// Authorization codes are exchanged at once by the app's back end; a minute is plenty (RFC 6749
    /// section 4.1.2 recommends at most ten).
    public static let authorizationCodeLifetime: TimeInterval = 60

    func save(_ flow: inout FlowRecord) async throws {
        // Every challenge says its language, for the pages and the flow API to show its texts in.
        if let language = flow.language { flow.challenge.fields[Challenge.languageField] = .string(language) }
        if flow.version < 0 {
            flow.version = 0
            try await store.insertFlow(flow, sealer: sealer)
        } else {
            guard try await store.updateFlow(flow, sealer: sealer) else {
                throw BrokerError(.flowConflict, .conflict, "The flow was answered concurrently; answer the latest challenge.")
            }
            flow.version += 1
        }
    }

    /// After a wrong answer (already counted when the flow was claimed): audits it, and closes the
    /// flow when it reached its limit.
    func recordFailedAttempt(_ flow: FlowRecord, app: App, error: BrokerError) async throws {
        var details = ["attempt": String(flow.failedAttempts)]
        if let reason = error.reason { details["reason"] = reason }
        try await audit("signin.failure", flow: flow, outcome: error.code.rawValue, details: details)
        if flow.failedAttempts >= app.policy.lockout.maxFailedAttemptsPerFlow {
            _ = try await store.deleteFlow(id: flow.id, version: flow.version)
            throw BrokerError(.tooManyAttempts, .tooManyRequests, "Too many wrong answers; start a new flow.")
        }
    }

    func audit(_ type: String, flow: FlowRecord, outcome: String?, details: [String: String] = [:]) async throws {
        try await store.appendAudit(auditEvent(type, flow: flow, outcome: outcome, details: details))
    }

    /// An audit event about a flow: its app, account, provider, client address and (unless the sign-in
    /// is stateless, which leaves no trace of who it was) username.
    func auditEvent(_ type: String, flow: FlowRecord, outcome: String?, details: [String: String] = [:]) -> AuditEvent {
        var details = details
        if let ip = flow.clientIP { details["clientIP"] = ip }
        if let username = flow.identity?.username, !flow.stateless { details["username"] = username }
        return AuditEvent(time: clock.now, type: type, appID: flow.appID, accountID: flow.accountID, providerID: flow.providerID, outcome: outcome, details: details)
    }
}
