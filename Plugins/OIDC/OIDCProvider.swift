import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport
import Logging

/// One `oidc` instance: signs people in at an upstream OpenID provider with the authorization code
/// flow (PKCE S256, `state` = the flow, `nonce`), checks the ID token, optionally reads userinfo, maps
/// the claims to an identity, and keeps the upstream refresh token (sealed) to recheck the person when
/// an app refreshes.
public struct OIDCProvider: IdentityProvider {
    public let id: String
    let config: OIDCConfig
    let environment: PluginEnvironment
    let directory: UpstreamDirectory
    let verifier: IDTokenVerifier
    let tokens: UpstreamTokenClient
    let mapper: ClaimMapper

    init(id: String, config: OIDCConfig, environment: PluginEnvironment) {
        self.id = id
        self.config = config
        self.environment = environment
        directory = UpstreamDirectory(config: config, http: environment.http, clock: environment.clock, logger: environment.logger)
        verifier = IDTokenVerifier(config: config, directory: directory, clock: environment.clock)
        tokens = UpstreamTokenClient(config: config, http: environment.http, clock: environment.clock, logger: environment.logger)
        mapper = ClaimMapper(config: config)
    }

    public var traits: PluginTraits {
        PluginTraits(openEnrollment: true, trustsEmailForLinking: config.trustEmail && !config.insecureSkipEmailVerified, registration: .social)
    }

    /// Where the upstream sends the browser back: this provider's own callback URL unless configured
    /// (one per upstream, so an answer cannot be mixed up with another upstream's, RFC 9700 4.4.2).
    var redirectURI: String { config.redirectURI ?? environment.callbackURL + "/" + id }

    /// What the flow keeps between the redirect and the callback.
    struct PendingSignIn: Codable {
        var nonce: String
        var codeVerifier: String
        /// When the browser was sent upstream: with `prompt=login` the person must authenticate after it.
        var startedAt: Date?
        /// The app's `max_age`, passed upstream: the ID token's `auth_time` must be within it.
        var maxAge: Int?
        /// The app asked for `prompt=login` (or `max_age=0`).
        var reauthenticate: Bool?
    }

    /// The upstream refresh token of one person (sealed in plugin storage), for rechecks.
    struct UpstreamSession: Codable {
        var refreshToken: String
        /// The upstream's own `sub`, which a refreshed ID token must repeat.
        var upstreamSubject: String
        var checkedAt: Date
        /// Set when the upstream refused a refresh: every later recheck refuses too, until the person
        /// signs in again through the upstream (which replaces the session).
        var refused: Bool?
    }

    static let challenge = ChallengeDescription(
        type: "redirect",
        summary: "Sign in at an upstream OpenID provider: open `url` in a browser; the broker's callback then sends the browser to the app's returnURI with `flow`.",
        prompt: "Continue at the sign-in page.",
        elements: [
            .hidden("code", label: "Code", maxLength: 4096), .hidden("error", label: "Error", maxLength: 256),
            .hidden("error_description", label: "Error description", maxLength: 2048), .hidden("iss", label: "Issuer", maxLength: 2048),
            .detail("url", .string, "The upstream authorization URL to open in a browser."), .detail("provider", .string, "The provider instance id."),
            .callback(urlField: "url", answerFields: ["code", "error"]),
        ])

    // MARK: - Sign-in

