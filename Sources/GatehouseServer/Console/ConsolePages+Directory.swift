import Foundation
import GatehouseCore
import Hummingbird

/// Providers (health, last error, the upstream test, their resources), users (search, an account's
/// identities, devices, sessions, lockouts, provisional identities, admin role, deletion) and
/// lockouts.
extension ConsolePages {
    func addDirectoryRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("admin/providers") { request, context in try await page(request, context) { session in try await providersPage(session) } }
        router.get("admin/providers/:id") { request, context in
            try await page(request, context) { session in try await providerPage(session, id: try context.parameters.require("id"), notice: Self.notice(request)) }
        }
        router.post("admin/providers/:id/test") { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context, back: "/admin/providers/\(id)") { session, form in
                let username = form["username"].flatMap { $0.isEmpty ? nil : $0 }
                let password = username == nil ? nil : form["password"].flatMap { $0.isEmpty ? nil : $0 }
                // Trying a person's password is a sign-in attempt on their behalf: only after a recent sign-in.
                if password != nil { try console.requireRecentSignIn(session) }
                let steps = try await admin.diagnoseProvider(id, username: username, password: password, by: session.admin)
                return try await providerPage(session, id: id, steps: steps, username: username)
            }
        }
        router.get("admin/users") { request, context in
            try await page(request, context) { session in
                // The search forms are GET forms: `+` is a space there (`Bob+Builder`).
                let query = (try? FormBody.query(request)) ?? [:]
                return try await usersPage(
                    session, search: query["q"] ?? "", page: min(max(query["page"].flatMap { Int($0) } ?? 0, 0), 100_000),
                    directory: query["directory"], directorySearch: query["dq"] ?? "")
            }
        }
        router.get("admin/users/:id") { request, context in
            try await page(request, context) { session in try await userPage(session, id: try context.parameters.require("id"), notice: Self.notice(request)) }
        }
        router.post("admin/users/:id/admin-role") { request, context in
            let id = try context.parameters.require("id")
            // Making an admin is how an intruder would stay: it needs a recent sign-in too.
            return try await action(request, context, dangerous: true, back: "/admin/users/\(id)") { session, form in
                if form["grant"] == "true" {
                    try await admin.grantAdmin(accountID: id, by: session.admin)
                    return Self.done("/admin/users/\(id)", .granted)
                }
                try await admin.revokeAdmin(accountID: id, by: session.admin)
                return Self.done("/admin/users/\(id)", .revoked)
            }
        }
        router.post("admin/users/:id/devices/:device/remove") { request, context in
            let id = try context.parameters.require("id")
            let device = try context.parameters.require("device")
            return try await action(request, context, back: "/admin/users/\(id)") { session, _ in
                try await broker.devices.remove(device, accountID: id, by: session.admin)
                return Self.done("/admin/users/\(id)", .removed)
            }
        }
        router.post("admin/users/:id/sessions/:session/end") { request, context in
            let id = try context.parameters.require("id")
            let sessionID = try context.parameters.require("session")
            return try await action(request, context, back: "/admin/users/\(id)") { session, _ in
                _ = try await admin.endSessions(accountID: id, sessionID: sessionID, by: session.admin)
                return Self.done("/admin/users/\(id)", .ended)
            }
        }
        router.get("admin/users/:id/delete") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { session in
                let user = try await admin.user(id: id)
                return confirmation(
                    session, title: "Delete \(user.username)",
                    description:
                        "The account '\(user.username)' goes with its identities, devices, sessions and every token it holds, as if the person deregistered. This cannot be undone.",
                    action: "/admin/users/\(id)/delete", confirmLabel: "Delete the user", cancel: "/admin/users/\(id)", returnTo: "/admin/users/\(id)/delete"
                )
            }
        }
        router.post("admin/users/:id/delete") { request, context in
            let id = try context.parameters.require("id")
            return try await action(request, context, dangerous: true, back: "/admin/users/\(id)/delete") { session, _ in
                try await admin.deregisterUser(id: id, by: session.admin)
                return Self.done("/admin/users", .deleted)
            }
        }
        router.get("admin/lockouts") { request, context in
            try await page(request, context) { session in
                renderer.page(
                    "lockoutTable", title: "Lockouts", values: ["lockouts": try await lockoutRows(session, matching: nil, returnTo: "/admin/lockouts")], session: session,
                    current: "/admin/lockouts", notice: Self.notice(request)
                )
            }
        }
        router.post("admin/lockouts/unlock") { request, context in
            try await action(request, context, back: "/admin/lockouts") { session, form in
                try await admin.unlock(key: form["key"] ?? "", by: session.admin)
                let back = form["return"].map { AdminConsoleService.safeReturn($0) } ?? "/admin/lockouts"
                return Self.done(back, .unlocked)
            }
        }
    }

    func providersPage(_ session: ConsoleSession) async throws -> Response {
        // One health probe: it gives the health and records the last errors.
        let readiness = await broker.readiness()
        let problems = broker.lastProblems()
        return renderer.page(
            "providers", title: "Providers",
            values: ["providers": await admin.providers(health: readiness.checks).map { providerValues($0, problem: problems[$0.id]) }],
            session: session, current: "/admin/providers"
        )
    }

    func providerValues(_ provider: AdminService.ProviderView, problem: HealthProblem?) -> [String: Any] {
        [
            "id": provider.id, "type": provider.type, "roles": provider.roles.joined(separator: ", "),
            "healthy": provider.health?.healthy == true, "unhealthy": provider.health?.healthy == false, "unknown": provider.health == nil,
            "detail": provider.health?.detail ?? "", "lastError": problem?.detail ?? false, "lastErrorAt": problem.map { ConsoleRenderer.time($0.at) } ?? "",
        ]
    }

    func providerPage(
        _ session: ConsoleSession, id: String, notice: String? = nil, steps: [DiagnosticStep] = [], username: String? = nil, attempt: ResourceAttempt? = nil
    ) async throws -> Response {
        // One health probe: it gives the health and records the last error.
        let readiness = await broker.readiness()
        guard let provider = await admin.providers(health: readiness.checks).first(where: { $0.id == id }) else {
            throw BrokerError(.notFound, .notFound, "No provider '\(id)'.")
        }
        var values = providerValues(provider, problem: broker.lastProblems()[id])
        values["diagnosable"] = broker.plugins.diagnosables[id] != nil
        values["hasSteps"] = !steps.isEmpty
        values["steps"] = steps.map { ["name": $0.name, "passed": $0.passed, "detail": $0.detail] as [String: Any] }
        values["fields"] = [
            ConsoleField.text("username", label: "Username (optional)", value: username ?? ""),
            ConsoleField.text("password", label: "Password (optional; signs the user in)", value: "", type: "password"),
        ]
        values["resources"] = try await resourceSections(session, owner: .provider(id), scope: .provider, ids: [id], attempt: attempt)
        return renderer.page(
            "provider", title: "Provider \(id)", values: values, session: session, current: "/admin/providers", notice: notice,
            error: attempt.map { Self.prefixed($0.error) }, status: attempt.map { HTTPResponse.Status(code: $0.error.httpStatus) } ?? .ok
        )
    }

    static let usersPerPage = 50

    /// The users page; with `directory` and `directorySearch`, also that provider's people who match
    /// (`DirectorySearching`), signed in or not yet. A directory that refuses or cannot be reached
    /// says so in that section, and the rest of the page stays.
    func usersPage(_ session: ConsoleSession, search: String, page: Int, directory: String? = nil, directorySearch: String = "") async throws -> Response {
        let trimmed = search.trimmingCharacters(in: .whitespaces)
        let offset = page * Self.usersPerPage
        // One more than a page tells whether there is a next one.
        let users =
            trimmed.isEmpty
            ? try await admin.users(limit: Self.usersPerPage + 1, offset: offset)
            : try await admin.users(matching: trimmed, limit: Self.usersPerPage + 1, offset: offset)
        let admins = try await admin.adminAccountIDs()
        let link = { (page: Int) in "/admin/users?q=\(Self.queryValue(trimmed))&page=\(page)" }
        return renderer.page(
            "users", title: "Users",
            values: [
                "query": trimmed,
                "users": users.prefix(Self.usersPerPage).map { user -> [String: Any] in
                    [
                        "id": user.id, "username": user.username, "identities": user.identities.map(\.provider).joined(separator: ", "),
                        "created": ConsoleRenderer.time(user.createdAt), "admin": admins.contains(user.id) ? "yes" : "", "disabled": user.disabled,
                    ]
                },
                "canCreate": !admin.passwordProviders.isEmpty,
                "previous": page > 0 ? link(page - 1) : false, "next": users.count > Self.usersPerPage ? link(page + 1) : false,
                "directories": admin.searchableDirectories.map { ["id": $0, "selected": $0 == directory] as [String: Any] },
                "hasDirectories": !admin.searchableDirectories.isEmpty, "directoryQuery": directorySearch,
                "directoryResult": await directoryResult(directory, directorySearch, by: session.admin),
            ],
            session: session, current: "/admin/users"
        )
    }

    /// The directory section's values: the people found, or why none could be.
    func directoryResult(_ directory: String?, _ text: String, by identity: AdminIdentity) async -> Any {
        guard let directory, !text.trimmingCharacters(in: .whitespaces).isEmpty else { return false }
        do {
            let result = try await admin.searchDirectory(providerID: directory, text: text, by: identity)
            return [
                "provider": directory, "truncated": result.truncated, "error": false,
                "people": result.people.map { person -> [String: Any] in
                    [
                        "username": person.username, "name": person.name ?? "", "email": person.email ?? "", "accountID": person.accountID ?? false,
                    ]
                },
            ] as [String: Any]
        } catch let error as BrokerError where error.kind != .internalFailure {
            return ["provider": directory, "truncated": false, "people": [Any](), "error": error.message] as [String: Any]
        } catch {
            // The rest of the page stays; the details are the log's.
            return ["provider": directory, "truncated": false, "people": [Any](), "error": "The search failed; try again, or see the broker's log."] as [String: Any]
        }
    }

    func userPage(_ session: ConsoleSession, id: String, notice: String?) async throws -> Response {
        let user = try await admin.user(id: id)
        let devices = try await broker.devices.devices(accountID: id)
        let sessions = try await admin.sessions(accountID: id)
        let fingerprint: (JSONValue?) -> String = { value in
            guard let object = value?.objectValue else { return "" }
            return ["email", "name", "preferred_username", "groups"].compactMap { key in object[key].map { "\(key): \(Self.text($0))" } }.joined(separator: "; ")
        }
        return renderer.page(
            "user", title: user.username,
            values: [
                "user": ["id": user.id, "testAccount": user.testAccount], "created": ConsoleRenderer.time(user.createdAt),
                "isAdmin": try await admin.isAdmin(accountID: id), "userID": id, "disabled": user.disabled,
                "disabledAt": user.disabledAt.map(ConsoleRenderer.time) ?? "", "disabledBy": user.disabledBy ?? "",
                "hasPassword": user.identities.contains { identity in admin.passwordProviders.contains { $0.id == identity.provider } },
                "identities": user.identities.map {
                    ["provider": $0.provider, "subject": $0.subject, "claims": fingerprint(.object($0.claims)), "lastSignIn": ConsoleRenderer.time($0.lastSignInAt)]
                },
                "devices": devices.map { record -> [String: Any] in
                    let apps = record.installations.map(\.appID).uniqued().joined(separator: ", ")
                    return [
                        "id": record.device.id, "created": ConsoleRenderer.time(record.device.createdAt), "csrf": session.csrfToken,
                        "summary":
                            "\(record.device.alias) · \(record.device.platform.rawValue)\(record.device.model.map { " · \($0)" } ?? "") · apps: \(apps) · \(record.keys.count) key(s)",
                    ]
                },
                "sessions": sessions.map { browserSession -> [String: Any] in
                    [
                        "id": browserSession.id, "authTime": ConsoleRenderer.time(browserSession.authTime), "lastSeen": ConsoleRenderer.time(browserSession.lastSeenAt),
                        "apps": browserSession.appIDs.joined(separator: ", "), "from": browserSession.clientIP ?? "", "csrf": session.csrfToken,
                    ]
                },
                "lockouts": try await lockoutRows(session, matching: user, returnTo: "/admin/users/\(id)"), "returnTo": "/admin/users/\(id)",
                "provisional": user.provisionalIdentities.map { ["email": $0.email, "app": $0.app, "state": $0.status] },
                "credentials": try await credentialSections(session, accountID: id),
            ],
            session: session, current: "/admin/users", notice: notice
        )
    }

    /// The credentials plugins keep for the account (resources with an `accountField`): one table per
    /// resource, each item with its remove button, which comes back to this page.
    func credentialSections(_ session: ConsoleSession, accountID: String) async throws -> [[String: Any]] {
        try await admin.accountResourceItems(accountID: accountID).map { offered, items in
            let declaration = offered.resource
            let columns = declaration.columns.filter { $0 != declaration.accountField }
            return [
                "summary": "\(declaration.summary) (\(offered.provider))", "columns": columns, "span": columns.count + 1,
                "items": items.map { item -> [String: Any] in
                    let object = item.objectValue ?? [:]
                    let key = declaration.itemKey.map { ["name": $0, "value": Self.text(object[$0])] }
                    return [
                        "cells": columns.map { Self.text(object[$0]) },
                        "removeLink": "/admin/resources/providers/\(offered.provider)/\(declaration.name)/remove?"
                            + Self.keyQuery(key, returnTo: "/admin/users/\(accountID)"),
                        "label": key.map { $0["value"] ?? "" }.joined(separator: " "), "removable": !declaration.itemKey.isEmpty,
                    ]
                },
            ]
        }
    }

    /// Lockouts, all or those about one user (the account the key names, or an identity's subject).
    func lockoutRows(_ session: ConsoleSession, matching user: AdminService.UserView?, returnTo: String) async throws -> [[String: Any]] {
        try await admin.lockouts().filter { lockout in
            guard let user else { return true }
            return lockout.accountID == user.id || user.identities.contains { $0.subject == lockout.subject }
        }.map {
            [
                "accountID": $0.accountID ?? false, "username": $0.username ?? "", "subject": $0.subject ?? $0.key, "what": $0.what, "provider": $0.provider ?? "",
                "until": ConsoleRenderer.time($0.lockedUntil), "permanent": $0.permanent, "count": $0.lockouts, "keyQuery": Self.queryValue($0.key),
                "returnQuery": Self.queryValue(returnTo), "label": Self.lockoutDescription($0),
            ]
        }
    }
}
