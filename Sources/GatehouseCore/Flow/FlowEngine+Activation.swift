import Foundation

/// Redeeming activation data: after the activation provider checked the payload and its PIN, the flow
/// runs the outcome's steps — the installation's device key (through the app's device-key provider),
/// the app's choice where the outcome offers one, a sign-in for a merge — and only when every step
/// and factor has passed does anything change: the activation is used up, other installations are
/// overridden, an address is merged.
extension FlowEngine {
    /// The activation provider's verdict: `new` goes on to the device key; the other outcomes wait for
    /// the app's choice.
    func redeemed(_ flow: FlowRecord, redemption: ActivationRedemption, app: App, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        guard flow.phase == .identify, flow.activation == nil, plugins.identityProviders[flow.providerID]?.activationRedeemer != nil else {
            throw BrokerError.internalFailure("Only an activation provider redeems activations, once per flow.")
        }
        guard !flow.stateless else { throw BrokerError.stateless(.accountCredentials) }
        guard app.policy.identityProviders.contains(redemption.keyProviderID), plugins.identityProviders[redemption.keyProviderID] != nil else {
            throw BrokerError(
                .providerNotAllowed, .forbidden, "This app does not allow '\(redemption.keyProviderID)', which registers the device keys of activations."
            )
        }
        var redemption = redemption
        redemption.providerID = flow.providerID
        flow.activation = redemption
        // The activation PIN is a knowledge factor of its own (RFC 8176 `pin`).
        flow.methods += ["pin", flow.providerID]
        try await auditActivation("activation.redeemed", flow: flow, activation: redemption, details: ["outcome": redemption.outcome.rawValue])
        if redemption.outcome == .new { return try await beginActivatedKeyStep(flow, app: app, purpose: .register, dpopJKT: dpopJKT) }

        var fields: [String: JSONValue] = [
            "activation": redemption.summary, "outcome": .string(redemption.outcome.rawValue),
            "choices": .array(redemption.outcome.choices.map { .string($0.rawValue) }),
        ]
        if redemption.outcome == .reActivation, let accountID = redemption.accountID {
            // What the person needs to choose (which devices an override retires), without their ids.
            fields["installations"] = .array(
                try await installationSummaries(redemption.otherInstallations, accountID: accountID).map { summary in
                    .object((summary.objectValue ?? [:]).filter { !["installation", "device"].contains($0.key) })
                }
            )
        }
        flow.phase = .activationChoice
        flow.pluginState = FlowState()
        flow.challenge = Challenge(type: ChallengeDescription.activationChoice.type, fields: fields)
        try await save(&flow)
        return .challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt)
    }

    /// The app's answer to `activation_choice`.
    func answerActivationChoice(_ flow: FlowRecord, app: App, answer: ChallengeResponse, dpopJKT: String?) async throws -> FlowOutcome {
        guard var activation = flow.activation else { throw BrokerError.internalFailure("A flow waits for an activation choice without an activation.") }
        let allowed = activation.outcome.choices
        guard let choice = ActivationChoice(rawValue: try answer.string("choice")), allowed.contains(choice) else {
            throw BrokerError.invalidAnswer("'choice' must be one of: \(allowed.map(\.rawValue).joined(separator: ", ")).")
        }
        activation.choice = choice
        var flow = flow
        flow.activation = activation
        switch choice {
        case .override, .reEnrol, .replace:
            return try await beginActivatedKeyStep(flow, app: app, purpose: .register, dpopJKT: dpopJKT)
        case .merge:
            return try await beginActivatedKeyStep(flow, app: app, purpose: .authenticate, dpopJKT: dpopJKT)
        case .stop:
            try await endWithoutTokens(flow, activation: activation)
            return .stopped(flowID: flow.id, status: "stopped", details: ["activation": activation.summary])
        case .newActivation:
            guard case .account(let accountID) = activation.target else { throw BrokerError.internalFailure("A new activation was offered without an account.") }
            let pin = try answer.string("pin")
            // Checked before the flow ends, so that a refused PIN leaves the person on this choice.
            try activationProvider(activation).checkPIN(pin, app: app)
            var sendTo: EmailAddress?
            if let text = answer.values["email"]?.stringValue, !text.isEmpty {
                guard let address = EmailAddress(text) else { throw BrokerError.invalidAnswer("'email' is not an email address.") }
                sendTo = address
            }
            let alias = try answer.values["alias"]?.stringValue.map(DeviceFacts.checkedAlias)
            guard let alias else { throw BrokerError.invalidAnswer("A new activation needs an 'alias': the name of the device it is for.") }
            try await endWithoutTokens(flow, activation: activation)
            let issued = try await activationProvider(activation).issue(
                ActivationRequest(accountID: accountID, pin: pin, alias: alias, sendTo: sendTo, additional: true), app: app, issuedBy: "account"
            )
            var summary = activation.summary.objectValue ?? [:]
            // Emailed data go to the address only; otherwise the app shows them (the person chose the PIN).
            var data = issued.json.objectValue ?? [:]
            if sendTo != nil { data = data.filter { ["id", "expiresAt", "sentTo"].contains($0.key) } }
            summary["newActivation"] = .object(data)
            return .stopped(flowID: flow.id, status: "stopped", details: ["activation": .object(summary)])
        }
    }

    /// Ends a flow whose activation ends without tokens (`stop`, `new_activation`): the activation is
    /// used up all the same, so that it cannot be redeemed again.
    private func endWithoutTokens(_ flow: FlowRecord, activation: ActivationRedemption) async throws {
        guard let accountID = activation.accountID else { throw BrokerError.internalFailure("An activation without an account ended early.") }
        guard try await store.deleteFlow(id: flow.id, version: flow.version) else {
            throw BrokerError(.flowConflict, .conflict, "The flow was answered concurrently; start a new one if it did not finish.")
        }
        try await activationProvider(activation).finishRedemption(activation, flowID: flow.id, accountID: accountID)
        var event = auditEvent("activation.completed", flow: flow, outcome: nil, details: Self.activationDetails(activation))
        event.accountID = accountID
        try await store.appendAudit(event)
    }

    /// Hands the flow to the device-key provider: to register this installation's key (`register`),
    /// or for a merge to sign in with the key the installation already has (`authenticate`).
    func beginActivatedKeyStep(_ flow: FlowRecord, app: App, purpose: FlowPurpose, dpopJKT: String?) async throws -> FlowOutcome {
        guard let activation = flow.activation else { throw BrokerError.internalFailure("No activation to go on with.") }
        var flow = flow
        flow.providerID = activation.keyProviderID
        flow.phase = .identify
        flow.purpose = purpose
        flow.signedInAccountID = purpose == .register ? activation.accountID : nil
        flow.pluginState = FlowState()
        let provider = try identityProvider(flow.providerID, allowedBy: app.policy, stateless: false)
        let request = flowRequest(for: flow)
        let step = try await provider.begin(request, in: stepContext(flowID: flow.id, app: app, request: request))
        return try await advance(flow, with: step, app: app, dpopJKT: dpopJKT)
    }

    /// The device-key provider identified the installation's key (a new one, or for a merge the one
    /// the installation has): the flow now knows its account.
    func identifiedAfterActivation(_ flow: FlowRecord, identity: ExternalIdentity, activation: ActivationRedemption, app: App, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        if flow.purpose == .authenticate {
            guard activation.choice == .merge, let keyID = identity.signInKeyID, let key = try await store.signInKey(id: keyID), key.accountID == activation.mergeAccountID,
                try await store.installations(appID: app.id, installationID: activation.device.installationID).contains(where: { $0.id == key.installationRef })
            else {
                throw BrokerError(.accessDenied, .forbidden, "To merge, sign in with the key this installation holds for its account.").because("merge_key_mismatch")
            }
            guard let account = try await store.account(id: key.accountID) else {
                throw BrokerError(.flowNotFound, .notFound, "The flow's account no longer exists; start a new flow.")
            }
            flow.accountID = account.id
            flow.accountCreated = false
            return try await continueWithFactor(flow, app: app, account: account, dpopJKT: dpopJKT)
        }
        guard let key = identity.newSignInKey else { throw BrokerError.internalFailure("An activation's key step identified no new key.") }
        guard key.device.installationID == activation.device.installationID else {
            throw BrokerError.invalidAnswer("Register the key from the installation that redeemed the activation (the same installationID).")
        }
        // Refused now, while the person can still answer with another key; at completion it would
        // cost the activation.
        try await refuseTakenKey(key, activation: activation)
        if let accountID = flow.signedInAccountID {
            return try await addToSignedInAccount(flow, identity: identity, accountID: accountID, app: app, dpopJKT: dpopJKT)
        }
        guard case .newAccount(let email, _) = activation.target else { throw BrokerError.internalFailure("An activation lost its account.") }
        if try await store.identityLink(providerID: identity.providerID, subject: identity.subject) != nil { throw Self.identityTaken }
        // A temporary registration becomes an account named after its address.
        var named = identity
        named.username = email.value
        var (account, created) = try await IdentityLinker(store: store, clock: clock).link(
            named, audit: auditEvent("account.created", flow: flow, outcome: nil, details: ["by": "activation"])
        )
        guard created else { throw Self.identityTaken }
        account = try await awaitingProfileConfirmation(account, app: app)
        // The address joins the account when the flow completes (`finishActivation`), not before:
        // an abandoned flow must not leave an account holding it.
        flow.accountID = account.id
        flow.accountCreated = true
        return try await continueWithFactor(flow, app: app, account: account, dpopJKT: dpopJKT)
    }

    /// The app's second factor for the account, or the end of the flow.
    private func continueWithFactor(_ flow: FlowRecord, app: App, account: Account, dpopJKT: String?) async throws -> FlowOutcome {
        guard let factorID = app.policy.secondFactor(for: account) else { return try await complete(flow, app: app, account: account, dpopJKT: dpopJKT) }
        return try await beginFactor(flow, factorID: factorID, app: app, account: account, dpopJKT: dpopJKT)
    }

    /// At completion, after every factor and before the new key is stored: checks the key can be
    /// stored, uses the activation up and clears the way for the key (a re-enrolment's old keys).
    func prepareActivation(_ activation: ActivationRedemption, flow: FlowRecord, account: Account) async throws {
        if let key = flow.identity?.newSignInKey { try await refuseTakenKey(key, activation: activation) }
        if flow.identity?.newSignInKey == nil, let keyID = flow.signInKeyID, try await store.signInKey(id: keyID) == nil {
            throw BrokerError(.accessDenied, .forbidden, "The device key this sign-in used was removed; register the device again.").because("sign_in_key_removed")
        }
        if case .newAccount(let email, _) = activation.target,
            try await store.identityLink(providerID: IdentityLink.enrolledAddressProvider(activation.providerID), subject: email.value) != nil
        {
            // Another redemption for the same address finished first.
            throw BrokerError(.invalidActivation, .conflict, "This address has an account by now; ask for new activation data for it.")
                .publicly(because: "address_registered")
        }
        try await activationProvider(activation).finishRedemption(activation, flowID: flow.id, accountID: account.id)
        if activation.choice == .reEnrol, let ref = activation.thisInstallation,
            let keyIDs = try await store.removeInstallation(id: ref, accountID: account.id, now: clock.now)
        {
            try await revoker.signInKeys(keyIDs)
        }
    }

    /// At completion, once the new key is stored: does what the outcome and choice asked (overrides,
    /// the address of a temporary registration). Answers what the app is told (`activation` in the
    /// completed answer).
    func finishActivation(_ activation: ActivationRedemption, flow: FlowRecord, app: App, account: Account) async throws -> JSONValue {
        var summary = activation.summary.objectValue ?? [:]
        if case .newAccount(let email, let verified) = activation.target, activation.choice != .merge {
            guard try await store.addIdentityLink(Self.addressIdentity(email, verified: verified, activation: activation), accountID: account.id, now: clock.now) else {
                throw BrokerError(.emailInUse, .conflict, "This email address belongs to another account.")
            }
        }
        switch activation.choice {
        case .override:
            // The other installations of this app go at once, with every token their keys got.
            let described = try await installationSummaries(activation.otherInstallations, accountID: account.id)
            var overridden: [JSONValue] = []
            for (ref, description) in zip(activation.otherInstallations, described) {
                guard let keyIDs = try await store.removeInstallation(id: ref, accountID: account.id, now: clock.now) else { continue }
                try await revoker.signInKeys(keyIDs)
                overridden.append(description)
                var event = auditEvent("activation.overridden", flow: flow, outcome: nil, details: ["installation": ref, "keys": keyIDs.joined(separator: " ")])
                event.accountID = account.id
                try await store.appendAudit(event)
            }
            summary["overridden"] = .array(overridden)
        case .merge:
            guard case .newAccount(let email, let verified) = activation.target else { break }
            guard try await store.addIdentityLink(Self.addressIdentity(email, verified: verified, activation: activation), accountID: account.id, now: clock.now) else {
                throw BrokerError(.emailInUse, .conflict, "This email address belongs to another account.")
            }
            var event = auditEvent("activation.merged", flow: flow, outcome: nil, details: ["address": email.masked])
            event.accountID = account.id
            try await store.appendAudit(event)
            summary["mergedAddress"] = .string(email.value)
        case .reEnrol, .replace, .newActivation, .stop, nil:
            break
        }
        var event = auditEvent("activation.completed", flow: flow, outcome: nil, details: Self.activationDetails(activation))
        event.accountID = account.id
        try await store.appendAudit(event)
        return .object(summary)
    }

    /// A key registered already is refused, except the installation's own one a re-enrolment replaces.
    func refuseTakenKey(_ key: NewSignInKey, activation: ActivationRedemption) async throws {
        guard let existing = try await store.signInKey(id: key.keyID) else { return }
        if activation.choice == .reEnrol, existing.installationRef == activation.thisInstallation { return }
        throw BrokerError(.invalidKey, .conflict, "This public key is registered already; make a new key pair.").because("key_registered")
    }

    /// The address of a temporary registration as an identity of the account: linked under the
    /// activation provider's enrolled-address id, so it counts as the account's address (verified when
    /// the activation data went to it) but never signs anyone in by itself.
    static func addressIdentity(_ email: EmailAddress, verified: Bool, activation: ActivationRedemption) -> ExternalIdentity {
        ExternalIdentity(
            providerID: IdentityLink.enrolledAddressProvider(activation.providerID), subject: email.value, username: email.value,
            claims: IdentityClaims(email: email.value, emailVerified: verified)
        )
    }

    /// An account made by a flow of an app that asks for profile confirmation waits for it.
    func awaitingProfileConfirmation(_ account: Account, app: App) async throws -> Account {
        guard app.policy.confirmProfile else { return account }
        var account = account
        account.profilePending = true
        _ = try await store.updateAccountProfile(id: account.id, profile: account.profile, pending: true)
        return account
    }

    /// What the app is shown about installations an override would retire (never their ids' secrets).
    func installationSummaries(_ refs: [String], accountID: String) async throws -> [JSONValue] {
        let records = try await store.devices(accountID: accountID)
        let time = ISO8601DateFormatter()
        return refs.map { ref in
            guard let record = records.first(where: { $0.installations.contains { $0.id == ref } }),
                let installation = record.installations.first(where: { $0.id == ref })
            else { return ["installation": .string(ref)] }
            return [
                "installation": .string(ref), "device": .string(record.device.id), "alias": .string(record.device.alias),
                "platform": .string(record.device.platform.rawValue), "lastUsedAt": installation.lastUsedAt.map { .string(time.string(from: $0)) } ?? .null,
            ]
        }
    }

    func activationProvider(_ activation: ActivationRedemption) throws -> any ActivationRedeeming {
        guard let provider = plugins.identityProviders[activation.providerID]?.activationRedeemer else {
            throw BrokerError(.providerNotAllowed, .forbidden, "The activation provider '\(activation.providerID)' is no longer configured.")
        }
        return provider
    }

    static func activationDetails(_ activation: ActivationRedemption) -> [String: String] {
        var details = ["activation": activation.activationID, "outcome": activation.outcome.rawValue]
        if let choice = activation.choice { details["choice"] = choice.rawValue }
        return details
    }

    private func auditActivation(_ type: String, flow: FlowRecord, activation: ActivationRedemption, details: [String: String]) async throws {
        var event = auditEvent(type, flow: flow, outcome: nil, details: Self.activationDetails(activation).merging(details) { _, new in new })
        event.accountID = activation.accountID
        try await store.appendAudit(event)
    }
}