    public func begin(in context: FlowContext) async throws -> FlowStep {
        let metadata = try await directory.currentMetadata()
        let reauthenticate = context.signInAgain || context.freshSignInWithin?.value == 0
        let pending = PendingSignIn(
            nonce: RandomToken.make(), codeVerifier: RandomToken.make(byteCount: 48), startedAt: environment.clock.now, maxAge: context.freshSignInWithin?.value,
            reauthenticate: reauthenticate
        )
        var parameters: [String: String] = config.extraAuthParameters
        parameters["response_type"] = "code"
        parameters["client_id"] = config.clientID
        parameters["redirect_uri"] = redirectURI
        parameters["scope"] = config.scopes.joined(separator: " ")
        parameters["state"] = context.flowID
        parameters["nonce"] = pending.nonce
        parameters["code_challenge"] = PKCE.challenge(for: pending.codeVerifier)
        parameters["code_challenge_method"] = "S256"
        if config.responseMode == .formPost { parameters["response_mode"] = "form_post" }
        // OIDC Core 3.1.2.1: what the app asked of the authentication goes on to the upstream, which
        // is where the person authenticates. `consent` and `none` are the broker's own business.
        var prompts = (config.prompt ?? "").split(separator: " ").map(String.init)
        let asked = (context.signInAgain ? ["login"] : []) + (context.selectAccount ? ["select_account"] : [])
        for prompt in asked where !prompts.contains(prompt) { prompts.append(prompt) }
        if prompts.contains("login") || prompts.contains("select_account") { prompts.removeAll { $0 == "none" } }
        if !prompts.isEmpty { parameters["prompt"] = prompts.joined(separator: " ") }
        // prompt=login alone leaves auth_time optional (OIDC Core 2); max_age=0 asks for the same
        // re-authentication and makes the upstream say when it happened.
        if let maxAge = context.freshSignInWithin { parameters["max_age"] = String(maxAge.value) } else if reauthenticate { parameters["max_age"] = "0" }
        if !config.acrValues.isEmpty { parameters["acr_values"] = config.acrValues.joined(separator: " ") }
        if let hint = context.loginHint { parameters["login_hint"] = hint }
        let separator = metadata.authorizationEndpoint.contains("?") ? "&" : "?"
        let url = metadata.authorizationEndpoint + separator + FormEncoding.encode(parameters)
        return .challenge(Challenge(type: Self.challenge.type, fields: ["url": .string(url), "provider": .string(id)]), state: pending)
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let pending = try context.state(PendingSignIn.self)
        let metadata = try await directory.currentMetadata()
        // RFC 9207: an answer naming another issuer came from another provider (a mix-up attack),
        // whether it brings a code or an error.
        if let issuer = answer.values["iss"]?.stringValue {
            guard issuer == config.issuer else { throw OIDCError.invalidIDToken("wrong_response_issuer") }
        } else if metadata.sendsIssuerInResponse {
            throw OIDCError.invalidIDToken("missing_response_issuer")
        }
        if let error = answer.values["error"]?.stringValue {
            let code = UpstreamTokenClient.printable(error)
            environment.logger.notice("upstream refused the sign-in", metadata: ["error": .string(code)])
            switch code {
            case "access_denied": throw OIDCError.denied("upstream_access_denied", "The sign-in was cancelled or refused at the sign-in service.")
            case "login_required", "interaction_required", "consent_required", "account_selection_required":
                throw OIDCError.denied("upstream_\(code)", "The sign-in service needs you to sign in there first.")
            default: throw OIDCError.unavailable("upstream_error")
            }
        }
        guard let code = answer.values["code"]?.stringValue, !code.isEmpty else {
            throw BrokerError(.invalidRequest, .badRequest, "The sign-in service's answer has no code.").because("callback_without_code").endingFlow()
        }
        let upstream: UpstreamTokens
        do {
            upstream = try await tokens.exchange(code: code, verifier: pending.codeVerifier, redirectURI: redirectURI, endpoint: metadata.tokenEndpoint)
        } catch {
            switch error {
            // A made-up, replayed or expired code: the answer was not good, the upstream is fine.
            case .refused(let reason): throw OIDCError.denied(reason, "The sign-in service did not accept the answer; sign in again.")
            case .unavailable(let reason):
                await directory.forgetMetadata()
                throw OIDCError.unavailable(reason)
            }
        }
        guard let idToken = upstream.idToken else { throw OIDCError.invalidIDToken("missing_id_token") }
        var claims = try await verifier.verify(idToken, nonce: pending.nonce, accessToken: upstream.accessToken)
        // OIDC Core 3.1.3.7 step 12: the person could drop acr_values from the URL; the token says what happened.
        if !config.acrValues.isEmpty {
            guard let acr = claims["acr"]?.stringValue, config.acrValues.contains(acr) else { throw OIDCError.invalidIDToken("acr_not_satisfied") }
        }
        if config.userinfo {
            guard let endpoint = metadata.userinfoEndpoint else { throw OIDCError.unavailable("no_userinfo_endpoint") }
            let userinfo = try await tokens.userinfo(endpoint: endpoint, accessToken: upstream.accessToken)
            // OIDC Core section 5.3.2: a userinfo answer about someone else is not used (token substitution).
            guard userinfo["sub"]?.stringValue == claims["sub"]?.stringValue else { throw OIDCError.invalidIDToken("userinfo_subject_mismatch") }
            for (name, value) in userinfo where !IDTokenVerifier.tokenClaims.contains(name) { claims[name] = value }
        }
        var identity = try mapper.identity(from: claims, providerID: id)
        identity.authTime = try authenticationTime(claims, pending: pending)
        if let refreshToken = upstream.refreshToken, let upstreamSubject = claims["sub"]?.stringValue {
            try await keep(UpstreamSession(refreshToken: refreshToken, upstreamSubject: upstreamSubject, checkedAt: environment.clock.now), for: identity.subject)
        }
        return .identified(identity)
    }

