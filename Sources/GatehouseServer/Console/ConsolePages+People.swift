import Foundation
import GatehouseCore
import Hummingbird

/// Managing people from the console: a new user of a password provider (account at once, password
/// typed or generated, shown once), a password reset, disabling and enabling an account, and the
/// confirmation before each action that takes something away (a device, a session, a lock).
extension ConsolePages {
    func addPeopleRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("admin/users/new") { request, context in try await page(request, context) { session in newUserPage(session, values: [:], error: nil) } }
        router.post("admin/users/new") { request, context in
            try await action(request, context, back: "/admin/users/new") { session, form in
                let choice = AdminService.PasswordChoice(password: form["password"].flatMap { $0.isEmpty ? nil : $0 }, mustChange: form["mustChange"] == "on")
                do {
                    let (user, generated) = try await admin.createPasswordUser(
                        providerID: form["provider"].flatMap { $0.isEmpty ? nil : $0 }, username: form["username"] ?? "", choice: choice, by: session.admin,
                        via: "console")
                    guard let generated else { return Self.done("/admin/users/\(user.id)", .created) }
                    return renderer.page(
                        "secretShown", title: "User created",
                        values: [
                            "intro": "\(user.username) can sign in with this password\(choice.mustChange ? ", and must choose their own at the first sign-in" : ""):",
                            "secret": generated, "next": "/admin/users/\(user.id)",
                        ], session: session)
                } catch let error as BrokerError where error.httpStatus < 500 {
                    return newUserPage(session, values: form, error: error)
                }
            }
        }
        router.get("admin/users/:id/password") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { session in try await passwordResetPage(session, id: id, values: [:], error: nil) }
        }
        router.post("admin/users/:id/password") { request, context in
            let id = try context.parameters.require("id")
            // Whoever sets a person's password can sign in as them: only after a recent sign-in.
            return try await action(request, context, dangerous: true, back: "/admin/users/\(id)/password") { session, form in
                let choice = AdminService.PasswordChoice(password: form["password"].flatMap { $0.isEmpty ? nil : $0 }, mustChange: form["mustChange"] == "on")
                do {
                    let generated = try await admin.resetPassword(
                        accountID: id, providerID: form["provider"].flatMap { $0.isEmpty ? nil : $0 }, choice: choice, by: session.admin, via: "console")
                    guard let generated else { return Self.done("/admin/users/\(id)", .passwordReset) }
                    return renderer.page(
                        "secretShown", title: "Password reset",
                        values: [
                            "intro":
                                "The new password\(choice.mustChange ? ", to be changed at the next sign-in" : ""); every session of the account ended and its tokens were revoked:",
                            "secret": generated, "next": "/admin/users/\(id)",
                        ], session: session)
                } catch let error as BrokerError where error.code == .invalidRequest || error.httpStatus == 400 {
                    return try await passwordResetPage(session, id: id, values: form, error: error)
                }
            }
        }
        for (verb, title, label, text) in [
            (
                "disable", "Disable", "Disable the account",
                "Every sign-in and token grant of the account is refused, on every app, and its sessions and tokens end at once. Enabling it later lets it sign in again; what was revoked stays revoked."
            ),
            ("enable", "Enable", "Enable the account", "The account can sign in again. Tokens revoked when it was disabled stay revoked."),
        ] {
            router.get("admin/users/:id/\(verb)") { request, context in
                let id = try context.parameters.require("id")
                return try await page(request, context) { session in
                    let user = try await admin.user(id: id)
                    return confirmation(
                        session, title: "\(title) \(user.username)", description: text, action: "/admin/users/\(id)/\(verb)", confirmLabel: label,
                        cancel: "/admin/users/\(id)", returnTo: "/admin/users/\(id)/\(verb)",
                        fields: [ConsoleField.text("reason", label: "Why (for the audit log, optional)", value: "")], needsRecentSignIn: false)
                }
            }
            router.post("admin/users/:id/\(verb)") { request, context in
                let id = try context.parameters.require("id")
                return try await action(request, context, back: "/admin/users/\(id)") { session, form in
                    let reason = form["reason"].map { String($0.prefix(500)) }.flatMap { $0.isEmpty ? nil : $0 }
                    if verb == "disable" {
                        _ = try await admin.disableUser(id: id, reason: reason, by: session.admin)
                        return Self.done("/admin/users/\(id)", .disabled)
                    }
                    _ = try await admin.enableUser(id: id, reason: reason, by: session.admin)
                    return Self.done("/admin/users/\(id)", .enabled)
                }
            }
        }
        router.get("admin/users/:id/devices/:device/remove") { request, context in
            let id = try context.parameters.require("id")
            let device = try context.parameters.require("device")
            return try await page(request, context) { session in
                let user = try await admin.user(id: id)
                return confirmation(
                    session, title: "Remove a device of \(user.username)",
                    description: "The device \(device) goes with its installations and sign-in keys, and every token issued through them is revoked.",
                    action: "/admin/users/\(id)/devices/\(device)/remove", confirmLabel: "Remove the device", cancel: "/admin/users/\(id)",
                    returnTo: "/admin/users/\(id)", needsRecentSignIn: false)
            }
        }
        router.get("admin/users/:id/sessions/:session/end") { request, context in
            let id = try context.parameters.require("id")
            let sessionID = try context.parameters.require("session")
            return try await page(request, context) { session in
                let user = try await admin.user(id: id)
                return confirmation(
                    session, title: "End a session of \(user.username)",
                    description: "The browser session ends on every node, and the apps it signed in to are told (back-channel logout).",
                    action: "/admin/users/\(id)/sessions/\(sessionID)/end", confirmLabel: "End the session", cancel: "/admin/users/\(id)", returnTo: "/admin/users/\(id)",
                    needsRecentSignIn: false)
            }
        }
        router.get("admin/lockouts/unlock") { request, context in
            try await page(request, context) { session in
                let key = request.uri.queryParameters.get("key") ?? ""
                let back = request.uri.queryParameters.get("return").map { AdminConsoleService.safeReturn(String($0)) } ?? "/admin/lockouts"
                guard let lockout = try await admin.lockouts().first(where: { $0.key == key }) else {
                    throw BrokerError(.notFound, .notFound, "'\(key)' is not locked.")
                }
                return confirmation(
                    session, title: "Unlock",
                    description: "\(Self.lockoutDescription(lockout)) can be tried again at once; its count of failures starts again from zero.",
                    action: "/admin/lockouts/unlock", confirmLabel: "Unlock", cancel: back, returnTo: back,
                    fields: [ConsoleField.hidden("key", value: key), ConsoleField.hidden("return", value: back)], needsRecentSignIn: false)
            }
        }
    }

    /// A lockout in words: `The sign-in of alice at local`, `The address 192.0.2.0/24`.
    static func lockoutDescription(_ lockout: AdminService.LockoutView) -> String {
        let who = lockout.username ?? lockout.subject ?? lockout.key
        switch lockout.what {
        case "client address": return "The client address \(who)"
        case "sign-in": return "The sign-in of \(who) at \(lockout.provider ?? "")"
        case "second factor": return "The second factor \(lockout.provider ?? "") of \(who)"
        default: return lockout.provider.map { "\(lockout.what) of \(who) at \($0)" } ?? "'\(lockout.key)'"
        }
    }

    func newUserPage(_ session: ConsoleSession, values: [String: String], error: BrokerError?) -> Response {
        let providers = admin.passwordProviders
        let names: Set<String> = ["provider", "username", "password", "mustChange"]
        let errors = error.map { ConsoleRenderer.fieldErrors(Self.onUsername($0), names: names) } ?? [:]
        var fields: [[String: Any]] = []
        if providers.count > 1 {
            fields.append(
                ConsoleField.select(
                    "provider", label: "Provider", options: providers.map { ($0.id, $0.id) }, selected: values["provider"] ?? providers.first?.id ?? "",
                    error: errors["provider"]))
        }
        fields += [
            ConsoleField.text("username", label: "Username", value: values["username"] ?? "", error: errors["username"], required: true),
            ConsoleField.text(
                "password", label: "Password", value: "", hint: "Leave empty to generate one, shown once on the next page.", error: errors["password"], type: "password"),
            ConsoleField.checkbox(
                "mustChange", label: "The person must choose their own password at the first sign-in", checked: values.isEmpty || values["mustChange"] == "on",
                error: errors["mustChange"]),
        ]
        guard !providers.isEmpty else {
            return renderer.page(
                "message", title: "New user",
                values: [
                    "message":
                        "No provider keeps passwords here (type local). People of a directory or an upstream provider get their account at their first sign-in, or from SCIM provisioning.",
                    "links": [["href": "/admin/users", "label": "Back to users", "secondary": true, "id": false]],
                ], session: session, current: "/admin/users")
        }
        return renderer.page(
            "form", title: "New user",
            values: [
                "intro":
                    "A user who signs in with a password Gatehouse keeps. Their account exists from now on: you can disable it, reset it or delete it before they ever sign in.",
                "action": "/admin/users/new", "fields": fields, "sections": [[String: Any]](), "submitID": "create-user", "submitLabel": "Create the user",
                "danger": false, "cancel": "/admin/users",
            ],
            session: session, current: "/admin/users", error: error.map(Self.onUsername), fieldNames: names,
            status: error.map { HTTPResponse.Status(code: $0.httpStatus) } ?? .ok)
    }

    func passwordResetPage(_ session: ConsoleSession, id: String, values: [String: String], error: BrokerError?) async throws -> Response {
        let user = try await admin.user(id: id)
        let providers = user.identities.map(\.provider).filter { provider in admin.passwordProviders.contains { $0.id == provider } }
        let names: Set<String> = ["provider", "password", "mustChange"]
        let errors = error.map { ConsoleRenderer.fieldErrors(Self.onPassword($0), names: names) } ?? [:]
        guard !providers.isEmpty else {
            return renderer.page(
                "message", title: "Reset the password of \(user.username)",
                values: [
                    "message": "\(user.username) signs in with \(user.identities.map(\.provider).joined(separator: ", ")), which keeps no password here: reset it there.",
                    "links": [["href": "/admin/users/\(id)", "label": "Back", "secondary": true, "id": false]],
                ], session: session, current: "/admin/users")
        }
        var fields: [[String: Any]] = []
        if providers.count > 1 {
            fields.append(ConsoleField.select("provider", label: "Provider", options: providers.map { ($0, $0) }, selected: values["provider"] ?? providers[0]))
        }
        fields += [
            ConsoleField.text(
                "password", label: "New password", value: "", hint: "Leave empty to generate one, shown once on the next page.", error: errors["password"],
                type: "password"),
            ConsoleField.checkbox(
                "mustChange", label: "The person must choose their own password at the next sign-in", checked: values.isEmpty || values["mustChange"] == "on",
                error: errors["mustChange"]),
        ]
        return confirmation(
            session, title: "Reset the password of \(user.username)",
            description: "The password is replaced, every session of the account ends and its tokens are revoked.", action: "/admin/users/\(id)/password",
            confirmLabel: "Reset the password", cancel: "/admin/users/\(id)", returnTo: "/admin/users/\(id)/password", fields: fields,
            error: error.map(Self.onPassword), fieldNames: names)
    }

    /// A password policy's refusal belongs to the password field; `username_taken` to the username.
    static func onPassword(_ error: BrokerError) -> BrokerError {
        guard error.issues.isEmpty, error.code.rawValue.hasPrefix("password") else { return error }
        var error = error
        error.issues = [ConfigIssue(path: "password", error.message)]
        return error
    }

    static func onUsername(_ error: BrokerError) -> BrokerError {
        guard error.issues.isEmpty else { return error }
        if error.code == .usernameTaken || error.code == .invalidUsername {
            var error = error
            error.issues = [ConfigIssue(path: "username", error.message)]
            return error
        }
        return onPassword(error)
    }
}
