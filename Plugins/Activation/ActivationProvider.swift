import Foundation
import GatehousePluginKit
import GatehouseSupport

/// One `activation` instance: issues activations (for administrators, an app's back end, a person
/// asking for another one, an accepted invitation) and redeems them in flows. Redeeming checks the
/// payload, then the activation PIN under lockouts (per activation and per account or invited
/// address), claims the activation for the flow, and goes on by the outcome
/// (`ActivationProvider+Redemption`).
public struct ActivationProvider: IdentityProvider {
    public let id: String
    let config: ActivationPlugin.Config
    let environment: PluginEnvironment
    let book: ActivationBook
    let devices: DeviceDirectory
    let accounts: AccountDirectory
    let apps: AppDirectory
    let audit: AuditLog

    /// What a redemption answers (a choice, a stopped flow with new activation data) is for an app
    /// to act on: no browser page runs it. It hands its flows over to the device-key provider.
    public var traits: PluginTraits { PluginTraits(registration: .device, flowAPIOnly: true) }

    init(
        id: String, config: ActivationPlugin.Config, environment: PluginEnvironment, book: ActivationBook, devices: DeviceDirectory, accounts: AccountDirectory,
        apps: AppDirectory, audit: AuditLog
    ) {
        self.id = id
        self.config = config
        self.environment = environment
        self.book = book
        self.devices = devices
        self.accounts = accounts
        self.apps = apps
        self.audit = audit
    }

    var now: Date { environment.clock.now }

    // MARK: - Redeeming

    public func begin(in context: FlowContext) async throws -> FlowStep {
        guard context.purpose == .authenticate, context.signedInAccountID == nil else {
            throw BrokerError(.invalidRequest, .badRequest, "Activation data are redeemed with purpose authenticate and no access token.")
        }
        let rules = try settings(for: context.app).pin
        return .challenge(
            Challenge(
                type: Self.activationChallenge.type,
                fields: ["pinMinLength": .number(Double(rules.minLength)), "pinMaxLength": .number(Double(rules.maxLength))]
            ))
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        // After the payload was redeemed, the state holds the redemption waiting for the app's choice.
        if context.hasState { return try await answerChoice(try context.state(ActivationRedemption.self), answer: answer, in: context) }
        guard let payload = ActivationPayload(try answer.string("activation")) else {
            throw BrokerError.invalidAnswer("'activation' must be the activation data (the payload or the deep link that carries it).")
        }
        let pin = try answer.string("pin")
        let facts = try DeviceFacts(answer: answer)
        // An unknown id and a wrong secret read the same, and count like a wrong answer.
        let unknown = BrokerError(.invalidActivation, .failedAttempt, "These activation data are not valid.").because("unknown_activation")
        guard let stored = try await book.activation(payload.id), stored.value.appID == context.app.id,
            SecretDigest.constantTimeEquals(SecretDigest.sha256Hex(payload.secret), stored.value.secretDigest)
        else { throw unknown }
        let record = stored.value
        try refuseIfNotRedeemable(record, flowID: context.flowID)

        do {
            try await environment.lockouts.guess(Self.lockKeys(record).map { ($0, "This activation") }, rule: config.lockout) {
                () async throws -> LockoutBook.Guess<Void> in
                try await book.verify(pin, activationID: record.id, hash: record.pinHash)
                    ? .right(()) : .wrong(BrokerError(.invalidPIN, .failedAttempt, "That activation PIN is not right."))
            }
        } catch let locked as BrokerError where locked.code == .lockedOut && locked.permanent && locked.countsAsWrongAnswer {
            try await lockForGood(record)
            throw locked
        }

        // Of two installations redeeming at the same instant, one claims it; the other is refused.
        let until = now.addingTimeInterval(context.app.flowLifetime.timeInterval)
        let claimed = try await book.update(record.id) { current in
            // The same secret as checked: a resend meanwhile retired the payload this answer brought.
            guard current.state == .pending, current.expiresAt > now, current.secretDigest == record.secretDigest,
                current.claim.map({ $0.until <= now || $0.flowID == context.flowID }) ?? true
            else { return nil }
            var changed = current
            changed.claim = ActivationRecord.Claim(flowID: context.flowID, until: until)
            return changed
        }
        guard let claimed else {
            throw BrokerError(.activationInUse, .conflict, "These activation data are being redeemed on another installation right now.").endingFlow()
        }
        return try await redeemed(try await outcome(of: claimed, facts: facts, app: context.app), in: context)
    }

