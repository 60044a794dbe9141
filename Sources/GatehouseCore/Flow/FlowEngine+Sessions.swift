import Foundation

/// Single sign-on in browser flows: an authorization request from a browser that has a session
/// signs the person in without pages when the app's policy accepts how the session signed in; asks
/// only the missing factor when it does not (a step-up); and asks the person's consent for apps
/// that need it. A browser flow that ends creates (or renews) the session.
extension FlowEngine {
    /// What a browser's session is good for at an app.
    enum SessionDecision {
        /// No usable session (none, expired, too old for `max_age`, `prompt=login`, another provider):
        /// the person signs in with pages.
        case signIn
        /// The session covers the app: a code without pages (after consent, where the app needs it).
        case signedIn(BrowserSession, Account, provider: String)
        /// The session covers the identity but the app needs a factor it has not passed.
        case stepUp(BrowserSession, Account, provider: String, factor: String)
    }

    /// Decides what the browser's session (if any) is good for at `app` for `request`.
    func sessionDecision(_ session: BrowserSession?, app: App, request: AuthorizationRequest) async throws -> SessionDecision {
        let now = clock.now
        guard let session, !request.prompt.contains("login"), !request.prompt.contains("select_account"),
            session.isUsable(under: app.policy.session, at: now)
        else { return .signIn }
        if let maxAge = request.maxAge, now.timeIntervalSince(session.authTime) > TimeInterval(maxAge) { return .signIn }
        guard let provider = session.providers.first(where: { configuredProviders(of: app).contains($0) }),
            let account = try await store.account(id: session.accountID), !account.isDisabled,
            var link = try await store.identityLinks(accountID: account.id).first(where: { $0.providerID == provider })
        else { return .signIn }
        // An app for provisioned accounts only takes none other from a session either.
        if app.policy.provisionedOnly, try await !provisioned.isProvisioned(account.id) { return .signIn }
        // An identity the provider no longer accepts (disabled in the directory, removed) signs no
        // one in through a session either, as it refreshes no token.
        if try await IdentityRecheckBook(plugins: plugins, store: store).recheck(&link) != nil { return .signIn }
        var current = session
        current.subject = link.subject
        if let factor = requiredFactor(app: app, account: account, request: request, passed: session.factors) {
            return .stepUp(current, account, provider: provider, factor: factor)
        }
        return .signedIn(current, account, provider: provider)
    }

    /// The authenticator a browser sign-in still has to pass at `app`, given the factors `passed`:
    /// the policy's second factor, or for `acr_values` asking for more than one factor, the app's
    /// first authenticator when none of them was passed. Nil when nothing is missing.
    func requiredFactor(app: App, account: Account, request: AuthorizationRequest?, passed: [String]) -> String? {
        if let factor = app.policy.secondFactor(for: account) { return passed.contains(factor) ? nil : factor }
        guard let request, AuthenticationLevel.requested(by: request.acrValues) == .multiFactor, !account.isTest,
            !passed.contains(where: app.policy.authenticators.contains)
        else { return nil }
        return app.policy.authenticators.first { plugins.authenticators[$0] != nil }
    }

    /// The authenticators among a sign-in's `amr` (those that are not the identity provider itself).
    func passedFactors(_ methods: [String], identityProvider: String) -> [String] {
        methods.filter { $0 != identityProvider && plugins.authenticators[$0] != nil }.uniqued()
    }

    /// A refusal of `prompt=none` goes back to the app (OIDC Core section 3.1.2.6).
    func promptNoneRefusal(_ code: ErrorCode, _ message: String, request: AuthorizationRequest) -> AuthorizationRefusal {
        .redirect(BrokerError(code, .badRequest, message), to: appErrorRedirect(request, code, message))
    }

    /// Where a browser goes back to the app with an OAuth error (RFC 6749 section 4.1.2.1, with the
    /// issuer of RFC 9207).
    /// A verification page's flow has no app to go back to: it ends on the verification page.
    func appErrorRedirect(_ request: AuthorizationRequest, _ code: ErrorCode, _ description: String) -> String {
        if request.device != nil {
            return tokens.issuer + OAuthService.verificationPath + "?result=" + (code == .accessDenied ? "denied" : "failed")
        }
        return OAuthRedirect.url(
            request.redirectURI, parameters: [("error", code.rawValue), ("error_description", description), ("state", request.state), ("iss", tokens.issuer)])
    }

