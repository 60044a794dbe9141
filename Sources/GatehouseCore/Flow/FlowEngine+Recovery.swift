import Foundation

/// The links under a browser sign-in page: "Create an account" (the same flow, purpose `register`,
/// where the app allows self-registration) and "Forgot password" (a provider that keeps passwords,
/// proven by a code sent to the account's verified address through the app's address verifier;
/// afterwards every session and refresh token of the account ends).
extension FlowEngine {
    /// Whether a browser flow's page may offer "Create an account".
    func offersRegistration(_ flow: FlowRecord, app: App) -> Bool {
        flow.authorization != nil && !flow.isEnrolment && flow.purpose == .authenticate && app.policy.selfRegistration
    }

    /// Whether a browser flow's page may offer "Forgot password".
    func offersRecovery(_ flow: FlowRecord, app: App) -> Bool {
        flow.authorization != nil && !flow.isEnrolment && flow.purpose == .authenticate && flow.phase == .identify
            && plugins.passwordKeepers[flow.providerID] != nil && recoveryVerifier(for: app) != nil
    }

    /// The app's authenticator that proves addresses (the emailed code), if the app allows one.
    func recoveryVerifier(for app: App) -> (any AddressVerifying)? {
        app.policy.authenticators.lazy.compactMap { self.plugins.addressVerifiers[$0] }.first
    }

    /// "Create an account": the flow turns to registration and its provider asks again.
    public func switchToRegistration(flowID: String, browser: BrowserProof) async throws -> (outcome: FlowOutcome, app: App) {
        var (flow, app) = try await load(flowID, browser: browser)
        guard offersRegistration(flow, app: app), flow.phase == .identify || flow.phase == .chooseProvider, flow.handOff == nil else {
            throw BrokerError(.registrationDisabled, .forbidden, "This app does not allow creating an account here.")
        }
        flow.purpose = .register
        if flow.phase == .chooseProvider {
            try await save(&flow)
            return (.chooseProvider(flowID: flow.id, providers: browserProviders(of: app), expiresAt: flow.expiresAt, registering: true), app)
        }
        let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: false)
        let request = flowRequest(for: flow)
        let step = try await provider.begin(in: stepContext(flowID: flow.id, app: app, request: request))
        return (try await advance(flow, with: step, app: app), app)
    }

    /// Whether a browser flow's registration page may offer "Already have an account? Sign in".
    func offersSignIn(_ flow: FlowRecord, app: App) -> Bool {
        flow.authorization != nil && !flow.isEnrolment && flow.purpose == .register && (flow.phase == .identify || flow.phase == .chooseProvider) && flow.handOff == nil
    }

    /// "Already have an account? Sign in": a browser registration goes back to signing in, at the
    /// same provider (or its choice).
    public func switchToSignIn(flowID: String, browser: BrowserProof) async throws -> (outcome: FlowOutcome, app: App) {
        var (flow, app) = try await load(flowID, browser: browser)
        guard offersSignIn(flow, app: app) else {
            throw BrokerError(.invalidRequest, .badRequest, "This page cannot go back to signing in; start again from the app.")
        }
        flow.purpose = .authenticate
        if flow.phase == .chooseProvider {
            try await save(&flow)
            return (.chooseProvider(flowID: flow.id, providers: browserProviders(of: app), expiresAt: flow.expiresAt), app)
        }
        let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: false)
        let step = try await provider.begin(in: stepContext(flowID: flow.id, app: app, request: flowRequest(for: flow)))
        return (try await advance(flow, with: step, app: app), app)
    }

    /// "Forgot password": the flow asks for the username.
    public func startRecovery(flowID: String, browser: BrowserProof) async throws -> (outcome: FlowOutcome, app: App) {
        var (flow, app) = try await load(flowID, browser: browser)
        guard offersRecovery(flow, app: app) else {
            throw BrokerError(.invalidRequest, .badRequest, "Passwords cannot be reset here; ask an administrator.")
        }
        flow.phase = .recovery(PasswordRecovery(step: .username))
        flow.challenge = Challenge(type: ChallengeDescription.recoverAccount.type)
        try await save(&flow)
        return (.challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt), app)
    }

    /// One answer of a password reset: the recovery phase's handler answers it, by its step.
    func answerRecovery(_ flow: FlowRecord, recovery: PasswordRecovery, app: App, answer: ChallengeResponse) async throws -> FlowOutcome {
        guard let passwords = plugins.passwordKeepers[flow.providerID],
            let verifier = recoveryVerifier(for: app)
        else { throw BrokerError(.invalidRequest, .badRequest, "Passwords cannot be reset here; ask an administrator.") }
        let phase = RecoveryPhase(engine: self, flow: flow, app: app, passwords: passwords, verifier: verifier)
        switch recovery.step {
        case .username: return try await phase.username(answer)
        case .code: return try await phase.code(answer, recovery: recovery)
        case .newPassword: return try await phase.newPassword(answer, recovery: recovery)
        }
    }
}

/// The handler of a flow's recovery phase ("Forgot password"): who, the code sent to their verified
/// address, the new password. Every person sees the same pages whether the username exists or not.
struct RecoveryPhase {
    let engine: FlowEngine
    let flow: FlowRecord
    let app: App
    let passwords: any PasswordKeeping
    let verifier: any AddressVerifying

    var binding: String { CodeBinding.recovery(flowID: flow.id) }