    /// Refusals that need no PIN: the activation was used, revoked, locked or has expired, or
    /// another flow holds it.
    func refuseIfNotRedeemable(_ record: ActivationRecord, flowID: String) throws {
        func refused(_ reason: String, _ message: String) -> BrokerError {
            BrokerError(.invalidActivation, .badRequest, message).publicly(because: reason).endingFlow()
        }
        switch record.state {
        case .redeemed: throw refused("activation_used", "These activation data were used already; ask for new ones.")
        case .revoked: throw refused("activation_revoked", "These activation data were revoked; ask for new ones.")
        case .locked: throw refused("activation_locked", "Too many wrong PINs locked these activation data for good; ask for new ones.")
        case .pending: break
        }
        if record.expiresAt <= now { throw refused("activation_expired", "These activation data have expired; ask for new ones.") }
        if let claim = record.claim, claim.until > now, claim.flowID != flowID {
            throw BrokerError(.activationInUse, .conflict, "These activation data are being redeemed on another installation right now.").endingFlow()
        }
    }

    /// Wrong PINs count per activation and per person (the account, or the invited address).
    static func lockKeys(_ record: ActivationRecord) -> [String] {
        ["activation:\(record.id)"] + (record.accountID.map { ["account:\($0)"] } ?? record.email.map { ["address:\($0.value)"] } ?? [])
    }

    /// A permanent lock ends the activation: a new one must be issued (once an administrator lifted
    /// the account's lock).
    func lockForGood(_ record: ActivationRecord) async throws {
        _ = try await book.update(record.id) { current in
            guard current.state == .pending else { return nil }
            var changed = current
            changed.state = .locked
            return changed
        }
        try await audit.append("activation.locked", appID: record.appID, accountID: record.accountID, details: ["activation": record.id])
    }

    /// Which of the four situations the installation is in.
    func outcome(of record: ActivationRecord, facts: DeviceFacts, app: AppView) async throws -> ActivationRedemption {
        let here = try await devices.installations(appID: app.id, installationID: facts.installationID)
        let target = try await target(of: record, app: app)
        var redemption = ActivationRedemption(
            activationID: record.id, keyProviderID: config.deviceKeys, target: target, outcome: .new, device: facts, alias: record.alias)
        switch target {
        case .account(let accountID):
            if let mine = here.first(where: { $0.accountID == accountID }) {
                redemption.outcome = .alreadyActivated
                redemption.thisInstallation = mine.id
            } else if !record.additional {
                let others = try await devices.devices(accountID: accountID).flatMap { record in
                    record.installations.filter { installation in installation.appID == app.id && record.keys.contains { $0.installationRef == installation.id } }
                }
                if !others.isEmpty {
                    redemption.outcome = .reActivation
                    redemption.otherInstallations = others.map(\.id)
                }
            }
        case .newAccount:
            if let active = here.first {
                redemption.outcome = .merge
                redemption.mergeAccountID = active.accountID
            }
        }
        return redemption
    }

