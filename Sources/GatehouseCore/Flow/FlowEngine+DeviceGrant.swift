import Foundation

/// The verification page of the device grant (RFC 8628 section 3.3): the person types the user code
/// (or follows `verification_uri_complete`), signs in through the app's normal browser flow (single
/// sign-on, second factors and profile confirmation included), and always confirms the device's app,
/// scopes and code on the consent page before the device gets anything (section 5.4: a user code
/// sent by someone else must not approve their device unnoticed). The approval is one
/// compare-and-swap on the device authorization, so a user code approves once, on any node.
extension FlowEngine {
    /// Starts the browser flow that approves the device authorization of `typedCode`. Each code tried
    /// reserves an attempt of the address first (so a burst of parallel guesses cannot pass the
    /// limit); a right code gives it back, a wrong one keeps it as a failure. An address with the
    /// top-level `lockout.maxFailedAuthenticationsPerIP` failures in `failureWindow` is refused (429)
    /// until the window ends.
    public func startDeviceVerification(
        userCode typedCode: String, binding: BrowserBinding, clientIP: String?, sessionCookie: String?, userAgent: String?, language: String? = nil
    ) async throws -> (outcome: FlowOutcome, app: App) {
        let now = clock.now
        let window = defaultLockout.failureWindow.timeInterval
        let addressKey = "user_code:ip:" + (clientIP.map(FailedAuthenticationLimit.addressBucket) ?? FailedAuthenticationLimit.unknownAddress)
        switch try await store.reserveAttempt(
            key: addressKey, now: now, window: window, threshold: defaultLockout.maxFailedAuthenticationsPerIP, lockDuration: { _ in window }
        ) {
        case .allowed: break
        case .locked(let until), .lockedNow(let until):
            metrics.refused(reason: "user_code_rate")
            throw AttemptGuard.addressBlocked(until: until, now: now)
        }
        guard let normalized = UserCode.normalized(typedCode), let record = try await store.deviceAuthorization(userCodeDigest: UserCode.digest(normalized)),
            record.status == .pending, record.expiresAt > now
        else {
            throw BrokerError(.invalidGrant, .badRequest, "That code is not valid, or it expired or was used. Check the code your device shows.")
        }
        try await store.releaseAttempt(key: addressKey)
        guard let app = try await store.app(id: record.appID), !app.disabled, app.policy.deviceAuthorizationGrant else {
            throw BrokerError(.unauthorizedClient, .forbidden, "The app that asked for this code may no longer use device sign-in.")
        }
        var request = AuthorizationRequest(clientID: app.id, redirectURI: "", scopes: record.scopes, state: nil, nonce: nil, codeChallenge: "")
        request.device = DeviceVerification(deviceCodeDigest: record.deviceCodeDigest, userCode: UserCode.display(normalized))
        return (
            try await startAuthorization(
                app: app, request: request, binding: binding, clientIP: clientIP, sessionCookie: sessionCookie, userAgent: userAgent, language: language),
            app
        )
    }

    /// The device authorization a verification flow approves, if it still waits for the person; nil
    /// when it expired, was used or was refused meanwhile.
    func pendingDeviceAuthorization(_ verification: DeviceVerification, appID: String) async throws -> DeviceAuthorizationRecord? {
        guard let record = try await store.deviceAuthorization(deviceCodeDigest: verification.deviceCodeDigest), record.appID == appID,
            record.status == .pending, record.expiresAt > clock.now
        else { return nil }
        return record
    }

    /// Changes a pending device authorization with `change`. The device's polls write the record too
    /// (its last poll, its interval), so a lost compare-and-swap is read again and tried again while
    /// the authorization still waits; false once it does not.
    func settleDeviceAuthorization(_ verification: DeviceVerification, appID: String, _ change: (inout DeviceAuthorizationRecord) -> Void) async throws -> Bool {
        for _ in 0..<10 {
            guard var record = try await pendingDeviceAuthorization(verification, appID: appID) else { return false }
            change(&record)
            if try await store.updateDeviceAuthorization(record) { return true }
        }
        return false
    }

    /// The end of a verification page's flow, once the person confirmed: the device authorization is
    /// approved for the account (if it still waits), and the browser goes to the result page.
    func approveDeviceAuthorization(_ verification: DeviceVerification, flow: FlowRecord, account: Account, identity: ExternalIdentity, authTime: Date) async throws
        -> FlowOutcome
    {
        let now = clock.now
        var scopes: [String] = []
        let approved = try await settleDeviceAuthorization(verification, appID: flow.appID) { record in
            record.status = .approved
            record.accountID = account.id
            record.methods = flow.methods
            record.identityProvider = identity.providerID
            record.authTime = authTime
            record.approvedAt = now
            scopes = record.scopes
        }
        guard approved else { throw BrokerError(.invalidGrant, .badRequest, "The device code expired or was used meanwhile; start again on the device.") }
        try await audit("device.approved", flow: flow, outcome: nil, details: ["scopes": scopes.joined(separator: " ")])
        return .authorized(flowID: flow.id, redirect: tokens.issuer + OAuthService.verificationPath + "?result=approved")
    }

    /// The person refused the device on the confirmation page: the device hears `access_denied`.
    func denyDeviceAuthorization(_ verification: DeviceVerification, flow: FlowRecord) async throws -> String {
        if try await settleDeviceAuthorization(verification, appID: flow.appID, { $0.status = .denied }) {
            try await audit("device.denied", flow: flow, outcome: ErrorCode.accessDenied.rawValue)
        }
        return tokens.issuer + OAuthService.verificationPath + "?result=denied"
    }
}
