import Foundation
import GatehousePluginKit

/// Redeeming activation data once the payload and its PIN passed: the app's choice where the outcome
/// offers one (`activation_choice`), then the flow handed over to the app's device-key provider (to
/// register this installation's key, or for a merge to sign in with the key it has), and only when
/// every step and factor has passed does anything change: the activation is used up, other
/// installations are retired, an address joins the account. The provider's flow state is the
/// `ActivationRedemption` throughout.
extension ActivationProvider {
    /// The activation was claimed for this flow: `new` goes on to the device key; the other outcomes
    /// wait for the app's choice.
    func redeemed(_ claimed: ActivationRedemption, in context: FlowContext) async throws -> FlowStep {
        var redemption = claimed
        redemption.providerID = id
        // Before anything is used up or offered: the key step must be possible at all.
        guard context.app.identityProviders.contains(redemption.keyProviderID) else {
            throw BrokerError(.providerNotAllowed, .forbidden, "This app does not allow '\(redemption.keyProviderID)', which registers the device keys of activations.")
        }
        try await auditFlow("activation.redeemed", redemption, context, details: ["outcome": redemption.outcome.rawValue])
        if redemption.outcome == .new { return try keyStep(redemption) }

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
        return .challenge(Challenge(type: Self.choiceChallenge.type, fields: fields), state: redemption)
    }

    /// The app's answer to `activation_choice`. Choices are not guesses: a refusal here is an
    /// `invalid_answer` and leaves the person on this choice.
    func answerChoice(_ redemption: ActivationRedemption, answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        var redemption = redemption
        let allowed = redemption.outcome.choices
        guard let choice = ActivationChoice(rawValue: try answer.string("choice")), allowed.contains(choice) else {
            throw BrokerError.invalidAnswer("'choice' must be one of: \(allowed.map(\.rawValue).joined(separator: ", ")).")
        }
        redemption.choice = choice
        switch choice {
        case .override, .reEnrol, .replace, .merge:
            return try keyStep(redemption)
        case .stop:
            return .stop(state: Stopping(redemption: redemption), details: ["activation": redemption.summary])
        case .newActivation:
            guard case .account = redemption.target else { throw BrokerError.internalFailure("A new activation was offered without an account.") }
            let pin = try answer.string("pin")
            // Checked before the flow ends, so that a refused answer leaves the person on this choice.
            try checkPIN(pin, app: context.app)
            var sendTo: EmailAddress?
            if let text = answer.values["email"]?.stringValue, !text.isEmpty {
                guard let address = EmailAddress(text) else { throw BrokerError.invalidAnswer("'email' is not an email address.") }
                sendTo = address
            }
            let alias = try answer.values["alias"]?.stringValue.map(DeviceFacts.checkedAlias)
            guard let alias else { throw BrokerError.invalidAnswer("A new activation needs an 'alias': the name of the device it is for.") }
            let stopping = Stopping(redemption: redemption, newActivation: Stopping.NewActivation(pin: pin, alias: alias, sendTo: sendTo))
            return .stop(state: stopping, details: [:])
        }
    }

    /// What a choice that ends the flow without tokens (`stop`, `new_activation`) does once the engine
    /// has claimed the flow; never stored (the new activation's PIN is in it).
    struct Stopping: Codable {
        struct NewActivation: Codable {
            var pin: String
            var alias: String
            var sendTo: EmailAddress?
        }
        var redemption: ActivationRedemption
        var newActivation: NewActivation?
    }

    /// The flow ended without tokens: the activation is used up all the same (it cannot be redeemed
    /// again), and for `new_activation` a new, additional one is issued first (so that one that could
    /// not be sent leaves the presented one usable). Answers the `activation` the app is told.
    public func stopping(in context: FlowContext) async throws -> [String: JSONValue] {
        let stopping = try context.state(Stopping.self)
        let redemption = stopping.redemption
        guard let new = stopping.newActivation, case .account(let accountID) = redemption.target else {
            try await endWithoutTokens(redemption, in: context)
            return ["activation": redemption.summary]
        }
        let issued = try await issue(
            ActivationRequest(accountID: accountID, pin: new.pin, alias: new.alias, sendTo: new.sendTo, additional: true), app: context.app, issuedBy: "account"
        )
        do {
            try await endWithoutTokens(redemption, in: context)
        } catch {
            // The presented activation was revoked meanwhile: the new one must not outlive that.
            _ = try? await revoke(issued.id, appID: context.app.id)
            throw error
        }
        var summary = redemption.summary.objectValue ?? [:]
        // Emailed data go to the address only; otherwise the app shows them (the person chose the PIN).
        var data = issued.json.objectValue ?? [:]
        if new.sendTo != nil { data = data.filter { ["id", "expiresAt", "sentTo"].contains($0.key) } }
        summary["newActivation"] = .object(data)
        return ["activation": .object(summary)]
    }

