import Foundation

/// What the broker's callback (`/oauth2/callback`) does next for the browser that arrived there.
public enum CallbackOutcome: Sendable {
    /// A browser flow goes on in this browser: show the next page (or send it to the app).
    case browser(FlowOutcome, app: App, csrf: String)
    /// Send the browser here: a native app's return URI (with the flow id and the return code, or an
    /// error), or a browser flow's app with an OAuth error (RFC 6749 section 4.1.2.1).
    case redirect(String)
    /// A cross-site form post came without the browser's SameSite=Lax cookie: the browser posts the
    /// same fields again to `url` from the broker's own page, a same-site request that carries it.
    /// The answer stays in a form body, never in a URL (a SAML response is large, and a bearer).
    case repost(url: String, fields: [(name: String, value: String)])
}

/// Sign-ins that happen elsewhere: a plugin's challenge with a `callback` sends the browser to an
/// upstream page, and the upstream sends it back to the broker's callback with the flow's id as
/// `state`. The callback hands the answer to the plugin; the identity it proves is parked in the flow
/// until the one who started the flow goes on: the browser that holds the flow's binding cookie, or
/// the native app that received the browser back (the return code) and proves it started the flow
/// (its client secret, or its PKCE verifier).
extension FlowEngine {
    /// The parameters that may name the flow at the callback: `state`, and any other a declared
    /// callback challenge uses (SAML's `RelayState`).
    public var callbackStateParameters: [String] {
        let declared = Set(challenges.all.compactMap { $0.callback?.stateParameter })
        return [ChallengeCallback.stateParameter] + declared.subtracting([ChallengeCallback.stateParameter]).sorted()
    }