    func username(_ answer: ChallengeResponse) async throws -> FlowOutcome {
        var flow = flow
        let username = try answer.string("username")
        var next = PasswordRecovery(step: .code)
        if let subject = try await passwords.subject(forUsername: username),
            let link = try await engine.store.identityLink(providerID: flow.providerID, subject: subject),
            let address = app.policy.verifiedEmails(in: try await engine.store.identityLinks(accountID: link.accountID)).first
        {
            next.subject = subject
            next.accountID = link.accountID
            // Sent in the background: an answer that took as long as a mail delivery would tell
            // that the username exists.
            let (clientIP, logger, verifier, binding, view) = (flow.clientIP, engine.logger, verifier, binding, app.view(in: flow))
            Task {
                do { _ = try await verifier.sendCode(to: address, binding: binding, app: view, clientIP: clientIP) } catch {
                    logger.notice("password reset code not sent", metadata: ["error": .string("\(error)")])
                }
            }
        }
        try await engine.audit("password.reset_requested", flow: flow, outcome: nil)
        flow.phase = .recovery(next)
        flow.challenge = Challenge(type: ChallengeDescription.recoveryCode.type)
        try await engine.save(&flow)
        return .challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt)
    }

    func code(_ answer: ChallengeResponse, recovery: PasswordRecovery) async throws -> FlowOutcome {
        var flow = flow
        let code = try answer.string("code")
        // Claimed first, so that parallel guesses count one by one.
        flow.failedAttempts += 1
        try await engine.save(&flow)
        // The decoy (no such username) checks too, against a binding no code was ever sent to,
        // and every refusal reads the same: neither the answer nor its timing tells the two apart.
        var proven = false
        do {
            _ = try await verifier.checkCode(code, binding: binding)
            proven = recovery.subject != nil
        } catch let error as BrokerError where error.httpStatus >= 500 {
            throw error
        } catch {}
        guard proven else {
            try await engine.audit("password.reset_failed", flow: flow, outcome: ErrorCode.invalidCode.rawValue)
            if flow.failedAttempts >= app.policy.lockout.maxFailedAttemptsPerFlow {
                _ = try await engine.store.deleteFlow(id: flow.id, version: flow.version)
                throw BrokerError(.tooManyAttempts, .tooManyRequests, "Too many wrong answers; start again.")
            }
            throw BrokerError(.invalidCode, .failedAttempt, "The code is wrong or has expired.")
        }
        flow.failedAttempts = 0
        var next = recovery
        next.step = .newPassword
        flow.phase = .recovery(next)
        flow.challenge = Challenge(type: ChallengeDescription.newPassword.type)
        try await engine.save(&flow)
        return .challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt)
    }

    func newPassword(_ answer: ChallengeResponse, recovery: PasswordRecovery) async throws -> FlowOutcome {
        var flow = flow
        guard let subject = recovery.subject, let accountID = recovery.accountID else {
            throw BrokerError(.flowNotFound, .notFound, "No such flow, or it has expired or finished; start a new one.")
        }
        try await passwords.resetPassword(subject: subject, to: try answer.string("password"), policy: app.policy.passwordPolicy)
        // Whoever knew the old password is signed out everywhere.
        try await engine.sessions.endAll(accountID: accountID, reason: "password_reset")
        let revoked = try await engine.revoker.subject(accountID)
        var event = engine.auditEvent("password.reset", flow: flow, outcome: nil, details: ["refreshTokensRevoked": String(revoked)])
        event.accountID = accountID
        try await engine.store.appendAudit(event)
        // Back to the sign-in page, to sign in with the new password.
        flow.phase = .identify
        flow.failedAttempts = 0
        let request = engine.flowRequest(for: flow)
        let step = try await passwords.begin(in: engine.stepContext(flowID: flow.id, app: app, request: request))
        guard case .challenge(var challenge, let state) = step else { return try await engine.advance(flow, with: step, app: app) }
        challenge.prompt = "Your password was changed, and every session signed out. Sign in with the new password."
        return try await engine.advance(flow, with: .challenge(challenge, state: state), app: app)
    }
}

extension ChallengeDescription {
    /// "Forgot password", first step: who the person is.
    public static let recoverAccount = ChallengeDescription(
        type: "recover_account", summary: "Browser only: the username whose password was forgotten.",
        title: "Reset your password", prompt: "Enter your username. If it has an email address, we send a code to it.",
        inputs: [ChallengeInput(name: "username", label: "Username", autocomplete: "username", maxLength: 256, elementID: "username")],
        submitLabel: "Send code"
    )

    /// "Forgot password", second step: the code sent to the account's address.
    public static let recoveryCode = ChallengeDescription(
        type: "recovery_code", summary: "Browser only: the code sent to the account's verified address.",
        title: "Reset your password", prompt: "If the username has an email address, a code is on its way to it. Enter it here.",
        inputs: [ChallengeInput(name: "code", label: "Code", kind: .code, maxLength: 16)],
        submitLabel: "Continue"
    )

    /// "Forgot password", last step: the new password (the app's password policy applies).
    public static let newPassword = ChallengeDescription(
        type: "new_password", summary: "Browser only: the new password, which the app's password policy checks.",
        title: "Choose a new password",
        inputs: [ChallengeInput(name: "password", label: "New password", kind: .secret, autocomplete: "new-password", maxLength: 1024, elementID: "password")],
        submitLabel: "Change password"
    )
}
