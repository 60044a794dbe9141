import Foundation

/// The verification page of the device grant (RFC 8628 section 3.3): the person types the user code
/// (or follows `verification_uri_complete`), signs in through the app's normal browser flow (single
/// sign-on, second factors and profile confirmation included), and always confirms the device's app,
/// scopes and code on the consent page before the device gets anything (section 5.4: a user code
/// sent by someone else must not approve their device unnoticed). The approval is one
/// compare-and-swap on the device authorization, so a user code approves once, on any node.
extension FlowEngine {
    /// Starts the browser flow that approves the device authorization of `typedCode`. Wrong codes
    /// count against the address like failed client authentications (`user_code` door).
    public func startDeviceVerification(
        userCode typedCode: String, binding: BrowserBinding, clientIP: String?, sessionCookie: String?, userAgent: String?
    ) async throws -> (outcome: FlowOutcome, app: App) {
        let now = clock.now
        let (record, userCode) = try await clientFailures.guarded(.userCode, clientIP: clientIP, clientID: nil, policy: defaultLockout) {
            guard let normalized = UserCode.normalized(typedCode), let record = try await store.deviceAuthorization(userCodeDigest: UserCode.digest(normalized)),
                record.status == .pending, record.expiresAt > now
            else {
                throw BrokerError(.invalidGrant, .badRequest, "That code is not valid, or it expired or was used. Check the code your device shows.")
            }
            return (record, UserCode.display(normalized))
        }
        guard let app = try await store.app(id: record.appID), !app.disabled, app.policy.deviceAuthorizationGrant else {
            throw BrokerError(.unauthorizedClient, .forbidden, "The app that asked for this code may no longer use device sign-in.")
        }
        var request = AuthorizationRequest(clientID: app.id, redirectURI: "", scopes: record.scopes, state: nil, nonce: nil, codeChallenge: "")
        request.device = DeviceVerification(deviceCodeDigest: record.deviceCodeDigest, userCode: userCode)
        return (try await startAuthorization(app: app, request: request, binding: binding, clientIP: clientIP, sessionCookie: sessionCookie, userAgent: userAgent), app)
    }

    /// The end of a verification page's flow, once the person confirmed: the device authorization is
    /// approved for the account (if it still waits), and the browser goes to the result page.
    func approveDevice(_ verification: DeviceVerification, flow: FlowRecord, account: Account, identity: ExternalIdentity, authTime: Date) async throws -> FlowOutcome {
        let now = clock.now
        guard var record = try await store.deviceAuthorization(deviceCodeDigest: verification.deviceCodeDigest), record.appID == flow.appID,
            record.status == .pending, record.expiresAt > now
        else {
            throw BrokerError(.invalidGrant, .badRequest, "The device code expired or was used meanwhile; start again on the device.")
        }
        record.status = .approved
        record.accountID = account.id
        record.methods = flow.methods
        record.identityProvider = identity.providerID
        record.authTime = authTime
        record.approvedAt = now
        guard try await store.updateDeviceAuthorization(record) else {
            throw BrokerError(.invalidGrant, .badRequest, "The device code was used meanwhile; start again on the device.")
        }
        try await audit("device.approved", flow: flow, outcome: nil, details: ["scopes": record.scopes.joined(separator: " ")])
        return .authorized(flowID: flow.id, redirect: tokens.issuer + OAuthService.verificationPath + "?result=approved")
    }

    /// The person refused the device (or cancelled its sign-in): the device hears `access_denied`.
    func denyDevice(_ verification: DeviceVerification, flow: FlowRecord) async throws -> String {
        if var record = try await store.deviceAuthorization(deviceCodeDigest: verification.deviceCodeDigest), record.appID == flow.appID,
            record.status == .pending
        {
            record.status = .denied
            if try await store.updateDeviceAuthorization(record) {
                try await audit("device.denied", flow: flow, outcome: ErrorCode.accessDenied.rawValue)
            }
        }
        return tokens.issuer + OAuthService.verificationPath + "?result=denied"
    }
}
