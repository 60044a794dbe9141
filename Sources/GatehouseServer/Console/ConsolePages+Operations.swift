import Foundation
import GatehouseCore
import Hummingbird

/// Signing keys (rotation after a recent sign-in) and the audit log with its filters and pages.
extension ConsolePages {
    static let auditPerPage = 50

    func addOperationsRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("admin/keys") { request, context in
            try await page(request, context) { session in
                let keys = try await admin.signingKeys()
                return renderer.page(
                    "keys", title: "Signing keys",
                    values: [
                        "keys": keys.map { key -> [String: Any] in
                            var state = key.state
                            if let from = key.activatesAt, key.state == "pending" { state += ", signs from \(ConsoleRenderer.time(from))" }
                            if let until = key.publishedUntil { state += ", published until \(ConsoleRenderer.time(until))" }
                            return [
                                "kid": key.kid, "algorithm": key.algorithm, "accessTokens": key.signsAccessTokens, "created": ConsoleRenderer.time(key.createdAt),
                                "state": state,
                            ]
                        }
                    ],
                    session: session, current: "/admin/keys", notice: Self.notice(request)
                )
            }
        }
        router.get("admin/keys/rotate") { request, context in
            try await page(request, context) { session in
                confirmation(
                    session, title: "Rotate the signing keys",
                    description:
                        "New keys are published at once and sign from 90 seconds later, when every node and every client's cached JWKS knows them; the old keys stay published until the tokens they signed have expired. Choose 'at once' only for a key you believe compromised.",
                    action: "/admin/keys/rotate", confirmLabel: "Rotate the keys", cancel: "/admin/keys", returnTo: "/admin/keys/rotate",
                    fields: [ConsoleField.checkbox("immediately", label: "Sign with the new keys at once (a compromised key)", checked: false)]
                )
            }
        }
        router.post("admin/keys/rotate") { request, context in
            try await action(request, context, dangerous: true, back: "/admin/keys/rotate") { session, form in
                _ = try await admin.rotateSigningKeys(immediately: form["immediately"] == "on", by: session.admin, via: "console")
                return Self.done("/admin/keys", .rotated)
            }
        }
        router.get("admin/audit") { request, context in try await page(request, context) { session in try await auditPage(session, request) } }
    }

    func auditPage(_ session: ConsoleSession, _ request: Request) async throws -> Response {
        let parameters = request.uri.queryParameters
        func value(_ name: String) -> String? {
            parameters.get(name).map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        var issues: [ConfigIssue] = []
        func time(_ name: String) -> Date? {
            guard let text = value(name) else { return nil }
            // `datetime-local` sends 2026-11-24T10:00 (read as UTC); RFC 3339 works too.
            for candidate in [text, text + ":00Z", text + "Z"] {
                if let date = try? Date(candidate, strategy: .iso8601) { return date }
            }
            issues.append(ConfigIssue(path: name, "not a time: use 2026-11-24T10:00 (UTC) or RFC 3339"))
            return nil
        }
        let page = min(max(parameters.get("page", as: Int.self) ?? 0, 0), 100_000)
        var query = AuditQuery(
            type: value("type"), appID: value("app"), admin: value("admin"), since: time("since"), until: time("until"), limit: Self.auditPerPage + 1,
            offset: page * Self.auditPerPage
        )
        // A person: an account id, or a username (every account of that name).
        var accountNames: [String: String] = [:]
        if let person = value("user") {
            let matches = try await admin.users(matching: person, limit: 20, offset: 0).filter { $0.id == person || $0.username == person }
            query.accountID = matches.first?.id ?? person
        }
        let error = issues.isEmpty ? nil : BrokerError(.invalidRequest, .badRequest, "Some filters are not valid.", issues: issues)
        let events = error == nil ? try await admin.audit(query) : []
        for id in Set(events.compactMap(\.accountID)) where accountNames[id] == nil {
            accountNames[id] = try await broker.store.account(id: id)?.username
        }
        let names: Set<String> = ["type", "app", "user", "admin", "since", "until"]
        let errors = error.map { ConsoleRenderer.fieldErrors($0, names: names) } ?? [:]
        let fields: [[String: Any]] = [
            ConsoleField.text(
                "type", label: "Event type", value: value("type") ?? "", hint: "e.g. policy.updated, or policy. for every type under it", error: errors["type"]),
            ConsoleField.text("app", label: "App id", value: value("app") ?? "", error: errors["app"]),
            ConsoleField.text("user", label: "Person concerned (username or account id)", value: value("user") ?? "", error: errors["user"]),
            ConsoleField.text("admin", label: "Changed by (admin name)", value: value("admin") ?? "", error: errors["admin"]),
            ConsoleField.text("since", label: "From (UTC)", value: value("since") ?? "", error: errors["since"], type: "datetime-local"),
            ConsoleField.text("until", label: "Until (UTC)", value: value("until") ?? "", error: errors["until"], type: "datetime-local"),
        ]
        let filters = names.sorted().compactMap { name in value(name).map { "\(name)=\(Self.queryValue($0))" } }.joined(separator: "&")
        let link = { (page: Int) in "/admin/audit?\(filters)\(filters.isEmpty ? "" : "&")page=\(page)" }
        return renderer.page(
            "audit", title: "Audit log",
            values: [
                "fields": fields,
                "events": events.prefix(Self.auditPerPage).map { event -> [String: Any] in
                    let details = event.details.filter { $0.key != "admin" && $0.key != "adminAccount" }.sorted { $0.key < $1.key }
                    let changes = AuditChange.of(event)
                    let isChange = event.details["before"] != nil && event.details["after"] != nil
                    return [
                        "time": ConsoleRenderer.time(event.time), "type": event.type, "outcome": event.outcome ?? false, "app": event.appID ?? "",
                        "account": event.accountID.map { accountNames[$0] ?? $0 } ?? "", "admin": event.details["admin"] ?? "",
                        "hasChanges": !changes.isEmpty, "noChange": isChange && changes.isEmpty,
                        "changes": changes.map { change -> [String: Any] in
                            [
                                "path": change.path, "list": !change.added.isEmpty || !change.removed.isEmpty, "added": change.added, "removed": change.removed,
                                "before": change.before ?? "(none)", "after": change.after ?? "(none)",
                            ]
                        },
                        "hasDetails": !details.isEmpty, "count": details.count,
                        "details": details.map { key, value -> [String: Any] in
                            let json = Self.prettyJSON(value)
                            return ["key": key, "value": json ?? value, "json": json != nil]
                        },
                    ]
                },
                "previous": page > 0 ? link(page - 1) : false, "next": events.count > Self.auditPerPage ? link(page + 1) : false,
            ],
            session: session, current: "/admin/audit", error: error, fieldNames: names, status: error == nil ? .ok : .badRequest
        )
    }

    /// A detail that holds a JSON object or array, indented for reading; nil for any other text.
    static func prettyJSON(_ text: String) -> String? {
        guard text.hasPrefix("{") || text.hasPrefix("["), let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
