import Foundation

/// The browser side of flows: a flow started at `/oauth2/authorize` runs like any other, but every
/// step must come from the browser that started it (`BrowserProof`), it may begin with a provider
/// choice, and it ends with an authorization code for the app instead of tokens.
extension FlowEngine {
    /// Starts the browser flow of a validated authorization request. A browser whose single sign-on
    /// session (`sessionCookie`) covers the app gets its code at once, or is asked only what is
    /// missing (a factor, consent); `prompt=none` that cannot be honoured throws
    /// `AuthorizationRefusal.redirect`. Otherwise, with one provider allowed, its first challenge comes
    /// back; with several, the person chooses first (`chooseProvider`).
    public func startAuthorization(
        app: App, request: AuthorizationRequest, binding: BrowserBinding, clientIP: String?, sessionCookie: String? = nil, userAgent: String? = nil,
        language: String? = nil
    ) async throws -> FlowOutcome {
        do {
            try await attempts.checkStart(clientIP: clientIP, policy: app.policy.lockout)
        } catch let error as BrokerError where request.prompt.contains("none") {
            // prompt=none never shows a page (OIDC Core 3.1.2.6): the app hears the refusal at its
            // redirect URI, as a server that cannot answer now.
            throw promptNoneRefusal(.temporarilyUnavailable, error.message, request: request)
        }
        let session = try await store.liveBrowserSession(cookie: sessionCookie, now: clock.now)
        let decision = try await sessionDecision(session, app: app, request: request)
        if let outcome = try await continueSession(
            decision, app: app, request: request, binding: binding, clientIP: clientIP, userAgent: userAgent, language: language ?? app.view.language)
        {
            return outcome
        }
        if request.prompt.contains("none") {
            throw promptNoneRefusal(.loginRequired, "The person must sign in; prompt=none cannot be honoured.", request: request)
        }
        var authorization = BrowserAuthorization(request: request, binding: binding)
        authorization.sessionID = session?.id
        authorization.userAgent = userAgent.map { String($0.prefix(200)) }
        let now = clock.now
        let providers = browserProviders(of: app)
        guard !providers.isEmpty else {
            throw BrokerError(.invalidRequest, .badRequest, "This app signs in through the flow API only.")
        }
        var flow = FlowRecord(
            id: RandomToken.make(), appID: app.id, providerID: providers.count == 1 ? providers[0] : "", purpose: .authenticate, stateless: false,
            scopes: request.scopes, phase: providers.count == 1 ? .identify : .chooseProvider, pluginState: FlowState(),
            challenge: Challenge(type: "choose_provider"), clientIP: clientIP, authorization: authorization,
            createdAt: now, expiresAt: now.addingTimeInterval(app.policy.flowLifetime.timeInterval), version: -1
        )
        flow.language = language ?? app.view.language
        guard providers.count == 1 else {
            var pending = flow
            try await save(&pending)
            return .chooseProvider(flowID: pending.id, providers: providers, expiresAt: pending.expiresAt)
        }
        let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: false)
        let step = try await provider.begin(in: FlowContext(flowID: flow.id, app: app.view, request: flowRequest(for: flow)))
        return try await advance(flow, with: step, app: app)
    }

    /// The person picked a provider on the chooser page of a browser flow.
    /// Answers with the flow's app too, whose name the next page shows.
    public func chooseProvider(flowID: String, providerID: String, browser: BrowserProof) async throws -> (outcome: FlowOutcome, app: App) {
        var (flow, app) = try await load(flowID, browser: browser)
        guard flow.phase == .chooseProvider else {
            throw BrokerError(.invalidRequest, .badRequest, "The provider is already chosen.")
        }
        let provider = try identityProvider(providerID, allowedBy: app.policy, stateless: false)
        guard !provider.traits.flowAPIOnly else {
            throw BrokerError(.invalidRequest, .badRequest, "'\(provider.id)' signs in through the flow API only, not in a browser.")
        }
        flow.providerID = provider.id
        flow.phase = .identify
        let request = flowRequest(for: flow)
        let step = try await provider.begin(in: FlowContext(flowID: flow.id, app: app.view, request: request))
        return (try await advance(flow, with: step, app: app), app)
    }

    /// Feeds an answer to the current challenge of a browser flow, with `browser`, the proof that it
    /// comes from the browser that started the flow. Answers with the flow's app too, whose name the
    /// next page shows.
    public func resume(flowID: String, answer: ChallengeResponse, browser: BrowserProof) async throws -> (outcome: FlowOutcome, app: App) {
        try await step(flowID: flowID, answer: answer, client: nil, browser: browser)
    }

    /// Where a browser flow stands: its current challenge or provider choice (to show the page again).
    /// Answers with the flow's app too, whose name the page shows.
    public func pending(flowID: String, browser: BrowserProof) async throws -> (outcome: FlowOutcome, app: App) {
        let (flow, app) = try await load(flowID, browser: browser)
        if flow.phase == .chooseProvider {
            return (.chooseProvider(flowID: flow.id, providers: browserProviders(of: app), expiresAt: flow.expiresAt, registering: flow.purpose == .register), app)
        }
        return (.challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt), app)
    }

    /// The person cancelled a browser flow: it ends, and the app hears `access_denied` (an enrolment
    /// goes back to the account page).
    public func cancel(flowID: String, browser: BrowserProof) async throws -> String {
        let flow: FlowRecord
        do {
            (flow, _) = try await load(flowID, browser: browser)
        } catch let error as BrokerError where error.reason == Self.enrolmentSessionEnded {
            // Leaving a setup whose page session ended: back to the page, which asks to sign in.
            return enrolmentReturn("stopped")
        }
        guard let authorization = flow.authorization, try await store.deleteFlow(id: flow.id, version: flow.version) else {
            throw BrokerError(.flowNotFound, .notFound, "No such flow, or it has expired or finished; start a new one.")
        }
        try await audit("signin.cancelled", flow: flow, outcome: ErrorCode.accessDenied.rawValue)
        if flow.isEnrolment { return enrolmentReturn("stopped") }
        // Only the signed-in person refuses a device (at its confirmation); a sign-in cancelled
        // before leaves the device waiting (anyone who saw the code could cancel one).
        if let device = authorization.request.device, flow.phase == .consent { return try await denyDeviceAuthorization(device, flow: flow) }
        return appErrorRedirect(authorization.request, .accessDenied, "The sign-in was cancelled.")
    }
}
