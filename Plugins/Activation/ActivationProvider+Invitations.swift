import Foundation
import GatehousePluginKit
import GatehouseSupport

/// Invitations: an administrator invites an address to an app. An account that holds the address
/// (verified) gets an email with a link to accept (choosing an activation PIN, which yields activation
/// data for the app) or decline; an address without an account gets a temporary registration, whose
/// activation data are emailed at once.
extension ActivationProvider {
    func invite(_ fields: [String: JSONValue], app: AppView, by admin: String) async throws -> AdminChange {
        for name in fields.keys where !["email", "pin", "alias"].contains(name) {
            throw BrokerError(
                .invalidRequest, .badRequest, "'\(name)' is not a field of an invitation (email, pin, alias).", issues: [ConfigIssue(path: name, "unknown field")])
        }
        guard let text = fields["email"]?.stringValue, let email = EmailAddress(text) else {
            throw BrokerError(.invalidRequest, .badRequest, "'email' must be an email address.", issues: [ConfigIssue(path: "email", "not an email address")])
        }
        let token = RandomToken.make()
        var invitation = InvitationRecord(
            id: RandomToken.make(byteCount: 9), tokenDigest: SecretDigest.sha256Hex(token), appID: app.id, email: email, accountID: try await holder(of: email, app: app),
            activationID: nil, state: .pending, invitedBy: admin, createdAt: now, expiresAt: now.addingTimeInterval(config.invitationLifetime.timeInterval)
        )
        var shownOnce: String?
        if invitation.accountID == nil {
            // A temporary registration: its activation data go to the address now; the PIN is the
            // admin's to hand over by another channel.
            let request = ActivationRequest(
                email: email, pin: fields["pin"]?.stringValue, alias: fields["alias"]?.stringValue, send: true
            )
            let (issued, record) = try await issueRecording(request, app: app, issuedBy: "invitation:\(admin)")
            invitation.activationID = record.id
            invitation.expiresAt = record.expiresAt
            invitation.state = .accepted
            shownOnce = issued.generatedPIN
        } else {
            let link = environment.issuer + "/invitations/" + token
            try await environment.mailer.send(ActivationMail.invitation(app: app, link: link, expiresAt: invitation.expiresAt, to: email))
        }
        guard
            try await book.storage.insert(
                invitation, key: InvitationRecord.key(tokenDigest: invitation.tokenDigest), expiresAt: invitation.expiresAt.addingTimeInterval(ActivationBook.retention))
        else { throw BrokerError.internalFailure("An invitation token was drawn twice.") }
        var item = invitation.item(now: now).objectValue ?? [:]
        if let shownOnce { item["pin"] = .string(shownOnce) }
        return AdminChange(
            item: .object(item), shownOnce: shownOnce, event: "invited",
            details: ["invitation": invitation.id, "address": email.masked, "kind": invitation.accountID == nil ? "temporary_registration" : "account"]
        )
    }

    /// What an invitation link shows before the person accepts or declines it.
    public func invitation(token: String) async throws -> InvitationView {
        guard !token.isEmpty, token.count <= 128 else { throw BrokerError.unknownInvitation }
        guard let stored = try await book.invitation(token: token), let app = try await apps.app(id: stored.value.appID) else {
            throw BrokerError.unknownInvitation
        }
        let invitation = stored.value
        let state = invitation.state == .pending && invitation.expiresAt <= now ? "expired" : invitation.state.rawValue
        return InvitationView(
            appID: app.id, appName: app.name, email: invitation.email.masked, state: state, expiresAt: invitation.expiresAt, pinPolicy: try settings(for: app).pin)
    }

    /// Accepts (with the activation PIN the person chooses) or declines an invitation.
    public func answerInvitation(token: String, accept: Bool, pin: String?) async throws -> InvitationAnswer {
        guard !token.isEmpty, token.count <= 128 else { throw BrokerError.unknownInvitation }
        guard let stored = try await book.invitation(token: token), let app = try await apps.app(id: stored.value.appID) else {
            throw BrokerError.unknownInvitation
        }
        var invitation = stored.value
        guard invitation.state == .pending, invitation.expiresAt > now, let accountID = invitation.accountID else {
            throw BrokerError(.invalidInvitation, .conflict, "This invitation was answered already, was revoked or has expired.")
        }
        // The address must still be that account's: a reassigned address does not open the old account.
        guard try await holder(of: invitation.email, app: app) == accountID else {
            throw BrokerError(.invalidInvitation, .conflict, "The invited address no longer belongs to the account; ask for a new invitation.")
        }
        var issued: IssuedActivation?
        if accept {
            guard let pin, !pin.isEmpty else { throw BrokerError(.invalidRequest, .badRequest, "Choose an activation PIN to accept the invitation.") }
            // Checked before anything changes, so that a refused PIN leaves the invitation open.
            try settings(for: app).pin.check(pin)
        }
        invitation.state = accept ? .accepted : .declined
        invitation.answeredAt = now
        // Answered once: of two answers at the same time, one wins.
        guard try await book.replace(invitation, version: stored.version) else {
            throw BrokerError(.invalidInvitation, .conflict, "This invitation was answered already.")
        }
        if accept {
            let activation: IssuedActivation
            let record: ActivationRecord
            do {
                (activation, record) = try await issueRecording(ActivationRequest(accountID: accountID, pin: pin), app: app, issuedBy: "invitation")
            } catch {
                // Nothing was issued: the invitation stays open.
                _ = try? await book.replace(stored.value, version: stored.version + 1)
                throw error
            }
            issued = activation
            invitation.activationID = record.id
            _ = try? await book.replace(invitation, version: stored.version + 1)
        }
        try await audit.append(
            accept ? "activation.invitation_accepted" : "activation.invitation_declined", appID: app.id, accountID: accountID,
            details: ["invitation": invitation.id].merging(invitation.activationID.map { ["activation": $0] } ?? [:]) { a, _ in a }
        )
        return InvitationAnswer(accepted: accept, activation: issued)
    }

    /// Revokes a pending invitation (and the temporary registration's activation it issued).
    func revokeInvitation(_ invitationID: String, app: AppView) async throws -> InvitationRecord? {
        let all = try await book.storage.all(InvitationRecord.self, keyPrefix: InvitationRecord.keyPrefix)
        guard let (key, found) = all.first(where: { $0.value.id == invitationID && $0.value.appID == app.id }) else { return nil }
        if let activationID = found.activationID { _ = try await revoke(activationID, appID: app.id) }
        var issued = found.activationID
        let answer = try await book.storage.update(InvitationRecord.self, key: key, conflict: "The invitation was answered at the same time; look again.") { current in
            issued = current?.activationID
            guard var changed = current, changed.state == .pending else { return .keep }
            changed.state = .revoked
            return .store(changed, expiresAt: changed.expiresAt.addingTimeInterval(ActivationBook.retention))
        }
        // An accept that landed meanwhile issued an activation: it goes too.
        if let issued, issued != found.activationID { _ = try await revoke(issued, appID: app.id) }
        return answer
    }
}
