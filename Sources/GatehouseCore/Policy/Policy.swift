/// What one app may do: which identity providers and authenticators, whether a second factor is
/// required, whether stateless sign-in and self-registration are on, token lifetimes and scopes,
/// and the password and lockout rules. Stored with the app; seeded from config; changed at run time.
public struct Policy: Sendable, Hashable, Codable {
    /// Provider instance ids (from `providers:`) this app may sign in with.
    public var identityProviders: [String]
    /// Authenticator instance ids this app may use as an extra factor.
    public var authenticators: [String]
    /// An authenticator instance id every sign-in must also pass, or nil for none.
    public var secondFactor: String?
    /// Whether flows may sign in statelessly (only providers that can, and never with a second factor).
    public var statelessAuthentication: Bool
    /// Whether people may create new accounts themselves (the `register` purpose).
    public var selfRegistration: Bool
    /// How long an access token lives.
    public var accessTokenLifetime: Seconds
    /// How long a refresh token lives.
    public var refreshTokenLifetime: Seconds
    /// How long an unfinished flow stays resumable.
    public var flowLifetime: Seconds
    /// Scopes granted when a flow names none.
    public var defaultScopes: [String]
    /// Scopes a flow may ask for; a flow asking for any other is refused with `invalid_scope`.
    public var allowedScopes: [String]
    /// The rules for new passwords.
    public var passwordPolicy: PasswordPolicy
    /// Limits on wrong answers and flow starts.
    public var lockout: LockoutPolicy
    /// Whether a confidential app may get tokens for itself with the `client_credentials` grant.
    public var clientCredentialsGrant: Bool
    /// The algorithm of the app's ID tokens (OIDC Dynamic Registration's `id_token_signed_response_alg`):
    /// RS256 by default, since every relying party must accept it; access tokens keep `tokens.signingAlgorithm`.
    public var idTokenSigningAlg: SigningAlgorithm
    /// Apps whose access tokens this app, as a resource server, may introspect besides its own (RFC
    /// 7662 section 2.2 leaves who may ask to the server); `*` for every app. Tokens of other apps
    /// answer `{"active": false}`.
    public var introspectTokensOf: [String]
    /// Whether the first sign-in of an identity nobody has yet joins the existing account that has the
    /// same verified address, instead of creating a new one. Only identities whose provider is trusted
    /// with addresses (`ExternalIdentity.emailTrustedForLinking`) and vouches for this one qualify, and
    /// only when exactly one account has it; off by default, since linking by an address a provider
    /// did not verify is a classic account takeover.
    public var linkAccountsByVerifiedEmail: Bool
    /// Whether tokens may or must be bound to the client's key with DPoP (RFC 9449).
    public var dpop: DPoPMode
    /// Whether DPoP proofs must carry a nonce the broker handed out (`DPoP-Nonce`, RFC 9449 section 8),
    /// which limits how long a proof made in advance is good for.
    public var dpopNonce: Bool
    /// Each plugin instance's settings for this app (`plugins.<instance>`), as written: the plugin
    /// decodes them (`App.settings(_:for:)`) and checks them whenever the policy is read or changed.
    public var plugins: [String: JSONValue]
    /// Top-level keys of a policy written before `plugins` existed that a plugin's settings claim
    /// (`FormerPolicyKey`), kept as written until the policy is next saved in the new form.
    public var formerSettings: [String: JSONValue]
    /// Whether a new account's first sign-in ends with the person confirming (or editing) the profile
    /// the identity provider gave; until then the app gets no tokens.
    public var confirmProfile: Bool
    /// How long before an access token expires `GET /v1/registration-state` starts answering
    /// `renewal_required` (its `renewAfter`); at most half the token's lifetime counts.
    public var renewalWindow: Seconds
    /// How long after a refresh token was rotated presenting it again answers with the same successor
    /// (a client whose answer was lost retries) instead of revoking its family as a reuse; 0: strict.
    /// Never across a revocation, and never once the successor itself was used.
    public var refreshReuseGrace: Seconds
    /// Browser single sign-on: how long a session signs the person in to this app without pages.
    public var session: SessionPolicy
    /// Where the browser may go after logout, and where back-channel logout tokens are sent.
    public var logout: LogoutPolicy
    /// Whether a person must agree (once, remembered) to the scopes this app asks for before it gets
    /// them: for third-party apps; first-party apps leave it off.
    public var consentRequired: Bool
    /// Only accounts a SCIM client provisioned sign in (an identity that meets no provisioned user
    /// is refused with `access_denied`, reason `not_provisioned`); deprovisioned ones are disabled.
    public var provisionedOnly: Bool
    /// Whether the app may use the device authorization grant (RFC 8628): a device without a browser
    /// (a TV, a CLI) shows a code the person confirms at `/device` on another device.
    public var deviceAuthorizationGrant: Bool
    /// How long a device code and its user code stay good (RFC 8628 `expires_in`).
    public var deviceCodeLifetime: Seconds
    /// The least number of seconds between two polls of a device code (RFC 8628 `interval`); a device
    /// polling faster gets `slow_down`, and 5 seconds more from then on.
    public var devicePollingInterval: Seconds
    /// Token exchange (RFC 8693): the audiences the app may get tokens for with the tokens it holds.
    public var tokenExchange: TokenExchangePolicy
    /// Whether authorization requests must be pushed first (RFC 9126 `require_pushed_authorization_requests`):
    /// `/oauth2/authorize` then takes only a `request_uri` from `/oauth2/par`.
    public var requirePushedAuthorizationRequests: Bool
    /// The app's public keys for request objects (RFC 9101), as JWKs (EC P-256, RSA of 2048 bits or
    /// more, Ed25519): a `request` is accepted only when one of them signed it. Empty: the app sends none.
    public var requestObjectKeys: [JSONValue]
    /// The app's webhook: where its audit events are delivered, signed, at least once (docs/events.md).
    public var webhook: WebhookPolicy
    /// How the app's sign-in pages look: name, logo, colour, help and privacy links.
    public var branding: BrandingPolicy

