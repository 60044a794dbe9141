import Foundation

/// What the broker's callback (`/oauth2/callback`) does next for the browser that arrived there.
public enum CallbackOutcome: Sendable {
    /// A browser flow goes on in this browser: show the next page (or send it to the app).
    case browser(FlowOutcome, app: App, csrf: String)
    /// A browser flow's answer came as a cross-site form post, which carries no `SameSite=Lax`
    /// cookie: the browser comes back with a plain GET of the callback with only `state` (this id),
    /// which carries it, to prove that it is the browser that started the flow.
    case confirmInBrowser(flowID: String)
    /// Send the browser here: a native app's return URI (with the flow id, or an error), or a browser
    /// flow's app with an OAuth error (RFC 6749 section 4.1.2.1).
    case redirect(String)
}

/// Sign-ins that happen elsewhere: a plugin's challenge with a `callback` sends the browser to an
/// upstream page, and the upstream sends it back to the broker's callback with the flow's id as
/// `state`. The callback hands the answer to the plugin; the identity it proves is parked in the flow
/// until the one who started the flow goes on: the browser that holds the flow's binding cookie, or
/// the native app that proves it started the flow (its client secret, or its PKCE verifier).
extension FlowEngine {
    /// Handles one arrival at the callback. `cookie` is the browser's binding cookie, if it sent one;
    /// `crossSitePost` tells that the answer came as a form post (`response_mode=form_post`).
    public func callback(state flowID: String, answer: ChallengeResponse, cookie: String?, crossSitePost: Bool) async throws -> CallbackOutcome {
        let notFound = BrokerError(.flowNotFound, .notFound, "This sign-in is unknown, expired or already finished; start again from the app.")
        guard let stored = try await store.flow(id: flowID, now: clock.now), let app = try await store.app(id: stored.appID), !app.disabled else {
            throw notFound
        }
        var flow = stored
        // A browser flow listens only to its own browser. A cross-site form post carries no cookie:
        // it may deliver the answer, but the browser must then come back with its cookie to go on.
        if let authorization = flow.authorization {
            if let cookie {
                guard SecretDigest.matches(cookie, digest: authorization.binding.cookieDigest) else { throw notFound }
            } else if !crossSitePost {
                throw notFound
            }
        }
        if flow.challenge.type == Challenge.callbackReceivedType, answer.values.isEmpty, let authorization = flow.authorization, cookie != nil {
            // The browser came back after a form post: go on in it.
            return .browser(try await continueAfterCallback(flow, app: app, answer: answer), app: app, csrf: authorization.binding.csrfToken)
        }
        // One callback per challenge: a second one (a replay, a reload) finds the step done.
        guard let declaration = challenges.description(of: flow.challenge.type), declaration.callback != nil, flow.phase == .identify else {
            throw BrokerError(.flowNotFound, .notFound, "This sign-in step is already done; start again from the app.")
        }
        let declared = Set(declaration.inputs.map(\.name))
        let kept = ChallengeResponse(answer.values.filter { declared.contains($0.key) })
        let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: flow.stateless)
        let request = flowRequest(for: flow)
        let identity: ExternalIdentity
        do {
            try declaration.validate(kept)
            guard case .identified(let proven) = try await provider.resume(flow.pluginState, with: kept, in: FlowContext(flowID: flow.id, app: app, request: request)) else {
                throw BrokerError.internalFailure("A provider answered its callback with something other than an identity.")
            }
            identity = proven
        } catch let error as BrokerError {
            // The flow ends whatever went wrong: an upstream answer is never tried twice.
            _ = try? await store.deleteFlow(id: flow.id, version: flow.version)
            try? await audit("signin.failure", flow: flow, outcome: error.code.rawValue, details: error.reason.map { ["reason": $0] } ?? [:])
            metrics.signIn(provider: flow.providerID, outcome: error.code.rawValue)
            if let reason = error.reason {
                logger.notice("callback refused", metadata: ["app": .string(app.id), "provider": .string(flow.providerID), "reason": .string(reason)])
            }
            if let redirect = errorRedirect(for: flow, error: error) { return .redirect(redirect) }
            throw error
        }
        flow.identity = identity
        flow.challenge = Challenge(type: Challenge.callbackReceivedType)
        flow.pluginState = FlowState()
        try await save(&flow)
        guard let authorization = flow.authorization else {
            // A native app: the system browser goes back to it, and it goes on with the flow.
            return .redirect(OAuthRedirect.url(flow.returnURI ?? "", parameters: [("flow", flow.id)]))
        }
        guard cookie != nil else { return .confirmInBrowser(flowID: flow.id) }
        return .browser(try await continueAfterCallback(flow, app: app, answer: ChallengeResponse([:])), app: app, csrf: authorization.binding.csrfToken)
    }

    /// Where a refused callback sends the browser, if anywhere: a native app always hears the error at
    /// its return URI; a browser flow's app hears a denial or an unavailable upstream as an OAuth
    /// error redirect, and anything else (an ID token that fails a check) is shown as a page.
    func errorRedirect(for flow: FlowRecord, error: BrokerError) -> String? {
        if flow.authorization == nil, let returnURI = flow.returnURI {
            return OAuthRedirect.url(returnURI, parameters: [("flow", flow.id), ("error", error.code.rawValue), ("error_description", error.message)])
        }
        guard let authorization = flow.authorization else { return nil }
        let code: ErrorCode
        if error.code == .accessDenied {
            code = .accessDenied
        } else if error.kind == .unavailable {
            code = .temporarilyUnavailable
        } else {
            return nil
        }
        return OAuthRedirect.url(
            authorization.request.redirectURI,
            parameters: [("error", code.rawValue), ("error_description", error.message), ("state", authorization.request.state), ("iss", tokens.issuer)]
        )
    }

    /// Goes on with a flow whose identity came back at the callback. A browser flow has proved its
    /// browser already; a JSON flow's confidential app authenticated with this request, and a public
    /// app proves with its PKCE verifier that it started the flow. A wrong verifier ends the flow.
    func continueAfterCallback(_ flow: FlowRecord, app: App, answer: ChallengeResponse) async throws -> FlowOutcome {
        guard let identity = flow.identity else { throw BrokerError.internalFailure("A flow was parked after its callback without an identity.") }
        if flow.authorization == nil, let challenge = flow.codeChallenge {
            guard let verifier = answer.values["codeVerifier"]?.stringValue, PKCE.verify(verifier, against: challenge) else {
                _ = try? await store.deleteFlow(id: flow.id, version: flow.version)
                try? await audit("signin.failure", flow: flow, outcome: ErrorCode.invalidGrant.rawValue, details: ["reason": "code_verifier_mismatch"])
                throw BrokerError(.invalidGrant, .badRequest, "The codeVerifier does not match the flow's codeChallenge; start a new flow.").because("code_verifier_mismatch")
            }
        }
        var pending = flow
        pending.identity = nil
        return try await advance(pending, with: .identified(identity), app: app)
    }

    /// The return URI a JSON flow names: one of the app's registered redirect URIs, exactly; without
    /// one, the app's only registered URI (as RFC 6749 section 3.1.2.3 allows).
    static func returnURI(_ requested: String?, of app: App) throws(BrokerError) -> String? {
        guard let requested else { return app.redirectURIs.count == 1 ? app.redirectURIs[0] : nil }
        guard app.redirectURIs.contains(requested) else {
            throw BrokerError(.invalidRequest, .badRequest, "The returnURI is not one of the app's registered redirect URIs (they are matched exactly).")
        }
        return requested
    }

    /// The existing account a first sign-in joins by its verified address, when the app's policy
    /// allows it, the provider is trusted with addresses, and exactly one account has the address.
    func accountToLink(_ identity: ExternalIdentity, app: App) async throws -> String? {
        guard app.policy.linkAccountsByVerifiedEmail, identity.emailTrustedForLinking, let address = identity.claims.verifiedEmail else { return nil }
        let accounts = try await store.accountIDs(withVerifiedEmail: address.value)
        return accounts.count == 1 ? accounts[0] : nil
    }
}