    /// Goes on from the browser's session: at once to a code, or through consent or the missing
    /// factor in a flow that ends in the same session.
    func continueSession(
        _ decision: SessionDecision, app: App, request: AuthorizationRequest, binding: BrowserBinding, clientIP: String?, userAgent: String?,
        language: String
    ) async throws -> FlowOutcome? {
        let (session, account, provider, factor): (BrowserSession, Account, String, String?)
        switch decision {
        case .signIn: return nil
        case .signedIn(let s, let a, let p): (session, account, provider, factor) = (s, a, p, nil)
        case .stepUp(let s, let a, let p, let f): (session, account, provider, factor) = (s, a, p, f)
        }
        let needsConsent = try await ConsentPhase(engine: self, app: app).isNeeded(accountID: account.id, request: request)
        // A profile the person has not confirmed yet is asked for at this app as at a sign-in: single
        // sign-on never skips it.
        let needsProfile = account.profilePending && app.policy.confirmProfile
        if request.prompt.contains("none") {
            if factor != nil { throw promptNoneRefusal(.interactionRequired, "The app needs a further sign-in step, which needs a page.", request: request) }
            if needsProfile { throw promptNoneRefusal(.interactionRequired, "The person must confirm their profile first, which needs a page.", request: request) }
            if needsConsent { throw promptNoneRefusal(.consentRequired, "The person has not allowed this app the scopes it asks for.", request: request) }
        }
        let now = clock.now
        var authorization = BrowserAuthorization(request: request, binding: binding)
        authorization.sessionID = session.id
        authorization.continuesSession = true
        authorization.userAgent = userAgent
        var flow = FlowRecord(
            id: RandomToken.make(), appID: app.id, providerID: provider, purpose: .authenticate, stateless: false, scopes: request.scopes,
            phase: .identify, pluginState: FlowState(), challenge: Challenge(type: "none"),
            identity: ExternalIdentity(providerID: provider, subject: session.subject, username: session.username), accountID: account.id,
            methods: session.methods, clientIP: clientIP, authorization: authorization, createdAt: now,
            expiresAt: now.addingTimeInterval(app.policy.flowLifetime.timeInterval), version: -1
        )
        flow.language = language
        if let factor { return try await beginFactor(flow, factorID: factor, app: app, account: account) }
        if needsProfile { return try await ProfilePhase(engine: self, flow: flow, app: app).ask(account: account) }
        if needsConsent { return try await ConsentPhase(engine: self, app: app).ask(&flow) }
        try await audit("signin.sso", flow: flow, outcome: nil, details: ["sid": session.id])
        return try await authorizeInSession(flow, authorization: authorization, app: app, account: account, identity: flow.identity!)
    }

    /// The end of a browser flow (its flow already claimed): the session is created, renewed or
    /// stepped up, and the app gets an authorization code for it.
    func authorizeBrowser(_ flow: FlowRecord, authorization: BrowserAuthorization, app: App, account: Account, identity: ExternalIdentity) async throws -> FlowOutcome {
        let now = clock.now
        // A device code that expired or was used while the person signed in changes no session.
        if let device = authorization.request.device, try await pendingDeviceAuthorization(device, appID: app.id) == nil {
            throw BrokerError(.invalidGrant, .badRequest, "The device code expired or was used meanwhile; start again on the device.")
        }
        let factors = passedFactors(flow.methods, identityProvider: identity.providerID)
        if authorization.continuesSession == true {
            guard let sessionID = authorization.sessionID,
                try await store.updateBrowserSessionSignIn(
                    id: sessionID, providers: [identity.providerID], factors: factors, methods: flow.methods, authTime: nil, cookieDigest: nil, now: now
                )
            else {
                throw BrokerError(.loginRequired, .forbidden, "The session ended while this step was open; sign in again.")
            }
            return try await authorizeInSession(flow, authorization: authorization, app: app, account: account, identity: identity)
        }
        // A new sign-in: the browser gets a fresh cookie (no value from before the sign-in survives it).
        // The session's auth_time is when the person really authenticated (an upstream's auth_time), never later.
        let authTime = identity.authTime.map { min($0, now) } ?? now
        let cookie = RandomToken.make()
        let sessionID = try await signInSession(
            flow, authorization: authorization, app: app, account: account, identity: identity, factors: factors, authTime: authTime,
            cookieDigest: SecretDigest.sha256Hex(cookie), now: now
        )
        var inSession = authorization
        inSession.sessionID = sessionID
        let outcome = try await authorizeInSession(flow, authorization: inSession, app: app, account: account, identity: identity, authTime: authTime)
        guard case .authorized(let flowID, let redirect, _) = outcome else { return outcome }
        return .authorized(flowID: flowID, redirect: redirect, sessionCookie: cookie)
    }