    /// A policy; every parameter has its documented default.
    public init(
        identityProviders: [String] = [], authenticators: [String] = [], secondFactor: String? = nil,
        statelessAuthentication: Bool = false, selfRegistration: Bool = false,
        accessTokenLifetime: Seconds = .minutes(15), refreshTokenLifetime: Seconds = .days(30),
        flowLifetime: Seconds = .minutes(10), defaultScopes: [String] = ["openid"],
        allowedScopes: [String] = ["openid", "profile", "email", "offline_access"],
        passwordPolicy: PasswordPolicy = PasswordPolicy(), lockout: LockoutPolicy = LockoutPolicy(), clientCredentialsGrant: Bool = false,
        idTokenSigningAlg: SigningAlgorithm = .rs256, introspectTokensOf: [String] = [], linkAccountsByVerifiedEmail: Bool = false,
        dpop: DPoPMode = .allowed, dpopNonce: Bool = false, plugins: [String: JSONValue] = [:], formerSettings: [String: JSONValue] = [:],
        confirmProfile: Bool = false, renewalWindow: Seconds = .minutes(2),
        refreshReuseGrace: Seconds = Seconds(5), session: SessionPolicy = SessionPolicy(), logout: LogoutPolicy = LogoutPolicy(), consentRequired: Bool = false,
        provisionedOnly: Bool = false,
        deviceAuthorizationGrant: Bool = false, deviceCodeLifetime: Seconds = .minutes(10), devicePollingInterval: Seconds = Seconds(5),
        tokenExchange: TokenExchangePolicy = TokenExchangePolicy(), requirePushedAuthorizationRequests: Bool = false, requestObjectKeys: [JSONValue] = [],
        webhook: WebhookPolicy = WebhookPolicy(), branding: BrandingPolicy = BrandingPolicy()
    ) {
        self.webhook = webhook
        self.branding = branding
        self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        self.requestObjectKeys = requestObjectKeys
        self.tokenExchange = tokenExchange
        self.deviceAuthorizationGrant = deviceAuthorizationGrant
        self.deviceCodeLifetime = deviceCodeLifetime
        self.devicePollingInterval = devicePollingInterval
        self.session = session
        self.logout = logout
        self.consentRequired = consentRequired
        self.provisionedOnly = provisionedOnly
        self.plugins = plugins
        self.formerSettings = formerSettings
        self.confirmProfile = confirmProfile
        self.renewalWindow = renewalWindow
        self.refreshReuseGrace = refreshReuseGrace
        self.dpop = dpop
        self.dpopNonce = dpopNonce
        self.identityProviders = identityProviders
        self.authenticators = authenticators
        self.secondFactor = secondFactor
        self.statelessAuthentication = statelessAuthentication
        self.selfRegistration = selfRegistration
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.flowLifetime = flowLifetime
        self.defaultScopes = defaultScopes
        self.allowedScopes = allowedScopes
        self.passwordPolicy = passwordPolicy
        self.lockout = lockout
        self.clientCredentialsGrant = clientCredentialsGrant
        self.idTokenSigningAlg = idTokenSigningAlg
        self.introspectTokensOf = introspectTokensOf
        self.linkAccountsByVerifiedEmail = linkAccountsByVerifiedEmail
    }

