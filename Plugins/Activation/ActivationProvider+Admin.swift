import Foundation
import GatehousePluginKit

/// What administrators manage per app (`gatehouse resources ... --app <app>`, `/admin/v1/apps/{app}/...`):
/// activations (issue, list, revoke), invitations (invite, list, revoke) and resends (send an
/// activation's data again by email). Deleting an account or an app forgets what was issued for it.
extension ActivationProvider {
    public var adminResources: [AdminResource] {
        [
            AdminResource(
                name: "activations", scope: .app, summary: "Activation data for an account or an email address (shown once) and their activation PINs.",
                createFields: [
                    AdminField(name: "account", summary: "The account id (or give email)"),
                    AdminField(name: "email", summary: "An address: its account's, or a temporary registration's"),
                    AdminField(name: "pin", summary: "The activation PIN (generated when left out; the app's PIN policy applies)"),
                    AdminField(name: "alias", summary: "The name the device will get"), AdminField(name: "send", summary: "true: email the activation data"),
                ],
                itemKey: ["id"], columns: ["id", "account", "email", "state", "alias", "expiresAt", "outcome"], dangerous: true,
                list: { app in try await listActivations(of: try Self.owner(app)) },
                create: { fields, app, admin in try await issueByAdmin(fields, app: try Self.owner(app), by: admin) },
                delete: { key, app, _ in try await revokeByAdmin(key[0], app: try Self.owner(app)) }
            ),
            AdminResource(
                name: "invitations", scope: .app,
                summary: "Invitations of an email address to the app (an account accepts or declines; a new address gets activation data).",
                createFields: [
                    AdminField(name: "email", summary: "The address to invite"),
                    AdminField(name: "pin", summary: "For an address without an account: its activation PIN (generated when left out)"),
                    AdminField(name: "alias", summary: "For an address without an account: the name the device will get"),
                ],
                itemKey: ["id"], columns: ["id", "email", "kind", "state", "expiresAt"],
                list: { app in try await listInvitations(of: try Self.owner(app)) },
                create: { fields, app, admin in try await invite(fields, app: try Self.owner(app), by: admin) },
                delete: { key, app, _ in try await revokeInvitationByAdmin(key[0], app: try Self.owner(app)) }
            ),
            AdminResource(
                name: "resends", scope: .app, summary: "Send a pending activation's data again by email (a new payload; the old one stops working).",
                createFields: [AdminField(name: "activation", summary: "The activation id"), AdminField(name: "to", summary: "Another address to send to (optional)")],
                columns: ["id", "emailedTo", "expiresAt"], list: { _ in [] },
                create: { fields, app, _ in try await resendByAdmin(fields, app: try Self.owner(app)) }
            ),
        ]
    }

    /// The app an app-scoped resource's call is for.
    static func owner(_ app: AppView?) throws -> AppView {
        guard let app else { throw BrokerError(.invalidRequest, .badRequest, "Activations belong to an app: name it with --app.") }
        return app
    }

    func listActivations(of app: AppView) async throws -> [JSONValue] {
        try await book.activations().filter { $0.appID == app.id }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.map { $0.item(now: now) }
    }

    func listInvitations(of app: AppView) async throws -> [JSONValue] {
        try await book.invitations().filter { $0.appID == app.id }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }.map { $0.item(now: now) }
    }

    func issueByAdmin(_ fields: [String: JSONValue], app: AppView, by admin: String) async throws -> AdminChange {
        let (issued, record) = try await issueRecording(try ActivationRequest(fields: fields), app: app, issuedBy: "admin:\(admin)")
        var details = ["activation": record.id]
        if let sentTo = issued.sentTo { details["sentTo"] = sentTo }
        return AdminChange(item: issued.json, shownOnce: String(decoding: issued.json.serialized(), as: UTF8.self), event: "issued", details: details)
    }

    func resendByAdmin(_ fields: [String: JSONValue], app: AppView) async throws -> AdminChange {
        for name in fields.keys where !["activation", "to"].contains(name) {
            throw BrokerError(.invalidRequest, .badRequest, "'\(name)' is not a field of a resend (activation, to).", issues: [ConfigIssue(path: name, "unknown field")])
        }
        guard let activationID = fields["activation"]?.stringValue else {
            throw BrokerError(.invalidRequest, .badRequest, "'activation' names the activation to send again.", issues: [ConfigIssue(path: "activation", "required")])
        }
        var to: EmailAddress?
        if let text = fields["to"]?.stringValue {
            guard let address = EmailAddress(text) else {
                throw BrokerError(.invalidRequest, .badRequest, "'to' is not an email address.", issues: [ConfigIssue(path: "to", "not an email address")])
            }
            to = address
        }
        let record = try await resend(activationID, to: to, app: app)
        return AdminChange(item: record.item(now: now), event: "resent", details: ["activation": record.id, "sentTo": record.emailedTo?.masked ?? ""])
    }

    func revokeByAdmin(_ itemID: String, app: AppView) async throws -> AdminChange {
        guard let current = try await book.activation(itemID), current.value.appID == app.id else {
            throw BrokerError(.notFound, .notFound, "No activation '\(itemID)' for this app.")
        }
        guard let revoked = try await revoke(itemID, appID: app.id) else {
            throw BrokerError(.conflict, .conflict, "Only a pending activation can be revoked (this one is \(current.value.displayState(now: now))).")
        }
        return AdminChange(item: revoked.item(now: now), event: "revoked", details: ["activation": itemID])
    }

    func revokeInvitationByAdmin(_ itemID: String, app: AppView) async throws -> AdminChange {
        guard let revoked = try await revokeInvitation(itemID, app: app) else { throw BrokerError(.notFound, .notFound, "No invitation '\(itemID)' for this app.") }
        return AdminChange(item: revoked.item(now: now), event: "invitation_revoked", details: ["invitation": itemID])
    }

    /// A deregistered account's and a deleted app's activations and invitations go.
    public func forget(_ departure: Departure) async throws -> [AdminChange] {
        switch departure {
        case .account(let accountID):
            try await forget {
                $0.accountID == accountID || $0.redeemedBy == accountID
            } invitations: {
                $0.accountID == accountID
            }
        case .app(let appID):
            try await forget {
                $0.appID == appID
            } invitations: {
                $0.appID == appID
            }
        case .identity, .admins:
            break
        }
        return []
    }

    private func forget(_ activations: (ActivationRecord) -> Bool, invitations: (InvitationRecord) -> Bool) async throws {
        for (key, record) in try await book.storage.all(ActivationRecord.self, keyPrefix: ActivationRecord.keyPrefix) where activations(record) {
            _ = try await book.storage.delete(key: key)
        }
        for (key, invitation) in try await book.storage.all(InvitationRecord.self, keyPrefix: InvitationRecord.keyPrefix) where invitations(invitation) {
            _ = try await book.storage.delete(key: key)
        }
    }
}