    /// The browser session a new sign-in is in: the browser's live session of the same account
    /// (signed in again, with the new cookie), or a new one (another person's ends first).
    func signInSession(
        _ flow: FlowRecord, authorization: BrowserAuthorization, app: App, account: Account, identity: ExternalIdentity, factors: [String], authTime: Date,
        cookieDigest digest: String, now: Date
    ) async throws -> String {
        if let previousID = authorization.sessionID, let previous = try await store.browserSession(id: previousID), previous.isLive(at: now) {
            if previous.accountID == account.id,
                try await store.updateBrowserSessionSignIn(
                    id: previousID, providers: [identity.providerID], factors: factors, methods: flow.methods, authTime: authTime, cookieDigest: digest, now: now
                )
            {
                return previousID
            } else if previous.accountID != account.id {
                // Someone else signed in in this browser: the other person's session ends.
                try await sessions.end(previous, reason: "replaced")
            }
        }
        let session = BrowserSession(
            id: RandomToken.make(byteCount: 16), cookieDigest: digest, accountID: account.id, providers: [identity.providerID], factors: factors,
            methods: flow.methods, subject: identity.subject, username: account.username, authTime: authTime, createdAt: now, lastSeenAt: now,
            expiresAt: now.addingTimeInterval(app.policy.session.absoluteLifetime.timeInterval), clientIP: flow.clientIP,
            userAgent: authorization.userAgent.map { String($0.prefix(200)) }
        )
        try await store.insertBrowserSession(session)
        try await audit("session.started", flow: flow, outcome: nil, details: ["sid": session.id])
        return session.id
    }

    /// Issues the authorization code of a sign-in in session `authorization.sessionID`, and notes
    /// that the app got one in it (it hears of the session's end).
    func authorizeInSession(
        _ flow: FlowRecord, authorization: BrowserAuthorization, app: App, account: Account, identity: ExternalIdentity, authTime: Date? = nil
    ) async throws -> FlowOutcome {
        let now = clock.now
        guard let sessionID = authorization.sessionID, let session = try await store.browserSession(id: sessionID), session.isLive(at: now) else {
            throw BrokerError(.loginRequired, .forbidden, "The session ended; sign in again.")
        }
        if let device = authorization.request.device {
            let outcome = try await approveDeviceAuthorization(device, flow: flow, account: account, identity: identity, authTime: authTime ?? session.authTime)
            guard case .authorized(let flowID, let redirect, _) = outcome else { return outcome }
            return .authorized(flowID: flowID, redirect: redirect)
        }
        try await store.recordBrowserSessionUse(id: sessionID, appID: app.id, now: now)
        let code = RandomToken.make()
        try await store.insertAuthorizationCode(
            AuthorizationCodeRecord(
                digest: SecretDigest.sha256Hex(code), appID: app.id, redirectURI: authorization.request.redirectURI,
                codeChallenge: authorization.request.codeChallenge, nonce: authorization.request.nonce, scopes: flow.scopes, accountID: account.id,
                authTime: authTime ?? session.authTime, methods: flow.methods, identityProvider: identity.providerID,
                expiresAt: now.addingTimeInterval(Self.authorizationCodeLifetime), sessionID: sessionID
            )
        )
        let redirect = OAuthRedirect.url(authorization.request.redirectURI, parameters: [("code", code), ("state", authorization.request.state), ("iss", tokens.issuer)])
        return .authorized(flowID: flow.id, redirect: redirect)
    }
}
