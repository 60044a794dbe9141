import Foundation
import GatehouseCore
import Hummingbird

/// The apps pages: list, create (the secret shown once), settings, the policy form with every key,
/// the config drift and "return to config", plugin resources of the app, secret rotation and
/// deletion (both after a recent sign-in).
extension ConsolePages {
    func addAppRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("admin/apps") { request, context in try await page(request, context) { session in try await appsPage(session, notice: Self.notice(request)) } }
        router.get("admin/apps/new") { request, context in try await page(request, context) { session in newAppPage(session, values: [:], error: nil) } }
        router.post("admin/apps/new") { request, context in
            try await action(request, context, back: "/admin/apps/new") { session, form in
                let body: JSONValue = .object([
                    "id": .string(form["id"] ?? ""), "name": .string((form["name"] ?? "").isEmpty ? form["id"] ?? "" : form["name"]!),
                    "confidential": .bool(form["confidential"] == "on"), "redirectURIs": .array(Self.lines(form["redirectURIs"]).map(JSONValue.string)),
                ])
                do {
                    let (app, secret) = try await admin.createApp(body, by: session.admin)
                    guard let secret else { return Self.done("/admin/apps/\(app.id)", .created) }
                    return renderer.page(
                        "secretShown", title: "App created",
                        values: ["intro": "The app '\(app.id)' is created. Its client secret:", "secret": secret, "next": "/admin/apps/\(app.id)"], session: session
                    )
                } catch let error as BrokerError where error.code == .invalidRequest || error.code == .conflict {
                    return newAppPage(session, values: form, error: error)
                }
            }
        }
        router.get("admin/apps/:id") { request, context in
            try await page(request, context) { session in
                let id = try context.parameters.require("id")
                // A form posted after the session ended comes back as it was typed, unsaved.
                if let draft = draft(for: "/admin/apps/\(id)/policy", in: request) {
                    let stored = policyForm.values(of: try await admin.app(id: id).policy)
                    let typed = policyForm.postedForm(values: stored).merging(draft.fields) { _, typed in typed }
                    var response = try await appPage(session, id: id, notice: Self.draftNotice, policy: policyForm.patch(from: typed, template: stored))
                    draftCookie.clear(on: &response)
                    return response
                }
                if let draft = draft(for: "/admin/apps/\(id)", in: request) {
                    var response = try await appPage(session, id: id, notice: Self.draftNotice, settings: draft.fields)
                    draftCookie.clear(on: &response)
                    return response
                }
                return try await appPage(session, id: id, notice: Self.notice(request))
            }
        }
        router.post("admin/apps/:id") { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context, back: "/admin/apps/\(id)", draft: { $0 }) { session, form in
                let changes: JSONValue = .object([
                    "name": .string(form["name"] ?? ""), "redirectURIs": .array(Self.lines(form["redirectURIs"]).map(JSONValue.string)),
                    "disabled": .bool(form["disabled"] == "on"),
                ])
                do {
                    _ = try await admin.updateApp(id: id, changes: changes, by: session.admin)
                    return Self.done("/admin/apps/\(id)", .saved)
                } catch let error as BrokerError where error.code == .invalidRequest || error.code == .conflict {
                    return try await appPage(session, id: id, settings: form, settingsError: error)
                }
            }
        }
        router.post("admin/apps/:id/policy") { request, context in
            let id = try context.parameters.require("id")
            // A draft keeps only the edits: the whole form would not fit in a cookie.
            let keep: ([String: String]) async throws -> [String: String] = { form in
                let stored = try await admin.app(id: id)
                return ConsolePolicyForm.changes(form, against: policyForm.postedForm(values: policyForm.values(of: stored.policy)))
            }
            return try await action(request, context, back: "/admin/apps/\(id)", draft: keep) { session, form in
                let stored = try await admin.app(id: id)
                let patch = policyForm.patch(from: form, template: policyForm.values(of: stored.policy))
                do {
                    _ = try await admin.patchPolicy(id: id, patch: .object(patch), by: session.admin)
                    return Self.done("/admin/apps/\(id)", .saved)
                } catch let error as BrokerError where error.code == .invalidRequest || error.code == .conflict {
                    return try await appPage(session, id: id, policy: patch, policyError: error)
                }
            }
        }
        router.post("admin/apps/:id/return-to-config") { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context, back: "/admin/apps/\(id)") { session, _ in
                _ = try await admin.returnToConfig(id: id, by: session.admin)
                return Self.done("/admin/apps/\(id)", .returned)
            }
        }
        addRotationRoutes(
            "secret", to: router, what: "the client secret",
            description: "A new secret is made and shown once; the old one stops working at once, so the app fails until it is given the new one.",
            shown: "client secret", done: "Client secret rotated", next: ""
        ) { id, admin in try await self.admin.rotateSecret(id: id, by: admin) }
        addRotationRoutes(
            "webhook-secret", to: router, what: "the webhook secret",
            description:
                "A new signing secret is made and shown once. For the overlap that events.webhookSecretOverlap sets (24 hours unless configured), every event carries a signature with the new secret and one with the old, so the receiver keeps working until it is given the new one; then the old one stops. To stop a leaked secret at once, rotate through the admin API with {\"overlap\": \"0s\"}.",
            shown: "webhook signing secret", done: "Webhook secret rotated", next: "#webhook"
        ) { id, admin in try await self.admin.rotateWebhookSecret(id: id, by: admin) }
        router.post("admin/apps/:id/dead-letters/replay") { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context, back: "/admin/apps/\(id)") { session, _ in
                _ = try await admin.replayAll(id: id, by: session.admin)
                return Self.done("/admin/apps/\(id)", .replayed)
            }
        }
        router.post("admin/apps/:id/dead-letters/:delivery/replay") { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context, back: "/admin/apps/\(id)") { session, _ in
                guard let delivery = Int64(try context.parameters.require("delivery")) else { throw BrokerError(.notFound, .notFound, "No such delivery.") }
                try await admin.replay(id: id, delivery: delivery, by: session.admin)
                return Self.done("/admin/apps/\(id)", .replayed)
            }
        }
        router.get("admin/apps/:id/delete") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { session in
                let app = try await admin.app(id: id)
                return confirmation(
                    session, title: "Delete \(app.name)",
                    description: "The app '\(id)' and every token, code and flow of it go; its users stay. This cannot be undone.",
                    action: "/admin/apps/\(id)/delete", confirmLabel: "Delete the app", cancel: "/admin/apps/\(id)", returnTo: "/admin/apps/\(id)/delete"
                )
            }
        }
        router.post("admin/apps/:id/delete") { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context, dangerous: true, back: "/admin/apps/\(id)/delete") { session, _ in
                try await admin.deleteApp(id: id, by: session.admin)
                return Self.done("/admin/apps", .deleted)
            }
        }
        addResourceRoutes(to: router)
    }

    /// A secret's rotation: `GET admin/apps/:id/<path>` asks to confirm, `POST` (a dangerous action:
    /// a recent sign-in) makes the new secret with `rotate` and shows it once.
    func addRotationRoutes(
        _ path: String, to router: Router<GatehouseRequestContext>, what: String, description: String, shown: String, done: String, next anchor: String,
        rotate: @escaping @Sendable (String, AdminIdentity) async throws -> String
    ) {
        router.get(RouterPath("admin/apps/:id/\(path)")) { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { session in
                let app = try await admin.app(id: id)
                return confirmation(
                    session, title: "Rotate \(what) of \(app.name)", description: description, action: "/admin/apps/\(id)/\(path)",
                    confirmLabel: "Rotate \(what)", cancel: "/admin/apps/\(id)", returnTo: "/admin/apps/\(id)/\(path)"
                )
            }
        }
        router.post(RouterPath("admin/apps/:id/\(path)")) { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context, dangerous: true, back: "/admin/apps/\(id)/\(path)") { session, _ in
                let secret = try await rotate(id, session.admin)
                return renderer.page(
                    "secretShown", title: done,
                    values: ["intro": "The new \(shown) of '\(id)':", "secret": secret, "next": "/admin/apps/\(id)\(anchor)"], session: session
                )
            }
        }
    }

    var policyForm: ConsolePolicyForm {
        ConsolePolicyForm(
            identityProviders: broker.plugins.identityProviders.keys.sorted(), authenticators: broker.plugins.authenticators.keys.sorted(),
            settings: broker.plugins.settings
        )
    }

    static let draftNotice = "You were signed out before this was saved. What you typed is below, not saved yet: check it and save."

    /// Why the stateless switch cannot be turned on for this policy, or nil when it can.
    func statelessUnavailable(_ policy: Policy) -> String? {
        let capable = broker.plugins.statelessCapableIdentityProviders
        guard policy.identityProviders.allSatisfy({ !capable.contains($0) }) else { return nil }
        let offered = capable.sorted()
        return offered.isEmpty
            ? "Unavailable: no provider configured here can sign in statelessly."
            : "Unavailable: none of this app's identity providers can sign in statelessly. Allow one that can (\(offered.joined(separator: ", "))) first, and save."
    }

    static func lines(_ text: String?) -> [String] {
        (text ?? "").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func appsPage(_ session: ConsoleSession, notice: String?) async throws -> Response {
        let apps = try await admin.apps()
        return renderer.page(
            "apps", title: "Apps",
            values: [
                "apps": apps.map { app -> [String: Any] in
                    [
                        "id": app.id, "name": app.name, "type": app.confidential ? "confidential" : "public",
                        "providers": app.policy.identityProviders.joined(separator: ", "), "stateless": app.policy.statelessAuthentication ? "on" : "off",
                        "managedBy": app.managedBy.rawValue, "state": app.disabled ? "disabled" : "enabled",
                    ]
                }
            ],
            session: session, current: "/admin/apps", notice: notice
        )
    }

    func newAppPage(_ session: ConsoleSession, values: [String: String], error: BrokerError?) -> Response {
        let names: Set<String> = ["id", "name", "confidential", "redirectURIs"]
        let errors = error.map { ConsoleRenderer.fieldErrors($0, names: names) } ?? [:]
        let fields: [[String: Any]] = [
            ConsoleField.text(
                "id", label: "App id (client_id)", value: values["id"] ?? "", hint: "Letters, digits, dots, dashes and underscores.", error: errors["id"], required: true),
            ConsoleField.text("name", label: "Name people see", value: values["name"] ?? "", error: errors["name"]),
            ConsoleField.checkbox(
                "confidential", label: "Confidential (a server-side app with a client secret)", checked: error == nil ? true : values["confidential"] == "on",
                error: errors["confidential"]
            ),
            ConsoleField.textarea(
                "redirectURIs", label: "Redirect URIs", lines: Self.lines(values["redirectURIs"]), hint: "One per line; compared exactly.", error: errors["redirectURIs"]),
        ]
        return renderer.page(
            "form", title: "New app",
            values: [
                "intro": "The policy starts with the defaults; set it on the app's page.", "action": "/admin/apps/new", "fields": fields, "sections": [[String: Any]](),
                "submitLabel": "Create the app", "submitID": "create-app", "danger": false, "cancel": "/admin/apps",
            ],
            session: session, current: "/admin/apps", error: error, fieldNames: names, status: error.map { HTTPResponse.Status(code: $0.httpStatus) } ?? .ok
        )
    }

    /// The app's page; after a refused save, the refused form keeps what was typed and shows the errors.
    func appPage(
        _ session: ConsoleSession, id: String, notice: String? = nil, settings: [String: String]? = nil, settingsError: BrokerError? = nil,
        policy: [String: JSONValue]? = nil, policyError: BrokerError? = nil, attempt: ResourceAttempt? = nil
    ) async throws -> Response {
        let app = try await admin.app(id: id)
        let settingsNames: Set<String> = ["name", "redirectURIs", "disabled"]
        let settingsErrors = settingsError.map { ConsoleRenderer.fieldErrors($0, names: settingsNames) } ?? [:]
        let settingsFields: [[String: Any]] = [
            ConsoleField.text("name", label: "Name people see", value: settings?["name"] ?? app.name, error: settingsErrors["name"]),
            ConsoleField.textarea(
                "redirectURIs", label: "Redirect URIs", lines: settings.map { Self.lines($0["redirectURIs"]) } ?? app.redirectURIs,
                hint: "One per line; compared exactly.",
                error: settingsErrors["redirectURIs"]
            ),
            ConsoleField.checkbox(
                "disabled", label: "Disabled (refuses sign-ins and tokens; revokes the app's tokens)", checked: settings.map { $0["disabled"] == "on" } ?? app.disabled,
                error: settingsErrors["disabled"]
            ),
        ]
        let values = policy ?? policyForm.values(of: app.policy)
        let policyNames = Set(Self.fieldNames(values, prefix: "policy"))
        let policyErrors = policyError.map { ConsoleRenderer.fieldErrors($0, names: policyNames) } ?? [:]
        var drift: Any = false
        if app.managedBy == .admin, let seed = broker.config.apps.first(where: { $0.id == id }) {
            let differences = try ConfigDrift.differences(seed: seed, app: try await storedApp(id), settings: broker.plugins.settings)
            drift = ["differences": differences.isEmpty ? false : differences.joined(separator: "; ")] as [String: Any]
        }
        let error = settingsError ?? policyError ?? attempt.map { Self.prefixed($0.error) }
        let deadLetters = try await admin.deadLetters(id: id, limit: 50)
        return renderer.page(
            "app", title: app.name,
            values: [
                "app": ["id": app.id, "managedBy": app.managedBy.rawValue, "version": app.version], "type": app.confidential ? "confidential" : "public",
                "updated": ConsoleRenderer.time(app.updatedAt), "stateless": app.policy.statelessAuthentication ? "on" : "off", "confidential": app.confidential,
                "drift": drift, "settingsFields": settingsFields,
                // The broker's own apps refuse every change at run time: no form that can only fail.
                "builtIn": id == ConsoleConfig.appID
                    ? "This is the admin console's own app." : (id == ConsoleConfig.accountAppID ? "This is the account page's own app." : false),
                "section": id == ConsoleConfig.appID ? "admin.console" : "accountPage",
                "policySections": policyForm.sections(values: values, errors: policyErrors, statelessUnavailable: statelessUnavailable(app.policy)),
                "resources": try await resourceSections(
                    session, owner: .app(id), scope: .app, ids: app.policy.identityProviders + app.policy.authenticators, attempt: attempt),
                "webhook": ["url": app.policy.webhook.url ?? false] as [String: Any],
                "hasDeadLetters": deadLetters.isEmpty == false,
                "deadLetters": deadLetters.map { letter -> [String: Any] in
                    [
                        "id": String(letter.id), "type": letter.type, "subject": letter.subject.isEmpty ? "—" : letter.subject,
                        "created": ConsoleRenderer.time(letter.createdAt),
                        "attempts": String(letter.attempts), "lastError": letter.lastError ?? "", "appID": id,
                    ]
                },
            ],
            session: session, current: "/admin/apps", notice: notice, error: error, fieldNames: settingsError != nil ? settingsNames : policyNames,
            status: error.map { HTTPResponse.Status(code: $0.httpStatus) } ?? .ok
        )
    }

    func storedApp(_ id: String) async throws -> App {
        guard let app = try await broker.store.app(id: id) else { throw BrokerError(.notFound, .notFound, "No app '\(id)'.") }
        return app
    }

    /// Every field name of the policy form (`policy.<path>`), for pointing errors at fields.
    static func fieldNames(_ values: [String: JSONValue], prefix: String) -> [String] {
        values.flatMap { key, value -> [String] in
            if case .object(let inner) = value { return fieldNames(inner, prefix: "\(prefix).\(key)") }
            return ["\(prefix).\(key)"]
        }
    }
}