    /// The longest `accessTokenLifetime` a policy may set: after it, no token of a revoked app is valid anyway.
    public static let longestAccessTokenLifetime: TimeInterval = 86_400
    /// The longest `refreshTokenLifetime` a policy may set.
    public static let longestRefreshTokenLifetime: TimeInterval = 31_536_000

    /// Whether this app may learn about an access token issued to `clientID`.
    public func mayIntrospect(tokensOf clientID: String, asApp appID: String) -> Bool {
        clientID == appID || introspectTokensOf.contains(clientID) || introspectTokensOf.contains("*")
    }

    /// The scopes a request gets: the requested ones (or `defaultScopes` when none are named), without
    /// repeats; a scope outside `allowedScopes` is refused with `invalid_scope`.
    public func grantScopes(_ requested: [String]?) throws(BrokerError) -> [String] {
        var granted: [String] = []
        for scope in requested ?? defaultScopes where !granted.contains(scope) {
            guard allowedScopes.contains(scope) else {
                throw BrokerError(.invalidScope, .badRequest, "The scope '\(scope)' is not allowed for this app.")
            }
            granted.append(scope)
        }
        return granted
    }

    /// What is wrong with the policy as a whole, by exact path: references to provider instances that
    /// do not exist (or do not have the role), post-logout redirect URIs the redirect rule refuses, and
    /// a stateless switch that could never work. `statelessCapable` names the identity providers that
    /// can sign in statelessly, when the plugins are built (nil: not known yet, as in the config loader).
    /// One rule for the config file, `check-config`, the admin API and the console.
    public func referenceIssues(
        identityProviders known: Set<String>, authenticators knownAuthenticators: Set<String>, statelessCapable: Set<String>? = nil, path: String
    ) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        issues += RedirectURIRule.issues(logout.postLogoutRedirectURIs, path: "\(path).logout.postLogoutRedirectURIs")
        if statelessAuthentication {
            if let factor = secondFactor {
                issues.append(
                    ConfigIssue(
                        path: "\(path).statelessAuthentication",
                        "cannot be on while a second factor ('\(factor)') is required: a second factor needs an account, which a stateless sign-in never has"
                    ))
            } else if let capable = statelessCapable, !identityProviders.contains(where: capable.contains) {
                issues.append(
                    ConfigIssue(
                        path: "\(path).statelessAuthentication",
                        "cannot be on: none of this app's identity providers can sign in statelessly (\(capable.isEmpty ? "no configured provider can" : "those that can: " + capable.sorted().joined(separator: ", ")))"
                    ))
            }
        }
        for (position, id) in identityProviders.enumerated() where !known.contains(id) {
            let message =
                knownAuthenticators.contains(id)
                ? "'\(id)' is an authenticator, not an identity provider (list it under authenticators)"
                : "no identity provider with id '\(id)' is configured"
            issues.append(ConfigIssue(path: "\(path).identityProviders[\(position)]", message))
        }
        for (position, id) in authenticators.enumerated() where !knownAuthenticators.contains(id) {
            let message =
                known.contains(id)
                ? "'\(id)' is an identity provider, not an authenticator (list it under identityProviders)"
                : "no authenticator with id '\(id)' is configured"
            issues.append(ConfigIssue(path: "\(path).authenticators[\(position)]", message))
        }
        if let factor = secondFactor, !authenticators.contains(factor) {
            issues.append(ConfigIssue(path: "\(path).secondFactor", "'\(factor)' must also be listed in authenticators"))
        }
        return issues
    }

    enum CodingKeys: String, CodingKey {
        case identityProviders, authenticators, secondFactor, statelessAuthentication, selfRegistration
        case accessTokenLifetime, refreshTokenLifetime, flowLifetime, defaultScopes, allowedScopes
        case passwordPolicy, lockout, clientCredentialsGrant, idTokenSigningAlg, introspectTokensOf, linkAccountsByVerifiedEmail
        case dpop, dpopNonce, plugins, confirmProfile, renewalWindow, refreshReuseGrace
        case session, logout, consentRequired, provisionedOnly
        case deviceAuthorizationGrant, deviceCodeLifetime, devicePollingInterval, tokenExchange
        case requirePushedAuthorizationRequests, requestObjectKeys, webhook, branding
    }

    /// Writes every key, `plugins` included, and any former key not moved yet.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identityProviders, forKey: .identityProviders)
        try container.encode(authenticators, forKey: .authenticators)
        try container.encodeIfPresent(secondFactor, forKey: .secondFactor)
        try container.encode(statelessAuthentication, forKey: .statelessAuthentication)
        try container.encode(selfRegistration, forKey: .selfRegistration)
        try container.encode(accessTokenLifetime, forKey: .accessTokenLifetime)
        try container.encode(refreshTokenLifetime, forKey: .refreshTokenLifetime)
        try container.encode(flowLifetime, forKey: .flowLifetime)
        try container.encode(defaultScopes, forKey: .defaultScopes)
        try container.encode(allowedScopes, forKey: .allowedScopes)
        try container.encode(passwordPolicy, forKey: .passwordPolicy)
        try container.encode(lockout, forKey: .lockout)
        try container.encode(clientCredentialsGrant, forKey: .clientCredentialsGrant)
        try container.encode(idTokenSigningAlg, forKey: .idTokenSigningAlg)
        try container.encode(introspectTokensOf, forKey: .introspectTokensOf)
        try container.encode(linkAccountsByVerifiedEmail, forKey: .linkAccountsByVerifiedEmail)
        try container.encode(dpop, forKey: .dpop)
        try container.encode(dpopNonce, forKey: .dpopNonce)
        try container.encode(plugins, forKey: .plugins)
        try container.encode(confirmProfile, forKey: .confirmProfile)
        try container.encode(renewalWindow, forKey: .renewalWindow)
        try container.encode(refreshReuseGrace, forKey: .refreshReuseGrace)
        try container.encode(session, forKey: .session)
        try container.encode(logout, forKey: .logout)
        try container.encode(consentRequired, forKey: .consentRequired)
        try container.encode(provisionedOnly, forKey: .provisionedOnly)
        try container.encode(deviceAuthorizationGrant, forKey: .deviceAuthorizationGrant)
        try container.encode(deviceCodeLifetime, forKey: .deviceCodeLifetime)
        try container.encode(devicePollingInterval, forKey: .devicePollingInterval)
        try container.encode(tokenExchange, forKey: .tokenExchange)
        try container.encode(requirePushedAuthorizationRequests, forKey: .requirePushedAuthorizationRequests)
        try container.encode(requestObjectKeys, forKey: .requestObjectKeys)
        try container.encode(webhook, forKey: .webhook)
        try container.encode(branding, forKey: .branding)
        // A policy not yet saved in the new form keeps its former keys, so that nothing is lost.
        var former = encoder.container(keyedBy: ConfigIssue.Key.self)
        for (key, value) in formerSettings { try former.encode(value, forKey: ConfigIssue.Key(key)) }
    }

    /// Reads a policy with defaults, refusing impossible values with their exact path; keeps `plugins` and unknown top-level keys as written (`PolicySettingsBook` checks them).
    public init(from decoder: any Decoder) throws {
        let defaults = Policy()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T {
            try container.decodeIfPresent(T.self, forKey: key) ?? fallback
        }
        self.identityProviders = try value(.identityProviders, defaults.identityProviders)
        self.authenticators = try value(.authenticators, defaults.authenticators)
        self.secondFactor = try container.decodeIfPresent(String.self, forKey: .secondFactor)
        self.statelessAuthentication = try value(.statelessAuthentication, defaults.statelessAuthentication)
        self.selfRegistration = try value(.selfRegistration, defaults.selfRegistration)
        self.accessTokenLifetime = try value(.accessTokenLifetime, defaults.accessTokenLifetime)
        self.refreshTokenLifetime = try value(.refreshTokenLifetime, defaults.refreshTokenLifetime)
        self.flowLifetime = try value(.flowLifetime, defaults.flowLifetime)
        self.defaultScopes = try value(.defaultScopes, defaults.defaultScopes)
        self.allowedScopes = try value(.allowedScopes, defaults.allowedScopes)
        self.passwordPolicy = try value(.passwordPolicy, defaults.passwordPolicy)
        self.lockout = try value(.lockout, defaults.lockout)
        self.clientCredentialsGrant = try value(.clientCredentialsGrant, defaults.clientCredentialsGrant)
        let algorithmName = try value(.idTokenSigningAlg, defaults.idTokenSigningAlg.rawValue)
        guard let idTokenSigningAlg = SigningAlgorithm(rawValue: algorithmName) else {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.idTokenSigningAlg], "'\(algorithmName)' is not supported (use RS256 or ES256)")
        }
        self.idTokenSigningAlg = idTokenSigningAlg
        self.introspectTokensOf = try value(.introspectTokensOf, defaults.introspectTokensOf)
        self.linkAccountsByVerifiedEmail = try value(.linkAccountsByVerifiedEmail, defaults.linkAccountsByVerifiedEmail)
        let dpopName = try value(.dpop, defaults.dpop.rawValue)
        guard let dpop = DPoPMode(rawValue: dpopName) else {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.dpop], "must be off, allowed or required, got '\(dpopName)'")
        }
        self.dpop = dpop
        self.dpopNonce = try value(.dpopNonce, defaults.dpopNonce)
        // Plugin settings are the plugins' to read: from a config file, kept as written (`raw`).
        let everything = try decoder.container(keyedBy: ConfigIssue.Key.self)
        func raw(_ key: ConfigIssue.Key) throws -> JSONValue {
            decoder is ConfigNodeDecoder ? try everything.decode(ConfigNode.self, forKey: key).uninterpretedJSON : try everything.decode(JSONValue.self, forKey: key)
        }
        var plugins: [String: JSONValue] = [:]
        if everything.contains(ConfigIssue.Key("plugins")) {
            guard case .object(let entries) = try raw(ConfigIssue.Key("plugins")) else {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.plugins], "expected a mapping of provider ids to their settings")
            }
            plugins = entries
        }
        self.plugins = plugins
        // Any other key is kept as written: the plugins' former settings keys are migrated, and the
        // rest reported as unknown, by checks that know the plugins (`PolicySettingsBook.issues`).
        var former: [String: JSONValue] = [:]
        for key in everything.allKeys where CodingKeys(stringValue: key.stringValue) == nil { former[key.stringValue] = try raw(key) }
        self.formerSettings = former
        self.confirmProfile = try value(.confirmProfile, defaults.confirmProfile)
        self.renewalWindow = try value(.renewalWindow, defaults.renewalWindow)
        self.refreshReuseGrace = try value(.refreshReuseGrace, defaults.refreshReuseGrace)
        self.session = try value(.session, defaults.session)
        self.logout = try value(.logout, defaults.logout)
        self.consentRequired = try value(.consentRequired, defaults.consentRequired)
        self.provisionedOnly = try value(.provisionedOnly, defaults.provisionedOnly)
        self.deviceAuthorizationGrant = try value(.deviceAuthorizationGrant, defaults.deviceAuthorizationGrant)
        self.deviceCodeLifetime = try value(.deviceCodeLifetime, defaults.deviceCodeLifetime)
        self.devicePollingInterval = try value(.devicePollingInterval, defaults.devicePollingInterval)
        self.tokenExchange = try value(.tokenExchange, defaults.tokenExchange)
        self.requirePushedAuthorizationRequests = try value(.requirePushedAuthorizationRequests, defaults.requirePushedAuthorizationRequests)
        var keys: [JSONValue] = []
        if container.contains(.requestObjectKeys) {
            let raw =
                decoder is ConfigNodeDecoder
                ? try everything.decode(ConfigNode.self, forKey: ConfigIssue.Key("requestObjectKeys")).uninterpretedJSON
                : try everything.decode(JSONValue.self, forKey: ConfigIssue.Key("requestObjectKeys"))
            guard case .array(let items) = raw else {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.requestObjectKeys], "expected a list of public JWKs")
            }
            for (index, item) in items.enumerated() {
                do {
                    // The public members only, the `kid` a request object's header names it by, and
                    // the `alg` and `use` it is registered for.
                    var members = try PublicJWK(item).members
                    if case .object(let given) = item {
                        for name in ["kid", "alg", "use"] { if let value = given[name]?.stringValue { members[name] = .string(value) } }
                    }
                    keys.append(.object(members))
                } catch {
                    throw ConfigIssue(path: decoder.codingPath + [CodingKeys.requestObjectKeys, ConfigIssue.Key(index: index)], error.message)
                }
            }
        }
        self.requestObjectKeys = keys
        self.webhook = try value(.webhook, defaults.webhook)
        self.branding = try value(.branding, defaults.branding)

        let path = decoder.codingPath
        for (key, lifetime, range) in [
            (CodingKeys.accessTokenLifetime, accessTokenLifetime, 60...Int(Self.longestAccessTokenLifetime)),
            (.refreshTokenLifetime, refreshTokenLifetime, 60...Int(Self.longestRefreshTokenLifetime)),
            (.flowLifetime, flowLifetime, 30...86_400),
            (.renewalWindow, renewalWindow, 0...86_400),
            (.refreshReuseGrace, refreshReuseGrace, 0...60),
            (.deviceCodeLifetime, deviceCodeLifetime, 60...3600),
            (.devicePollingInterval, devicePollingInterval, 1...60),
        ] where !range.contains(lifetime.value) {
            throw ConfigIssue(path: path + [key], "must be between \(range.lowerBound) and \(range.upperBound) seconds, got \(lifetime.value)")
        }
        if let undeclared = defaultScopes.first(where: { !allowedScopes.contains($0) }) {
            throw ConfigIssue(path: path + [CodingKeys.defaultScopes], "'\(undeclared)' is not in allowedScopes")
        }
    }
}

