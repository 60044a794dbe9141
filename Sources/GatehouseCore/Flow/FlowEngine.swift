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

    public init(store: any BrokerStore, plugins: PluginInstances, tokens: TokenIssuer, clock: any BrokerClock, logger: Logger) {
        self.store = store
        self.plugins = plugins
        self.tokens = tokens
        self.clock = clock
        self.logger = logger
    }

    /// Starts a flow; answers with the first challenge (or, for a provider that needs none, the tokens).
    public func start(_ request: FlowRequest, client: ClientCredentials?) async throws -> FlowOutcome {
        guard let app = try await store.app(id: request.appID) else {
            throw BrokerError(.invalidClient, .unauthenticated, "Unknown app '\(request.appID)'.")
        }
        try app.authenticate(client)
        let provider = try identityProvider(request.providerID, allowedBy: app.policy, stateless: request.stateless)
        if request.purpose == .register, !app.policy.selfRegistration {
            throw BrokerError(.registrationDisabled, .forbidden, "This app does not allow self-registration.")
        }
        let scopes = try grantedScopes(request.scopes, policy: app.policy)
        let now = clock.now
        let flowID = RandomToken.make()
        let step = try await provider.begin(request, in: FlowContext(flowID: flowID, app: app, request: request))
        let flow = FlowRecord(
            id: flowID, appID: app.id, providerID: provider.id, purpose: request.purpose, stateless: request.stateless,
            scopes: scopes, phase: .identify, pluginState: FlowState(), challenge: Challenge(type: "none"),
            clientIP: request.clientIP, createdAt: now, expiresAt: now.addingTimeInterval(app.policy.flowLifetime.timeInterval),
            version: -1
        )
        return try await advance(flow, with: step, app: app)
    }

    /// Feeds an answer to the flow's current challenge.
    public func resume(flowID: String, answer: ChallengeResponse, client: ClientCredentials?) async throws -> FlowOutcome {
        let notFound = BrokerError(.flowNotFound, .notFound, "No such flow, or it has expired or finished; start a new one.")
        guard var flow = try await store.flow(id: flowID, now: clock.now), let app = try await store.app(id: flow.appID) else {
            throw notFound
        }
        try app.authenticate(client)
        let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: flow.stateless)
        let request = FlowRequest(appID: app.id, providerID: flow.providerID, purpose: flow.purpose, stateless: flow.stateless, scopes: flow.scopes, clientIP: flow.clientIP)
        var context = FlowContext(flowID: flow.id, app: app, request: request)
        if let accountID = flow.accountID {
            guard let account = try await store.account(id: accountID) else { throw notFound }
            context.account = account
        }

        let step: FlowStep
        do {
            switch flow.phase {
            case .identify:
                step = try await provider.resume(flow.pluginState, with: answer, in: context)
            case .factor(let authenticatorID):
                step = try await authenticator(authenticatorID).resume(flow.pluginState, with: answer, in: context)
            }
        } catch let error as BrokerError where error.kind == .failedAttempt {
            try await recordFailedAttempt(&flow, app: app, error: error)
            throw error
        }
        return try await advance(flow, with: step, app: app)
    }

    // MARK: - Steps

    private func advance(_ flow: FlowRecord, with step: FlowStep, app: App) async throws -> FlowOutcome {
        var flow = flow
        switch step {
        case .challenge(let challenge, let state):
            flow.challenge = challenge
            flow.pluginState = state
            try await save(&flow)
            return .challenge(flowID: flow.id, challenge: challenge, expiresAt: flow.expiresAt)

        case .identified(var identity, let methods):
            guard flow.phase == .identify else { throw BrokerError.internalFailure("An authenticator answered with an identity.") }
            identity.providerID = flow.providerID
            flow.identity = identity
            flow.methods += methods
            if flow.stateless { return try await complete(flow, app: app, account: nil) }
            if flow.purpose == .register, try await store.identityLink(providerID: identity.providerID, subject: identity.subject) != nil {
                throw BrokerError(.alreadyRegistered, .conflict, "This identity is already registered; sign in instead.")
            }
            let (account, created) = try await store.linkIdentity(identity, now: clock.now)
            flow.accountID = account.id
            if created {
                try await audit("account.created", flow: flow, outcome: nil)
            }
            guard let factorID = app.policy.secondFactor else { return try await complete(flow, app: app, account: account) }
            let request = FlowRequest(appID: app.id, providerID: flow.providerID, purpose: flow.purpose, stateless: false, scopes: flow.scopes, clientIP: flow.clientIP)
            let next = try await authenticator(factorID).begin(request, in: FlowContext(flowID: flow.id, app: app, request: request, account: account))
            flow.phase = .factor(authenticatorID: factorID)
            flow.pluginState = FlowState()
            return try await advance(flow, with: next, app: app)

        case .verified(let factor):
            guard case .factor(let expected) = flow.phase, expected == factor.authenticatorID, let accountID = flow.accountID,
                let account = try await store.account(id: accountID)
            else { throw BrokerError.internalFailure("A factor was verified outside its phase.") }
            flow.methods.append(factor.method)
            return try await complete(flow, app: app, account: account)
        }
    }

    /// Claims the flow (so that only one of two racing answers finishes it), then issues tokens.
    private func complete(_ flow: FlowRecord, app: App, account: Account?) async throws -> FlowOutcome {
        if flow.version >= 0, try await !store.deleteFlow(id: flow.id, version: flow.version) {
            throw BrokerError(.flowConflict, .conflict, "The flow was answered concurrently; start a new one if it did not finish.")
        }
        guard let identity = flow.identity else { throw BrokerError.internalFailure("A flow completed without an identity.") }
        let subject = account?.id ?? "\(identity.providerID)|\(identity.subject)"
        let issued = try await tokens.issue(
            TokenIssuer.Grant(app: app, subject: subject, accountID: account?.id, scopes: flow.scopes, methods: flow.methods, identityProvider: identity.providerID)
        )
        try await audit("signin.success", flow: flow, outcome: nil, details: ["stateless": String(flow.stateless), "purpose": flow.purpose.rawValue])
        logger.info("flow completed", metadata: ["app": .string(app.id), "provider": .string(flow.providerID), "stateless": .stringConvertible(flow.stateless)])
        return .completed(flowID: flow.id, tokens: issued, account: account)
    }

    private func save(_ flow: inout FlowRecord) async throws {
        if flow.version < 0 {
            flow.version = 0
            try await store.insertFlow(flow)
        } else {
            guard try await store.updateFlow(flow) else {
                throw BrokerError(.flowConflict, .conflict, "The flow was answered concurrently; answer the latest challenge.")
            }
            flow.version += 1
        }
    }

    private func recordFailedAttempt(_ flow: inout FlowRecord, app: App, error: BrokerError) async throws {
        flow.failedAttempts += 1
        try await audit("signin.failure", flow: flow, outcome: error.code.rawValue, details: ["attempt": String(flow.failedAttempts)])
        if flow.failedAttempts >= app.policy.lockout.maxFailedAttemptsPerFlow {
            _ = try await store.deleteFlow(id: flow.id, version: flow.version)
            throw BrokerError(.tooManyAttempts, .tooManyRequests, "Too many wrong answers; start a new flow.")
        }
        try await save(&flow)
    }

    // MARK: - Policy

    private func identityProvider(_ id: String, allowedBy policy: Policy, stateless: Bool) throws(BrokerError) -> any IdentityProvider {
        guard let provider = plugins.identityProviders[id] else {
            throw BrokerError(.unknownProvider, .badRequest, "No identity provider '\(id)' is configured.")
        }
        guard policy.identityProviders.contains(id) else {
            throw BrokerError(.providerNotAllowed, .forbidden, "This app may not sign in with '\(id)'.")
        }
        if stateless {
            guard policy.statelessAuthentication else {
                throw BrokerError(.statelessDisabled, .forbidden, "Stateless authentication is not enabled for this app.")
            }
            guard provider is any StatelessCapable else {
                throw BrokerError(.statelessUnsupported, .badRequest, "The provider '\(id)' cannot sign in statelessly.")
            }
            guard policy.secondFactor == nil else {
                throw BrokerError(.statelessUnsupported, .badRequest, "This app requires a second factor, which needs an account; stateless sign-in is not possible.")
            }
        }
        return provider
    }

    private func authenticator(_ id: String) throws(BrokerError) -> any Authenticator {
        guard let authenticator = plugins.authenticators[id] else {
            throw BrokerError(.providerUnavailable, .unavailable, "The required second factor '\(id)' is not configured.")
        }
        return authenticator
    }

    private func grantedScopes(_ requested: [String]?, policy: Policy) throws(BrokerError) -> [String] {
        let scopes = requested ?? policy.defaultScopes
        var granted: [String] = []
        for scope in scopes where !granted.contains(scope) {
            guard policy.allowedScopes.contains(scope) else {
                throw BrokerError(.invalidScope, .badRequest, "The scope '\(scope)' is not allowed for this app.")
            }
            granted.append(scope)
        }
        return granted
    }

    private func audit(_ type: String, flow: FlowRecord, outcome: String?, details: [String: String] = [:]) async throws {
        var details = details
        if let ip = flow.clientIP { details["clientIP"] = ip }
        if let username = flow.identity?.username { details["username"] = username }
        try await store.appendAudit(
            AuditEvent(time: clock.now, type: type, appID: flow.appID, accountID: flow.accountID, providerID: flow.providerID, outcome: outcome, details: details)
        )
    }
}