    /// When the person really authenticated at the upstream (the ID token's `auth_time`, never later
    /// than now), checked against what the app asked: within `max_age` (OIDC Core 3.1.3.7 step 13:
    /// `auth_time` must then be present), and after the browser was sent upstream for `prompt=login`.
    /// Nil when the upstream does not say and nothing was asked.
    func authenticationTime(_ claims: [String: JSONValue], pending: PendingSignIn) throws(BrokerError) -> Date? {
        let now = environment.clock.now
        let skew = config.clockSkew.timeInterval
        var authTime: Date?
        if let value = claims["auth_time"] {
            guard case .number(let seconds) = value, seconds.isFinite, seconds > 0 else { throw OIDCError.invalidIDToken("invalid_auth_time") }
            authTime = min(Date(timeIntervalSince1970: seconds), now)
        }
        if let maxAge = pending.maxAge {
            guard let authTime else { throw OIDCError.invalidIDToken("missing_auth_time") }
            guard now.timeIntervalSince(authTime) <= TimeInterval(maxAge) + skew else {
                throw BrokerError(.loginRequired, .forbidden, "The sign-in service did not ask you to sign in again, as this app requires; sign in again.")
                    .because("upstream_auth_time_too_old").endingFlow()
            }
        }
        if pending.reauthenticate == true {
            // Without auth_time nothing shows the person signed in again.
            guard let authTime else { throw OIDCError.invalidIDToken("missing_auth_time") }
            if let started = pending.startedAt, authTime < started.addingTimeInterval(-skew) {
                throw BrokerError(.loginRequired, .forbidden, "The sign-in service did not ask you to sign in again, as this app requires; sign in again.")
                    .because("upstream_not_reauthenticated").endingFlow()
            }
        }
        return authTime
    }

    // MARK: - Rechecks on refresh

    static func sessionKey(_ subject: String) -> String { "upstream-session:" + Base64URL.sha256(subject) }

    /// Stores (or replaces) a person's upstream session, sealed.
    func keep(_ session: UpstreamSession, for subject: String) async throws {
        let key = Self.sessionKey(subject)
        let data = try JSONEncoder().encode(session)
        do {
            try await environment.storage.updateSecret(key: key) { _ in .store(data) }
        } catch {
            // The sign-in goes on without a kept session (as before: rechecks then have nothing to
            // refresh with); a store that cannot keep it is the operator's to see in the log.
            environment.logger.warning("upstream session not kept", metadata: ["error": .string(String(describing: error))])
        }
    }

    func isStillValid(subject: String) async throws -> Bool {
        if case .valid = try await recheck(subject: subject) { return true }
        return false
    }