    /// The activation's account, or for a temporary registration a new one to make. Which account it
    /// is was decided when it was issued, never again: an address someone linked to their account
    /// since must not draw the activation into that account.
    func target(of record: ActivationRecord, app: AppView) async throws -> ActivationTarget {
        if let accountID = record.accountID {
            guard try await accounts.account(id: accountID) != nil else {
                throw BrokerError(.invalidActivation, .badRequest, "The account of these activation data no longer exists.").publicly(because: "account_deleted")
                    .endingFlow()
            }
            return .account(accountID)
        }
        guard let email = record.email else { throw BrokerError.internalFailure("An activation names neither an account nor an address.") }
        // Another activation (or a proven address elsewhere) made an account of it already.
        let linkedHere = try await accounts.identityLink(providerID: IdentityLink.enrolledAddressProvider(id), subject: email.value) != nil
        let heldElsewhere = try await holder(of: email, app: app) != nil
        if linkedHere || heldElsewhere {
            throw BrokerError(.invalidActivation, .badRequest, "This address has an account by now; ask for new activation data for it.")
                .publicly(because: "address_registered").endingFlow()
        }
        return .newAccount(email: email, verified: record.emailedTo == email)
    }

    /// The one account that holds the address as an address the broker itself proved (an emailed
    /// code, emailed activation data: `<instance>#address` links) with an instance this app uses;
    /// nil when none or several do. A provider's `email_verified` alone never decides whose an
    /// activation is: an upstream or a directory may vouch for an address it never checked.
    func holder(of address: EmailAddress, app: AppView) async throws -> String? {
        var holders: [String] = []
        for candidate in try await accounts.accountIDs(withVerifiedEmail: address.value) {
            let proven = try await accounts.identityLinks(accountID: candidate).filter { $0.providerID.hasSuffix("#address") }
            if app.verifiedEmails(in: proven).contains(address) { holders.append(candidate) }
        }
        return holders.count == 1 ? holders[0] : nil
    }

    /// Whether the account has to do with this very app: an installation of it, or an activation of
    /// it the account redeemed. An app's back end issues only for such accounts (a provider several
    /// apps share says nothing about this one).
    func knows(_ accountID: String, app: AppView) async throws -> Bool {
        if try await devices.devices(accountID: accountID).contains(where: { $0.installations.contains { $0.appID == app.id } }) { return true }
        return try await book.activations().contains { $0.appID == app.id && $0.redeemedBy == accountID }
    }

    /// Marks the activation this flow claimed as used: exactly one flow ever does. Refuses
    /// (`activation_invalid`) when the claim was lost (the activation was revoked meanwhile).
    func finishRedemption(_ redemption: ActivationRedemption, flowID: String, accountID: String) async throws {
        let done = try await book.update(redemption.activationID) { current in
            guard current.state == .pending, current.claim?.flowID == flowID else { return nil }
            var changed = current
            changed.state = .redeemed
            changed.claim = nil
            changed.redeemedAt = now
            changed.redeemedBy = accountID
            changed.outcome = redemption.outcome.rawValue
            return changed
        }
        guard done != nil else {
            throw BrokerError(.invalidActivation, .conflict, "These activation data were revoked or redeemed elsewhere meanwhile; ask for new ones.")
                .publicly(because: "activation_lost")
        }
    }

    // MARK: - Issuing

    /// This instance's settings for `app`.
    func settings(for app: AppView) throws -> ActivationSettings { try app.settings(ActivationSettings.self, for: id) }

    /// Checks an activation PIN a person chose against the app's PIN rules, before anything is issued.
    public func checkPIN(_ pin: String, app: AppView) throws { try settings(for: app).pin.check(pin) }

    /// Issues an activation for the app; the PIN (chosen or generated) follows the app's PIN policy.
    /// `issuedBy` `app` (the app's back end) is refused unless the app's settings allow it.
    public func issue(_ request: ActivationRequest, app: AppView, issuedBy: String) async throws -> IssuedActivation {
        let (issued, record) = try await issueRecording(request, app: app, issuedBy: issuedBy)
        var details = ["activation": record.id, "by": issuedBy]
        if let sentTo = issued.sentTo { details["sentTo"] = sentTo }
        if request.additional { details["additional"] = "true" }
        try await audit.append("activation.issued", appID: app.id, accountID: record.accountID, details: details)
        return issued
    }