/// Limits on wrong answers and on how fast one address may start flows. Counters live in the store,
/// so they hold across restarts and every broker node.
public struct LockoutPolicy: Sendable, Hashable, Codable {
    /// Wrong answers one flow tolerates before it is closed.
    public var maxFailedAttemptsPerFlow: Int
    /// Wrong answers for one account (across flows) within `failureWindow` before it is locked.
    public var maxFailedAttemptsPerAccount: Int
    /// Wrong answers from one client IP (across accounts) within `failureWindow` before the address is
    /// refused for the rest of the window.
    public var maxFailedAttemptsPerIP: Int
    /// The window failures are counted over.
    public var failureWindow: Seconds
    /// The first lockout of an account; each further lockout doubles it, up to `maxLockoutDuration`.
    public var lockoutDuration: Seconds
    /// The cap of the doubling lockouts.
    public var maxLockoutDuration: Seconds
    /// Flows one client IP may start per minute (requests without a known address share one bucket).
    public var maxFlowStartsPerIPPerMinute: Int
    /// Failed authentications (client secrets, JWT bearer assertions, admin tokens) from one client IP
    /// within `failureWindow` before the address is refused (`429`) for the rest of the window.
    public var maxFailedAuthenticationsPerIP: Int
    /// Failed authentications naming this app's client id within `failureWindow` before the client id
    /// is refused for the rest of the window.
    public var maxFailedAuthenticationsPerClient: Int