    /// With a kept upstream refresh token: at most once per `recheckInterval`, refreshes at the
    /// upstream; a refused refresh (the person was disabled or their tokens revoked) ends the person's
    /// refreshes here too. The refreshed ID token (and userinfo, with `userinfo: true`) is mapped again
    /// under the same rules as a sign-in (`allowedDomains`, `requiredClaims`, `allowedGroups`): a
    /// person who no longer passes them is refused, and one who does gets the fresh claims. Without
    /// a kept refresh token there is nothing to ask, and the identity stays good.
    public func recheck(subject: String) async throws -> IdentityRecheck {
        let key = Self.sessionKey(subject)
        guard let stored = try await environment.storage.secret(key: key) else { return .valid(freshClaims: nil) }
        guard let session = try? JSONDecoder().decode(UpstreamSession.self, from: stored.value), session.refused != true else {
            return .refused(reason: "upstream_refused_earlier")
        }
        let now = environment.clock.now
        if now.timeIntervalSince(session.checkedAt) < config.recheckInterval.timeInterval { return .valid(freshClaims: nil) }
        // Claim the check first: of two nodes refreshing at once only one uses the upstream refresh
        // token (an upstream that detects reuse would revoke the person's tokens); the other goes on.
        var claimed = session
        claimed.checkedAt = now
        guard try await environment.storage.replaceWithSecret(try JSONEncoder().encode(claimed), key: key, version: stored.version) else {
            return .valid(freshClaims: nil)
        }
        let version = stored.version + 1
        let metadata: UpstreamMetadata
        let refreshed: UpstreamTokens
        do {
            metadata = try await directory.currentMetadata()
            refreshed = try await tokens.refresh(session.refreshToken, endpoint: metadata.tokenEndpoint)
        } catch let error as UpstreamTokenClient.Failure {
            switch error {
            case .refused:
                try await markRefused(claimed, key: key, version: version)
                environment.logger.notice("upstream refused the refresh; the person is signed out here")
                return .refused(reason: "upstream_refresh_refused")
            case .unavailable(let reason):
                // Not checked after all: the next refresh tries again.
                _ = try? await environment.storage.replaceWithSecret(try JSONEncoder().encode(session), key: key, version: version)
                await directory.forgetMetadata()
                throw OIDCError.unavailable(reason, "The sign-in service could not confirm the account right now; try again later.")
            }
        } catch {
            _ = try? await environment.storage.replaceWithSecret(try JSONEncoder().encode(session), key: key, version: version)
            throw error
        }
        claimed.refreshToken = refreshed.refreshToken ?? session.refreshToken
        var claims: [String: JSONValue] = [:]
        do {
            if let idToken = refreshed.idToken {
                // OIDC Core 12.2: a refreshed ID token is about the same person; anything else ends it here.
                claims = try await verifier.verify(idToken, nonce: nil, accessToken: refreshed.accessToken)
                guard claims["sub"]?.stringValue == session.upstreamSubject else {
                    try await markRefused(claimed, key: key, version: version)
                    return .refused(reason: "upstream_subject_changed")
                }
            }
            if config.userinfo, let endpoint = metadata.userinfoEndpoint {
                let userinfo = try await tokens.userinfo(endpoint: endpoint, accessToken: refreshed.accessToken)
                guard userinfo["sub"]?.stringValue == session.upstreamSubject else {
                    try await markRefused(claimed, key: key, version: version)
                    return .refused(reason: "userinfo_subject_mismatch")
                }
                for (name, value) in userinfo where !IDTokenVerifier.tokenClaims.contains(name) { claims[name] = value }
            }
        } catch let error as BrokerError where error.kind == .unavailable {
            // Keys or userinfo that cannot be fetched now are an outage, not a verdict: keep the rotated token.
            claimed.checkedAt = session.checkedAt
            _ = try? await environment.storage.replaceWithSecret(try JSONEncoder().encode(claimed), key: key, version: version)
            throw error
        } catch {
            try await markRefused(claimed, key: key, version: version)
            return .refused(reason: (error as? BrokerError)?.reason ?? "invalid_refreshed_id_token")
        }
        var fresh: IdentityClaims?
        if !claims.isEmpty {
            // The same rules as a sign-in: someone moved out of an allowed group or domain is refused now.
            switch Result(catching: { () throws(BrokerError) in try mapper.identity(from: claims, providerID: id) }) {
            case .success(let identity) where identity.subject == subject:
                fresh = identity.claims
            case .success:
                try await markRefused(claimed, key: key, version: version)
                return .refused(reason: "upstream_subject_changed")
            case .failure(let refusal):
                try await markRefused(claimed, key: key, version: version)
                let reason = refusal.reason ?? "claims_not_allowed"
                environment.logger.notice(
                    "the upstream's fresh claims no longer pass this provider's rules; the person is signed out here", metadata: ["reason": .string(reason)])
                return .refused(reason: reason)
            }
        }
        _ = try await environment.storage.replaceWithSecret(try JSONEncoder().encode(claimed), key: key, version: version)
        return .valid(freshClaims: fresh)
    }