    /// Issues without auditing (the admin API audits what its callers do).
    func issueRecording(_ request: ActivationRequest, app: AppView, issuedBy: String) async throws -> (IssuedActivation, ActivationRecord) {
        guard app.identityProviders.contains(id) else {
            throw BrokerError(.providerNotAllowed, .forbidden, "The app '\(app.id)' does not list the activation provider '\(id)'.")
        }
        let settings = try settings(for: app)
        guard issuedBy != "app" || settings.issueByApp else {
            throw BrokerError(.activationNotAllowed, .forbidden, "This app's settings do not let its back end issue activations (plugins.\(id).issueByApp).")
        }
        var accountID = request.accountID
        var email = request.email
        if let accountID {
            // Administrators may name any account; an app's back end only one the app knows (and
            // learns nothing about the others: the same answer as for no account at all).
            var known = try await accounts.account(id: accountID) != nil
            if known, issuedBy.hasPrefix("app") { known = try await knows(accountID, app: app) }
            guard known else {
                throw BrokerError(.notFound, .notFound, "No account '\(accountID)' for this app.", issues: [ConfigIssue(path: "account", "no such account")])
            }
        } else if let address = email {
            // An address an account holds, proven by the broker, is that account's.
            if let holder = try await holder(of: address, app: app) {
                accountID = holder
                email = nil
            }
        } else {
            throw BrokerError(.invalidRequest, .badRequest, "An activation is for an account or an email address.")
        }
        var generated: String?
        let pin: String
        if let chosen = request.pin {
            try settings.pin.check(chosen)
            pin = chosen
        } else {
            pin = ActivationBook.generatePIN(policy: settings.pin)
            generated = pin
        }
        let alias = try request.alias.map(DeviceFacts.checkedAlias)
        var sendTo: EmailAddress?
        // An app's back end that names an address reaches it only through that address: the data go
        // there, not back to the caller (so it learns neither whose address it is nor a way in).
        if request.send || (issuedBy.hasPrefix("app") && request.email != nil) {
            sendTo = try await address(for: request, accountID: accountID, email: email ?? request.email, app: app)
        }
        let payload = ActivationPayload.make()
        let issuedAt = now
        let record = ActivationRecord(
            id: payload.id, appID: app.id, accountID: accountID, email: accountID == nil ? email : nil, secretDigest: SecretDigest.sha256Hex(payload.secret),
            pinHash: try await book.hash(pin, activationID: payload.id), alias: alias, additional: request.additional, emailedTo: sendTo, state: .pending,
            claim: nil, issuedBy: issuedBy, createdAt: issuedAt, expiresAt: issuedAt.addingTimeInterval(settings.lifetime.timeInterval)
        )
        guard try await book.insert(record) else { throw BrokerError.internalFailure("An activation id was drawn twice.") }
        let link = try deepLink(payload, app: app)
        if let sendTo {
            do {
                try await environment.mailer.send(ActivationMail.activation(app: app, link: link, expiresAt: record.expiresAt, to: sendTo))
            } catch {
                _ = try? await book.storage.delete(key: ActivationRecord.key(record.id))
                environment.logger.warning("activation email not delivered", metadata: ["app": .string(app.id), "error": .string(String(describing: error))])
                throw BrokerError(.deliveryFailed, .unavailable, "The activation email could not be sent; try again later.")
            }
        }
        return (
            IssuedActivation(id: record.id, payload: payload.text, deepLink: link, generatedPIN: generated, expiresAt: record.expiresAt, sentTo: sendTo?.masked), record
        )
    }