    /// The stricter of two policies, field by field: an account reachable through several apps gets
    /// the strictest limits among them.
    public func strictest(_ other: LockoutPolicy) -> LockoutPolicy {
        var result = self
        result.maxFailedAttemptsPerAccount = min(maxFailedAttemptsPerAccount, other.maxFailedAttemptsPerAccount)
        result.maxFailedAttemptsPerIP = min(maxFailedAttemptsPerIP, other.maxFailedAttemptsPerIP)
        result.failureWindow = max(failureWindow, other.failureWindow)
        result.lockoutDuration = max(lockoutDuration, other.lockoutDuration)
        result.maxLockoutDuration = max(maxLockoutDuration, other.maxLockoutDuration)
        return result
    }

    /// A lockout policy; every parameter has its documented default.
    public init(
        maxFailedAttemptsPerFlow: Int = 5, maxFailedAttemptsPerAccount: Int = 10, maxFailedAttemptsPerIP: Int = 100,
        failureWindow: Seconds = .minutes(15), lockoutDuration: Seconds = .minutes(5), maxLockoutDuration: Seconds = .hours(24),
        maxFlowStartsPerIPPerMinute: Int = 300, maxFailedAuthenticationsPerIP: Int = 30, maxFailedAuthenticationsPerClient: Int = 100
    ) {
        self.maxFailedAttemptsPerFlow = maxFailedAttemptsPerFlow
        self.maxFailedAttemptsPerAccount = maxFailedAttemptsPerAccount
        self.maxFailedAttemptsPerIP = maxFailedAttemptsPerIP
        self.failureWindow = failureWindow
        self.lockoutDuration = lockoutDuration
        self.maxLockoutDuration = maxLockoutDuration
        self.maxFlowStartsPerIPPerMinute = maxFlowStartsPerIPPerMinute
        self.maxFailedAuthenticationsPerIP = maxFailedAuthenticationsPerIP
        self.maxFailedAuthenticationsPerClient = maxFailedAuthenticationsPerClient
    }