    /// Keeps the refusal, so that the app's next refresh (and the person's other sessions) are refused too.
    private func markRefused(_ session: UpstreamSession, key: String, version: Int) async throws {
        var refused = session
        refused.refused = true
        _ = try await environment.storage.replaceWithSecret(try JSONEncoder().encode(refused), key: key, version: version)
    }

    /// Deregistration: the kept upstream refresh token goes.
    public func forget(_ departure: Departure) async throws -> [AdminChange] {
        if case .identity(let subject) = departure { try await environment.storage.delete(key: Self.sessionKey(subject)) }
        return []
    }

    // MARK: - providers test

    public func diagnose(username: String?, password: String?) async -> [DiagnosticStep] {
        var steps: [DiagnosticStep] = []
        let metadata: UpstreamMetadata
        do {
            await directory.forgetMetadata()
            metadata = try await directory.currentMetadata()
            steps.append(DiagnosticStep(name: "discovery", passed: true, detail: "\(await directory.discoveryURL): issuer \(metadata.issuer)"))
        } catch {
            steps.append(DiagnosticStep(name: "discovery", passed: false, detail: "\(await directory.discoveryURL): \(Self.explain(error))"))
            return steps
        }
        do {
            let keys = try await directory.keys(kid: nil, alg: config.signingAlgorithms[0])
            let usable = Set(config.signingAlgorithms.filter { alg in keys.contains { $0.serves(alg) } })
            let passed = !usable.isEmpty
            steps.append(
                DiagnosticStep(
                    name: "jwks", passed: passed,
                    detail: passed
                        ? "\(metadata.jwksURI): keys for \(usable.sorted().joined(separator: ", "))"
                        : "\(metadata.jwksURI): no key for \(config.signingAlgorithms.joined(separator: ", "))"
                )
            )
            if !passed { return steps }
        } catch {
            steps.append(DiagnosticStep(name: "jwks", passed: false, detail: "\(metadata.jwksURI): \(Self.explain(error))"))
            return steps
        }
        // A made-up code: `invalid_grant` means the endpoint is there and took the client's credentials.
        do {
            let response = try await tokens.post(
                metadata.tokenEndpoint,
                ["grant_type": "authorization_code", "code": "gatehouse-providers-test", "redirect_uri": redirectURI, "code_verifier": RandomToken.make()]
            )
            let error = UpstreamTokenClient.errorCode(in: response) ?? "no error code"
            let passed = error == "invalid_grant" || error == "invalid_request"
            let detail =
                error == "invalid_client" || error == "unauthorized_client"
                ? "\(metadata.tokenEndpoint): the client credentials were refused (\(error)); check clientID and the client authentication"
                : "\(metadata.tokenEndpoint): HTTP \(response.status), \(error)"
            steps.append(DiagnosticStep(name: "token endpoint", passed: passed, detail: detail))
            if !passed { return steps }
        } catch {
            steps.append(DiagnosticStep(name: "token endpoint", passed: false, detail: "\(metadata.tokenEndpoint): \(error)"))
            return steps
        }
        if config.userinfo {
            steps.append(
                DiagnosticStep(
                    name: "userinfo", passed: metadata.userinfoEndpoint != nil,
                    detail: metadata.userinfoEndpoint ?? "the discovery document names no userinfo_endpoint, but userinfo is on"
                )
            )
        }
        steps.append(DiagnosticStep(name: "redirect URI", passed: true, detail: "register \(redirectURI) at the upstream for client \(config.clientID)"))
        return steps
    }

    static func explain(_ error: BrokerError) -> String {
        switch error.reason {
        case "discovery_issuer_mismatch": "the document's issuer is not exactly the configured issuer"
        case "discovery_unreachable", "jwks_unreachable": "not reachable, or did not answer 200"
        case "discovery_invalid": "not a discovery document with https endpoints"
        case "jwks_invalid": "not a JSON Web Key Set"
        default: error.reason ?? error.message
        }
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension OIDCProvider: Diagnosable {}
extension OIDCProvider: Forgetting {}
extension OIDCProvider: Rechecking {}
