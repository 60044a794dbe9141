import Foundation

/// The device authorization grant (RFC 8628): a device without a browser asks for a device code and
/// a user code, shows the user code, and polls the token endpoint while the person signs in at
/// `/device` on another device and confirms (`FlowEngine.startDeviceVerification`).
extension OAuthService {
    public static let deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"
    /// Where the person goes to type the user code.
    public static let verificationPath = "/device"

    /// RFC 8628 section 3.1-3.2: a new device code for the authenticated client, for `scopes` (nil:
    /// the app's defaults). Device authorizations one address may ask for per minute are limited like
    /// flow starts.
    public func deviceAuthorization(client: ClientCredentials?, scopes requested: [String]?, clientIP: String?) async throws -> DeviceAuthorizationResponse {
        let app = try await clients.authenticate(client, clientIP: clientIP)
        guard app.policy.deviceAuthorizationGrant else {
            throw BrokerError(.unauthorizedClient, .badRequest, "This client may not use the device authorization grant.")
        }
        let scopes = try app.policy.grantScopes(requested)
        let now = clock.now
        if let refusal = try await store.perMinuteRefusal(
            "device", clientIP: clientIP, limit: app.policy.lockout.maxFlowStartsPerIPPerMinute, now: now,
            message: "Too many device codes asked for from this address; wait a moment."
        ) {
            throw refusal
        }
        let deviceCode = RandomToken.make()
        let lifetime = app.policy.deviceCodeLifetime.value
        // A user code another live authorization holds (one chance in billions) is drawn again.
        for _ in 0..<5 {
            let userCode = UserCode.make()
            let normalized = UserCode.normalized(userCode) ?? userCode
            let record = DeviceAuthorizationRecord(
                deviceCodeDigest: SecretDigest.sha256Hex(deviceCode), userCodeDigest: UserCode.digest(normalized), appID: app.id, scopes: scopes,
                createdAt: now, expiresAt: now.addingTimeInterval(TimeInterval(lifetime)), interval: app.policy.devicePollingInterval.value
            )
            if try await store.insertDeviceAuthorization(record) {
                try await store.appendAudit(
                    AuditEvent(time: now, type: "device.authorization_started", appID: app.id, details: ["scopes": scopes.joined(separator: " ")]))
                let verification = tokens.issuer + Self.verificationPath
                return DeviceAuthorizationResponse(
                    deviceCode: deviceCode, userCode: userCode, verificationURI: verification,
                    verificationURIComplete: OAuthRedirect.url(verification, parameters: [("user_code", userCode)]), expiresIn: lifetime,
                    interval: record.interval
                )
            }
        }
        throw BrokerError(.temporarilyUnavailable, .unavailable, "No free user code was found; try again.")
    }

    /// RFC 8628 section 3.4-3.5: a poll. Every poll is recorded (on every node, by compare-and-swap),
    /// so polls closer than the interval answer `slow_down` and push the interval up by 5 seconds.
    func deviceCode(_ request: TokenRequest, app: App, dpopJKT: String?) async throws -> IssuedTokens {
        guard let deviceCode = request.deviceCode, !deviceCode.isEmpty else { throw BrokerError(.invalidRequest, .badRequest, "device_code is required.") }
        guard app.policy.deviceAuthorizationGrant else {
            throw BrokerError(.unauthorizedClient, .badRequest, "This client may not use the device authorization grant.")
        }
        let now = clock.now
        guard var record = try await store.deviceAuthorization(deviceCodeDigest: SecretDigest.sha256Hex(deviceCode)), record.appID == app.id else {
            throw Self.invalidGrant("The device code is not valid for this client.")
        }
        guard record.status != .used else { throw Self.invalidGrant("The device code was already used.") }
        guard record.expiresAt > now else { throw BrokerError(.expiredToken, .badRequest, "The device code has expired; start again.") }
        let tooSoon = record.lastPolledAt.map { now.timeIntervalSince($0) < TimeInterval(record.interval) } ?? false
        if tooSoon { record.interval += 5 }
        record.lastPolledAt = now
        let status = record.status
        // Tokens go out only to a poll that kept the interval; a hasty one keeps them for later.
        if status == .approved, !tooSoon { record.status = .used }
        // Two polls at once: the one that loses the race polled too fast by definition.
        guard try await store.updateDeviceAuthorization(record) else {
            throw BrokerError(.slowDown, .badRequest, "Poll no faster than every \(record.interval) seconds.")
        }
        if tooSoon { throw BrokerError(.slowDown, .badRequest, "Poll no faster than every \(record.interval) seconds.") }
        switch status {
        case .pending: throw BrokerError(.authorizationPending, .badRequest, "The person has not approved the device yet.")
        case .denied: throw BrokerError(.accessDenied, .badRequest, "The person refused the device.")
        case .used: throw Self.invalidGrant("The device code was already used.")
        case .approved: break
        }
        guard let accountID = record.accountID, let account = try await store.account(id: accountID) else {
            throw Self.invalidGrant("The account no longer exists.")
        }
        try account.refuseGrantIfDisabled()
        try await provisioned.refuseGrantUnlessProvisioned(account.id, app: app)
        // The app's rules hold at the moment tokens are issued: an identity its provider no longer
        // accepts, or an app that turned the grant off, gets nothing.
        var links = try await store.identityLinks(accountID: account.id)
        try await recheck(links: &links, identityProvider: record.identityProvider, account: account)
        let issued = try await tokens.issue(
            TokenIssuer.Grant(
                app: app, subject: account.id, accountID: account.id, scopes: record.scopes, methods: record.methods, identityProvider: record.identityProvider,
                authTime: record.authTime ?? now, refreshFamilyID: UUID().uuidString.lowercased(),
                profile: try await provisioned.adding(
                    groupsOf: account.id, to: Self.profile(of: account, links: links, identityProvider: record.identityProvider, scopes: record.scopes),
                    scopes: record.scopes, app: app.id),
                dpopJKT: dpopJKT,
                acr: AuthenticationLevel(methods: record.methods, identityProvider: record.identityProvider, plugins: plugins).rawValue
            )
        )
        try await store.appendAudit(
            AuditEvent(time: now, type: "signin.success", appID: app.id, accountID: account.id, providerID: record.identityProvider, details: ["grant": "device_code"])
        )
        return issued
    }
}