    enum CodingKeys: String, CodingKey {
        case maxFailedAttemptsPerFlow, maxFailedAttemptsPerAccount, maxFailedAttemptsPerIP, failureWindow, lockoutDuration
        case maxLockoutDuration, maxFlowStartsPerIPPerMinute, maxFailedAuthenticationsPerIP, maxFailedAuthenticationsPerClient
    }

    /// Reads a lockout policy with defaults, refusing impossible values with their path.
    public init(from decoder: any Decoder) throws {
        let defaults = LockoutPolicy()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T {
            try container.decodeIfPresent(T.self, forKey: key) ?? fallback
        }
        self.maxFailedAttemptsPerFlow = try value(.maxFailedAttemptsPerFlow, defaults.maxFailedAttemptsPerFlow)
        self.maxFailedAttemptsPerAccount = try value(.maxFailedAttemptsPerAccount, defaults.maxFailedAttemptsPerAccount)
        self.maxFailedAttemptsPerIP = try value(.maxFailedAttemptsPerIP, defaults.maxFailedAttemptsPerIP)
        self.failureWindow = try value(.failureWindow, defaults.failureWindow)
        self.lockoutDuration = try value(.lockoutDuration, defaults.lockoutDuration)
        self.maxLockoutDuration = try value(.maxLockoutDuration, defaults.maxLockoutDuration)
        self.maxFlowStartsPerIPPerMinute = try value(.maxFlowStartsPerIPPerMinute, defaults.maxFlowStartsPerIPPerMinute)
        self.maxFailedAuthenticationsPerIP = try value(.maxFailedAuthenticationsPerIP, defaults.maxFailedAuthenticationsPerIP)
        self.maxFailedAuthenticationsPerClient = try value(.maxFailedAuthenticationsPerClient, defaults.maxFailedAuthenticationsPerClient)
        let path = decoder.codingPath
        for (key, number, range) in [
            (CodingKeys.maxFailedAttemptsPerFlow, maxFailedAttemptsPerFlow, 1...100), (.maxFailedAttemptsPerAccount, maxFailedAttemptsPerAccount, 1...1000),
            (.maxFailedAttemptsPerIP, maxFailedAttemptsPerIP, 1...100_000), (.maxFlowStartsPerIPPerMinute, maxFlowStartsPerIPPerMinute, 1...1_000_000),
            (.maxFailedAuthenticationsPerIP, maxFailedAuthenticationsPerIP, 1...1_000_000),
            (.maxFailedAuthenticationsPerClient, maxFailedAuthenticationsPerClient, 1...1_000_000),
            (.failureWindow, failureWindow.value, 1...86_400), (.lockoutDuration, lockoutDuration.value, 1...86_400 * 30),
            (.maxLockoutDuration, maxLockoutDuration.value, 1...86_400 * 365),
        ] where !range.contains(number) {
            throw ConfigIssue(path: path + [key], "must be between \(range.lowerBound) and \(range.upperBound), got \(number)")
        }
        if maxLockoutDuration < lockoutDuration {
            throw ConfigIssue(path: path + [CodingKeys.maxLockoutDuration], "must not be shorter than lockoutDuration")
        }
    }

    /// The rule an account's locks follow: doubling from `lockoutDuration`, capped, never permanent.
    public var accountRule: LockoutRule {
        LockoutRule(
            maxFailures: maxFailedAttemptsPerAccount, failureWindow: failureWindow, lockoutDuration: lockoutDuration, maxLockoutDuration: maxLockoutDuration,
            permanentAfterLockouts: nil
        )
    }
}

import Foundation
