import Foundation

/// Registrations that add to the account of someone signed in already, and the device sign-in keys a
/// provider verified. Nothing is written before every factor has passed: the flow carries the new
/// identity and key, and `complete` stores them.
extension FlowEngine {
    /// A registration started with an access token: the new identity will join that account (unless
    /// it is another account's already), once the app's second factor has passed as for any sign-in.
    func addToSignedInAccount(_ flow: FlowRecord, identity: ExternalIdentity, accountID: String, app: App, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        guard let account = try await store.account(id: accountID) else {
            throw BrokerError(.invalidToken, .unauthenticated, "The signed-in account no longer exists.")
        }
        try account.refuseSignInIfDisabled()
        if let owner = try await store.identityLink(providerID: identity.providerID, subject: identity.subject), owner.accountID != account.id {
            throw Self.identityTaken
        }
        if identity.isTest, !account.isTest {
            throw BrokerError(.accessDenied, .forbidden, "A test identity (a test registration key's) joins test accounts only.").publicly(
                because: "test_identity_for_real_account")
        }
        flow.accountID = account.id
        flow.accountCreated = false
        // The account page's sign-in passed the page's factors already; nothing else is asked.
        if flow.isEnrolment { return try await finishEnrolment(flow, app: app, account: account, identity: identity) }
        guard let factorID = app.policy.secondFactor(for: account) else { return try await complete(flow, app: app, account: account, dpopJKT: dpopJKT) }
        return try await beginFactor(flow, factorID: factorID, app: app, account: account, dpopJKT: dpopJKT)
    }

    static let identityTaken = BrokerError(.alreadyRegistered, .conflict, "This identity belongs to another account.")

    /// At completion, after every factor: links a signed-in registration's identity, stores a new
    /// sign-in key, and refuses a sign-in whose key was removed while the flow waited.
    func storeNewCredentials(of flow: FlowRecord, identity: ExternalIdentity, app: App, account: Account) async throws {
        if flow.signedInAccountID != nil {
            guard try await store.addIdentityLink(identity, accountID: account.id, now: clock.now) else { throw Self.identityTaken }
            var event = auditEvent("account.identity_added", flow: flow, outcome: nil, details: ["subject": identity.subject])
            event.accountID = account.id
            try await store.appendAudit(event)
        }
        if let key = identity.newSignInKey {
            try await registerSignInKey(key, flow: flow, app: app, account: account)
        } else if let keyID = flow.signInKeyID, try await store.signInKey(id: keyID) == nil {
            throw BrokerError(.accessDenied, .forbidden, "The device key this sign-in used was removed; register the device again.").because("sign_in_key_removed")
        }
    }

    /// Stores a verified sign-in key with its device and installation. A reinstall of the app on the
    /// same device retires the old installation: its keys are gone and what they issued is revoked.
    func registerSignInKey(_ key: NewSignInKey, flow: FlowRecord, app: App, account: Account) async throws {
        let registered = try await store.registerSignInKey(key, accountID: account.id, appID: app.id, providerID: flow.providerID, now: clock.now)
        if !registered.retiredKeyIDs.isEmpty {
            try await revoker.signInKeys(registered.retiredKeyIDs)
            var event = auditEvent(
                "device.installation_replaced", flow: flow, outcome: nil,
                details: ["device": registered.device.id, "installation": registered.installation.id, "retiredKeys": registered.retiredKeyIDs.joined(separator: " ")]
            )
            event.accountID = account.id
            try await store.appendAudit(event)
        }
        var details = [
            "device": registered.device.id, "installation": registered.installation.id, "key": registered.key.id,
            "platform": registered.device.platform.rawValue, "newDevice": String(registered.newDevice),
        ]
        if let attestation = key.attestation { details["attestation"] = attestation }
        for (name, value) in key.attestationFacts ?? [:] { details["attestation." + name] = value }
        var event = auditEvent("device.registered", flow: flow, outcome: nil, details: details)
        event.accountID = account.id
        try await store.appendAudit(event)
    }

    /// The digest the tokens of this flow carry for its installation: the one a registered key came
    /// from; none for a sign-in with a registered key (its installation is the key's); else the one
    /// the flow named at its start.
    func installationDigest(of flow: FlowRecord, app: App) -> String? {
        let installationID: String?
        if let key = flow.identity?.newSignInKey {
            installationID = key.device.installationID
        } else if flow.signInKeyID != nil {
            installationID = nil
        } else {
            installationID = flow.installationID
        }
        return installationID.map { RegistrationState.installationDigest(appID: app.id, installationID: $0) }
    }
}