    /// Hands the flow over to the device-key provider: to register this installation's key (for the
    /// activation's account, or a new one), or for a merge to sign in with the key the installation has.
    func keyStep(_ redemption: ActivationRedemption) throws -> FlowStep {
        let purpose: FlowPurpose = redemption.choice == .merge ? .authenticate : .register
        return .handOver(
            HandOver(
                providerID: redemption.keyProviderID, state: redemption, purpose: purpose,
                account: purpose == .register ? redemption.accountID : nil,
                // The activation PIN is a knowledge factor of its own (RFC 8176 `pin`).
                methods: ["pin"], annotations: ["activation": redemption.summary]
            )
        )
    }

    /// Ends a flow whose activation ends without tokens (`stop`, `new_activation`): the activation is
    /// used up all the same, so that it cannot be redeemed again.
    func endWithoutTokens(_ redemption: ActivationRedemption, in context: FlowContext) async throws {
        guard let accountID = redemption.accountID else { throw BrokerError.internalFailure("An activation without an account ended early.") }
        try await finishRedemption(redemption, flowID: context.flowID, accountID: accountID)
        try await auditFlow("activation.completed", redemption, context, details: [:])
    }

    /// The device-key provider identified the installation's key (a new one, or for a merge the one
    /// the installation has): let it through, or refuse it (the person may answer with another key).
    public func resume(after identity: ExternalIdentity, in context: FlowContext) async throws -> FlowStep {
        let redemption = try context.state(ActivationRedemption.self)
        if redemption.choice == .merge {
            guard let keyID = identity.signInKeyID, let key = try await devices.signInKey(id: keyID), key.accountID == redemption.mergeAccountID,
                try await devices.installations(appID: context.app.id, installationID: redemption.device.installationID).contains(where: { $0.id == key.installationRef })
            else {
                throw BrokerError(.accessDenied, .forbidden, "To merge, sign in with the key this installation holds for its account.").because("merge_key_mismatch")
            }
            return .identified(identity)
        }
        guard let key = identity.newSignInKey else { throw BrokerError.internalFailure("An activation's key step identified no new key.") }
        guard key.device.installationID == redemption.device.installationID else {
            throw BrokerError.invalidAnswer("Register the key from the installation that redeemed the activation (the same installationID).")
        }
        // Refused now, while the person can still answer with another key; at completion it would
        // cost the activation.
        try await refuseTakenKey(key, redemption: redemption)
        guard case .newAccount(let email, _) = redemption.target, redemption.accountID == nil else { return .identified(identity) }
        // A temporary registration becomes an account named after its address. The address joins
        // the account when the flow completes, not before: an abandoned flow must not leave an
        // account holding it.
        var named = identity
        named.username = email.value
        return .identified(named)
    }

    /// At completion, after every factor and before the new key is stored: checks the key can be
    /// stored, uses the activation up and clears the way for the key (a re-enrolment's old keys).
    public func completing(_ completion: FlowCompletion) async throws {
        let redemption = try completion.state(ActivationRedemption.self)
        if let key = completion.newSignInKey { try await refuseTakenKey(key, redemption: redemption) }
        if completion.newSignInKey == nil, let keyID = completion.signInKeyID, try await devices.signInKey(id: keyID) == nil {
            throw BrokerError(.accessDenied, .forbidden, "The device key this sign-in used was removed; register the device again.").because("sign_in_key_removed")
        }
        if case .newAccount(let email, _) = redemption.target,
            try await accounts.identityLink(providerID: IdentityLink.enrolledAddressProvider(id), subject: email.value) != nil
        {
            // Another redemption for the same address finished first.
            throw BrokerError(.invalidActivation, .conflict, "This address has an account by now; ask for new activation data for it.")
                .publicly(because: "address_registered")
        }
        if redemption.choice == .merge, completion.account.id != redemption.mergeAccountID {
            throw BrokerError(.accessDenied, .forbidden, "To merge, sign in with the key this installation holds for its account.").because("merge_key_mismatch")
        }
        try await finishRedemption(redemption, flowID: completion.flowID, accountID: completion.account.id)
        if redemption.choice == .reEnrol, let ref = redemption.thisInstallation { _ = try await completion.retireInstallation(ref) }
    }