    /// Handles one arrival at the callback. `stateParameter` is the parameter that named the flow
    /// (one of `callbackStateParameters`): it must be the one the flow's challenge declares. `cookie`
    /// is the browser's binding cookie, if it sent one; `crossSitePost` tells that the answer came as
    /// a form post from another site (`response_mode=form_post`, SAML's HTTP-POST binding);
    /// `providerID` is the provider the callback URL names (`/oauth2/callback/<provider>`), if any.
    public func callback(
        state flowID: String, stateParameter: String = "state", answer: ChallengeResponse, cookie: String?, crossSitePost: Bool,
        providerID: String? = nil
    ) async throws -> CallbackOutcome {
        let notFound = BrokerError(.flowNotFound, .notFound, "This sign-in is unknown, expired or already finished; start again from the app.")
        guard let stored = try await store.flow(id: flowID, now: clock.now, sealer: sealer), let app = try await store.app(id: stored.appID), !app.disabled else {
            throw notFound
        }
        try await refuseUnlessEnrolmentSessionIsLive(stored)
        var flow = stored
        // An answer meant for another provider's callback URL is a mix-up (RFC 9700 section 4.4).
        if let providerID, providerID != flow.providerID { throw notFound }
        // One callback per challenge: a second one (a replay, a reload) finds the step done or taken.
        guard let declaration = challenges.description(of: flow.challenge.type), let callback = declaration.callback, flow.phase == .identify,
            flow.challenge.fields[Self.callbackClaimedField] == nil
        else {
            throw BrokerError(.flowNotFound, .notFound, "This sign-in step is already done; start again from the app.")
        }
        // The flow is named the way its provider's protocol names it, and no other way.
        guard callback.stateParameter == stateParameter else { throw notFound }
        let declared = Set(declaration.inputs.map(\.name))
        let kept = ChallengeResponse(answer.values.filter { declared.contains($0.key) })
        if let repost = try callbackBrowserCheck(flow, kept: kept, callback: callback, cookie: cookie, crossSitePost: crossSitePost, providerID: providerID) {
            return repost
        }
        // A bare visit (a prefetch, a link followed by hand, a lone `state`) is no answer, and changes nothing.
        guard callback.answerFields.contains(where: { kept.values[$0] != nil }) else {
            throw BrokerError(.invalidRequest, .badRequest, "The callback carries no answer from the sign-in service.")
        }
        try declaration.validate(kept)
        let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: flow.stateless)
        let context = FlowContext(flowID: flow.id, app: app.view, request: flowRequest(for: flow), state: flow.pluginState)
        // Claim the callback before the plugin redeems anything: of two arrivals only one goes on.
        flow.challenge.fields[Self.callbackClaimedField] = .bool(true)
        try await save(&flow)
        let identity: ExternalIdentity
        do {
            guard case .identified(let proven) = try await provider.resume(with: kept, in: context) else {
                throw BrokerError.internalFailure("A provider answered its callback with something other than an identity.")
            }
            identity = proven
        } catch {
            // The flow ends whatever went wrong: an upstream answer is never tried twice.
            let refusal = error as? BrokerError ?? BrokerError.internalFailure()
            _ = try? await store.deleteFlow(id: flow.id, version: flow.version)
            try? await audit("signin.failure", flow: flow, outcome: refusal.code.rawValue, details: refusal.reason.map { ["reason": $0] } ?? [:])
            metrics.signIn(provider: flow.providerID, outcome: refusal.code.rawValue)
            if let reason = refusal.reason {
                logger.notice("callback refused", metadata: ["app": .string(app.id), "provider": .string(flow.providerID), "reason": .string(reason)])
            }
            if let redirect = errorRedirect(for: flow, error: refusal) { return .redirect(redirect) }
            throw refusal
        }
        return try await callbackIdentified(flow, identity: identity, app: app)
    }

    /// A browser flow listens only to its own browser, and nothing changes before it has proved that.
    /// A cross-site form post carries no SameSite=Lax cookie: its declared fields are posted again
    /// from the broker's own page (same-site, so the cookie comes along), answered here.
    func callbackBrowserCheck(
        _ flow: FlowRecord, kept: ChallengeResponse, callback: ChallengeCallback, cookie: String?, crossSitePost: Bool, providerID: String?
    ) throws -> CallbackOutcome? {
        guard let authorization = flow.authorization else { return nil }
        let notFound = BrokerError(.flowNotFound, .notFound, "This sign-in is unknown, expired or already finished; start again from the app.")
        guard let cookie else {
            guard crossSitePost else { throw notFound }
            let location = tokens.issuer + Broker.callbackPath + (providerID.map { "/" + $0 } ?? "")
            let fields =
                [(name: callback.stateParameter, value: flow.id)]
                + kept.values.sorted { $0.key < $1.key }.compactMap { name, value in value.stringValue.map { (name: name, value: $0) } }
            return .repost(url: location, fields: fields)
        }
        guard SecretDigest.matches(cookie, digest: authorization.binding.cookieDigest) else { throw notFound }
        return nil
    }

    /// The provider identified someone at its callback: a native app's browser goes back to the app
    /// with a one-time code only that app sees; a browser flow goes on at once.
    func callbackIdentified(_ flow: FlowRecord, identity: ExternalIdentity, app: App) async throws -> CallbackOutcome {
        var flow = flow
        flow.identity = identity
        flow.challenge = Challenge(type: Challenge.callbackReceivedType)
        flow.pluginState = FlowState()
        guard let authorization = flow.authorization else {
            // A native app: the system browser goes back to it with a one-time code that only that
            // app sees, and the app goes on with the flow.
            let returnCode = RandomToken.make()
            flow.returnCodeDigest = SecretDigest.sha256Hex(returnCode)
            try await save(&flow)
            return .redirect(OAuthRedirect.url(flow.returnURI ?? "", parameters: [("flow", flow.id), ("code", returnCode)]))
        }
        try await save(&flow)
        return .browser(try await continueAfterCallback(flow, app: app, answer: ChallengeResponse([:])), app: app, csrf: authorization.binding.csrfToken)
    }

    /// Set on a callback challenge while its answer is being checked.
    static let callbackClaimedField = "callbackClaimed"

    /// Where a refused callback sends the browser, if anywhere: a native app always hears the error at
    /// its return URI; a browser flow's app hears a denial, an authentication older than it asked
    /// for, or an unavailable upstream as an OAuth error redirect, and anything else (an ID token that fails a check) is shown as a page.
    func errorRedirect(for flow: FlowRecord, error: BrokerError) -> String? {
        if flow.authorization == nil, let returnURI = flow.returnURI {
            return OAuthRedirect.url(returnURI, parameters: [("flow", flow.id), ("error", error.code.rawValue), ("error_description", error.message)])
        }
        guard let authorization = flow.authorization else { return nil }
        let code: ErrorCode
        if error.code == .accessDenied || error.code == .loginRequired {
            // `login_required`: the upstream did not authenticate the person as the app asked
            // (prompt=login, max_age); the app may send them again.
            code = error.code
        } else if error.kind == .unavailable {
            code = .temporarilyUnavailable
        } else {
            return nil
        }
        return appErrorRedirect(authorization.request, code, error.message)
    }

    /// Goes on with a flow whose identity came back at the callback. A browser flow has proved its
    /// browser already; a JSON flow's confidential app authenticated with this request, and a public
    /// app proves with its PKCE verifier that it started the flow. A wrong verifier ends the flow.
    func continueAfterCallback(_ flow: FlowRecord, app: App, answer: ChallengeResponse, dpopJKT: String? = nil) async throws -> FlowOutcome {
        guard let identity = flow.identity else { throw BrokerError.internalFailure("A flow was parked after its callback without an identity.") }
        if flow.authorization == nil {
            func refuse(_ reason: String, _ message: String) async -> BrokerError {
                _ = try? await store.deleteFlow(id: flow.id, version: flow.version)
                try? await audit("signin.failure", flow: flow, outcome: ErrorCode.invalidGrant.rawValue, details: ["reason": reason])
                return BrokerError(.invalidGrant, .badRequest, message).because(reason)
            }
            // The return code reached only the app the browser went back to.
            guard let digest = flow.returnCodeDigest, let code = answer.values["code"]?.stringValue, SecretDigest.matches(code, digest: digest) else {
                throw await refuse("return_code_mismatch", "The code does not match the one the return URI carried; start a new flow.")
            }
            if let challenge = flow.codeChallenge {
                guard let verifier = answer.values["codeVerifier"]?.stringValue, PKCE.verify(verifier, against: challenge) else {
                    throw await refuse("code_verifier_mismatch", "The codeVerifier does not match the flow's codeChallenge; start a new flow.")
                }
            }
        }
        var pending = flow
        pending.identity = nil
        return try await advance(pending, with: .identified(identity), app: app, dpopJKT: dpopJKT)
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
    /// Both sides must be trusted: the new identity's provider, and on the existing account a link of
    /// one of this app's providers that is trusted with addresses (or an address enrolled with one of
    /// its authenticators, which the broker proved itself). An address some other provider took as
    /// verified cannot plant an account for someone else's later sign-in to join.
    func accountToLink(_ identity: ExternalIdentity, app: App) async throws -> String? {
        guard app.policy.linkAccountsByVerifiedEmail, identity.emailTrustedForLinking, trustsEmailForLinking(identity.providerID),
            let address = identity.claims.verifiedEmail
        else { return nil }
        let enrolled = Set(app.policy.authenticators.map(IdentityLink.enrolledAddressProvider))
        var trusted: [String] = []
        for accountID in try await store.accountIDs(withVerifiedEmail: address.value) {
            let links = try await store.identityLinks(accountID: accountID)
            let vouching = links.filter {
                enrolled.contains($0.providerID) || (app.policy.identityProviders.contains($0.providerID) && trustsEmailForLinking($0.providerID))
            }
            if vouching.contains(where: { $0.verifiedEmail == address }) { trusted.append(accountID) }
        }
        return trusted.count == 1 ? trusted[0] : nil
    }

    func trustsEmailForLinking(_ providerID: String) -> Bool {
        plugins.identityProviders[providerID]?.traits.trustsEmailForLinking ?? false
    }
}