    /// Where the activation data go: the named backup address, the invited address, or the account's
    /// verified address as this app trusts it.
    func address(for request: ActivationRequest, accountID: String?, email: EmailAddress?, app: AppView) async throws -> EmailAddress {
        if let sendTo = request.sendTo { return sendTo }
        if let email { return email }
        if let accountID, let address = app.verifiedEmails(in: try await accounts.identityLinks(accountID: accountID)).first { return address }
        throw BrokerError(.noVerifiedEmail, .badRequest, "The account has no verified email address to send the activation data to.")
    }

    /// The link the app opens: the app's deep link (or the broker's `/activate`) with the payload.
    func deepLink(_ payload: ActivationPayload, app: AppView) throws -> String {
        let base = try settings(for: app).deepLink ?? environment.issuer + "/activate"
        return "\(base)?activation=\(payload.text)"
    }

    /// Revokes a pending activation (an administrator, or the app forgetting it); false when it is
    /// not pending.
    func revoke(_ activationID: String, appID: String) async throws -> ActivationRecord? {
        try await book.update(activationID) { current in
            guard current.appID == appID, current.state == .pending else { return nil }
            var changed = current
            changed.state = .revoked
            changed.claim = nil
            return changed
        }
    }

    /// Sends an activation's data again: a new secret (the old payload stops working, since only its
    /// digest was kept), a new expiry, the same PIN.
    func resend(_ activationID: String, to requested: EmailAddress?, app: AppView) async throws -> ActivationRecord {
        guard let current = try await book.activation(activationID), current.value.appID == app.id else {
            throw BrokerError(.notFound, .notFound, "No activation '\(activationID)' for this app.")
        }
        guard current.value.state == .pending else {
            throw BrokerError(.conflict, .conflict, "Only a pending activation can be sent again (this one is \(current.value.displayState(now: now))).")
        }
        let address = try await address(
            for: ActivationRequest(send: true, sendTo: requested), accountID: current.value.accountID, email: current.value.email, app: app
        )
        let payload = ActivationPayload(id: activationID, secret: RandomToken.make(byteCount: 32))
        let renewed = try await book.update(activationID) { record in
            guard record.state == .pending else { return nil }
            var changed = record
            changed.secretDigest = SecretDigest.sha256Hex(payload.secret)
            changed.expiresAt = now.addingTimeInterval(try settings(for: app).lifetime.timeInterval)
            changed.emailedTo = address
            changed.claim = nil
            return changed
        }
        guard let renewed else { throw BrokerError(.conflict, .conflict, "The activation was redeemed or revoked meanwhile.") }
        do {
            try await environment.mailer.send(ActivationMail.activation(app: app, link: try deepLink(payload, app: app), expiresAt: renewed.expiresAt, to: address))
        } catch {
            environment.logger.warning("activation email not delivered", metadata: ["app": .string(app.id), "error": .string(String(describing: error))])
            throw BrokerError(.deliveryFailed, .unavailable, "The activation email could not be sent; send it again later.")
        }
        return renewed
    }

    // MARK: - Challenge

    static let activationChallenge = ChallengeDescription(
        type: "activation",
        summary:
            "Redeem activation data: the `activation` payload (or the deep link carrying it), the activation `pin`, and the installation's facts (as for `register_key`).",
        title: "Activate this device", prompt: "Enter the activation data and the activation PIN you were given.", submitLabel: "Activate",
        elements: [.text("activation", label: "Activation data", maxLength: 512), .secret("pin", label: "Activation PIN", inputmode: "numeric", maxLength: 64)]
            + DeviceFacts.challengeInputs + [
                .detail("pinMinLength", .integer, "The shortest activation PIN the app's policy allows."),
                .detail("pinMaxLength", .integer, "The longest activation PIN the app's policy allows."),
            ])
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension ActivationProvider: FlowStopping {}
extension ActivationProvider: HandingOver {}
extension ActivationProvider: AdminResourceOffering {}
extension ActivationProvider: Forgetting {}
extension ActivationProvider: EndpointOffering {}