    /// At completion, once the new key is stored: does what the outcome and choice asked (overrides,
    /// the address of a temporary registration). Answers what the app is told (`activation`).
    public func completed(_ completion: FlowCompletion) async throws -> [String: JSONValue] {
        let redemption = try completion.state(ActivationRedemption.self)
        let account = completion.account
        var summary = redemption.summary.objectValue ?? [:]
        if case .newAccount(let email, let verified) = redemption.target {
            guard try await completion.linkAddress(email, verified: verified) else {
                throw BrokerError(.emailInUse, .conflict, "This email address belongs to another account.")
            }
            if redemption.choice == .merge {
                try await completion.audit("activation.merged", details: ["address": email.masked])
                summary["mergedAddress"] = .string(email.value)
            }
        }
        if redemption.choice == .override {
            // The other installations of this app go at once, with every token their keys got.
            let described = try await installationSummaries(redemption.otherInstallations, accountID: account.id)
            var overridden: [JSONValue] = []
            for (ref, description) in zip(redemption.otherInstallations, described) {
                guard let keyIDs = try await completion.retireInstallation(ref) else { continue }
                overridden.append(description)
                try await completion.audit("activation.overridden", details: ["installation": ref, "keys": keyIDs.joined(separator: " ")])
            }
            summary["overridden"] = .array(overridden)
        }
        try await completion.audit("activation.completed", details: Self.details(of: redemption))
        return ["activation": .object(summary)]
    }

    /// A key registered already is refused, except the installation's own one a re-enrolment replaces.
    func refuseTakenKey(_ key: NewSignInKey, redemption: ActivationRedemption) async throws {
        guard let existing = try await devices.signInKey(id: key.keyID) else { return }
        if redemption.choice == .reEnrol, existing.installationRef == redemption.thisInstallation { return }
        throw BrokerError(.invalidKey, .conflict, "This public key is registered already; make a new key pair.").because("key_registered")
    }

    /// What the app is shown about installations an override would retire (never their ids' secrets).
    func installationSummaries(_ refs: [String], accountID: String) async throws -> [JSONValue] {
        let records = try await devices.devices(accountID: accountID)
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

    /// The audit details every activation event of a flow carries.
    static func details(of redemption: ActivationRedemption) -> [String: String] {
        var details = ["activation": redemption.activationID, "outcome": redemption.outcome.rawValue]
        if let choice = redemption.choice { details["choice"] = choice.rawValue }
        return details
    }

    /// An audit event of a flow before it was handed over (the device-key step audits through the
    /// completion's changes).
    func auditFlow(_ type: String, _ redemption: ActivationRedemption, _ context: FlowContext, details: [String: String]) async throws {
        var all = Self.details(of: redemption).merging(details) { _, new in new }
        if let ip = context.clientIP { all["clientIP"] = ip }
        try await audit.append(type, appID: context.app.id, accountID: redemption.accountID, details: all)
    }

    /// An activation's outcome that needs the app's choice (`re_activation`, `already_activated`,
    /// `merge`); `new` goes straight on to the device key.
    static let choiceChallenge = ChallengeDescription(
        type: "activation_choice",
        summary:
            "The activation was redeemed; choose how to go on: `override` or `new_activation` (re_activation), `re_enrol` or `stop` (already_activated), `merge` or `replace` (merge). `new_activation` takes a new activation `pin`, an `alias` and optionally a backup `email`.",
        title: "Activate this device", prompt: "This account is set up elsewhere already ({outcome}). Choose how to go on.", choice: true,
        elements: [
            .text("choice", label: "Choice", maxLength: 32),
            .secret("pin", label: "New activation PIN", autocomplete: "new-password", inputmode: "numeric", maxLength: 64, required: false),
            .text("alias", label: "Name of the new device", maxLength: 64, required: false),
            .email("email", label: "Backup email address for the new activation", maxLength: 254, required: false),
            .detail("activation", .object, "`outcome` (`re_activation`, `already_activated`, `merge`)."),
            .detail("outcome", .string, "The outcome again, as a plain field."), .detail("choices", .array, "The choices this outcome allows."),
            .detail("installations", .array, "re_activation: the installations an override would retire (`device`, `alias`, `platform`, `lastUsedAt`)."),
        ])
}
