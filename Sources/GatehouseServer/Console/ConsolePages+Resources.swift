import Foundation
import GatehouseCore
import Hummingbird

/// Plugin operations, rendered generically from what each plugin declares (`AdminResource`), as the
/// sign-in pages render challenges: a table of the items with the declared columns, a remove button
/// per item (after a recent sign-in when the plugin calls removal dangerous), and a form of the
/// declared create fields. A value the plugin shows once (a generated key) appears once.
extension ConsolePages {
    /// A refused "add", shown again in its form.
    struct ResourceAttempt {
        var resource: String
        var values: [String: String]
        var error: BrokerError
    }

    func addResourceRoutes(to router: Router<GatehouseRequestContext>) {
        router.post("admin/resources/:kind/:owner/:resource/add") { request, context in
            let (owner, back) = Self.owner(context)
            let resource = try context.parameters.require("resource")
            return try await action(request, context, back: back) { session, form in
                guard let owner else { throw Self.noSuchPage }
                let declaration = try await admin.resourceItems(resource, of: owner).declaration
                var fields: [String: JSONValue] = [:]
                for field in declaration.createFields {
                    if let value = form["field.\(field.name)"], !value.isEmpty { fields[field.name] = .string(value) }
                }
                do {
                    let change = try await admin.createResourceItem(resource, of: owner, fields: fields, by: session.admin)
                    if let shownOnce = change.shownOnce {
                        return renderer.page(
                            "secretShown", title: "Added to \(declaration.summary)",
                            values: ["intro": "Added. This value is shown once:", "secret": shownOnce, "next": back],
                            session: session
                        )
                    }
                    return Self.done(back, .added)
                } catch let error as BrokerError where error.code == .invalidRequest || error.code == .conflict {
                    let attempt = ResourceAttempt(resource: resource, values: form, error: error)
                    switch owner {
                    case .app(let id): return try await appPage(session, id: id, attempt: attempt)
                    case .provider(let id): return try await providerPage(session, id: id, attempt: attempt)
                    }
                }
            }
        }
        // Removing asks first, like every other removal in the console.
        router.get("admin/resources/:kind/:owner/:resource/remove") { request, context in
            let (owner, back) = Self.owner(context)
            let resource = try context.parameters.require("resource")
            return try await page(request, context) { session in
                guard let owner else { throw Self.noSuchPage }
                let declaration = try await admin.resourceItems(resource, of: owner).declaration
                let query = request.uri.queryParameters
                let keys = declaration.itemKey.map { (name: $0, value: query.get("key.\($0)") ?? "") }
                let returnTo = query.get("return").map { AdminConsoleService.safeReturn(String($0)) } ?? back
                let item = keys.map { "\($0.name) \($0.value)" }.joined(separator: ", ")
                return confirmation(
                    session, title: "Remove from \(declaration.summary)",
                    description: "The item \(item) goes from \(declaration.summary.lowercasedFirst); what it allowed stops working.",
                    action: request.uri.path, confirmLabel: "Remove", cancel: returnTo, returnTo: returnTo,
                    fields: keys.map { ConsoleField.hidden("key.\($0.name)", value: $0.value) } + [ConsoleField.hidden("return", value: returnTo)],
                    needsRecentSignIn: declaration.dangerous)
            }
        }
        router.post("admin/resources/:kind/:owner/:resource/remove") { request, context in
            let (owner, back) = Self.owner(context)
            let resource = try context.parameters.require("resource")
            return try await action(request, context, back: back) { session, form in
                guard let owner else { throw Self.noSuchPage }
                // Looked up only for a signed-in admin: the declaration names what the plugin keeps.
                let declaration = try await admin.resourceItems(resource, of: owner).declaration
                if declaration.dangerous { try console.requireRecentSignIn(session) }
                let key = declaration.itemKey.map { form["key.\($0)"] ?? "" }
                _ = try await admin.deleteResourceItem(resource, of: owner, key: key, by: session.admin)
                // A credential removed from a user's page goes back there.
                return Self.done(form["return"].map { AdminConsoleService.safeReturn($0) } ?? back, .removed)
            }
        }
    }

    /// Whose resource the path names (nil for neither an app nor a provider), and its page. Checked
    /// inside `action`, so that the session and CSRF token come first and a refusal is a page.
    static func owner(_ context: GatehouseRequestContext) -> (AdminService.ResourceOwner?, String) {
        let id = context.parameters.get("owner") ?? ""
        switch context.parameters.get("kind") {
        case "apps": return (.app(id), "/admin/apps/\(id)")
        case "providers": return (.provider(id), "/admin/providers/\(id)")
        default: return (nil, "/admin/")
        }
    }

    static let noSuchPage = BrokerError(.notFound, .notFound, "No such page.")

    /// The resource sections of an owner's page: every resource the owner's plugins declare for
    /// `scope`, with its items.
    func resourceSections(_ session: ConsoleSession, owner: AdminService.ResourceOwner, scope: AdminResource.Scope, ids: [String], attempt: ResourceAttempt? = nil)
        async throws -> [[String: Any]]
    {
        var sections: [[String: Any]] = []
        var seen: Set<String> = []
        for offered in admin.offeredResources() where ids.contains(offered.provider) && offered.resource.scope == scope {
            guard seen.insert(offered.resource.name).inserted else { continue }
            let declaration = offered.resource
            let items = try await admin.resourceItems(declaration.name, of: owner).items
            let (kind, ownerID) =
                switch owner {
                case .app(let id): ("apps", id)
                case .provider(let id): ("providers", id)
                }
            let base = "/admin/resources/\(kind)/\(ownerID)/\(declaration.name)"
            let failed = attempt?.resource == declaration.name ? attempt : nil
            let names = Set(declaration.createFields.map { "field.\($0.name)" })
            let errors = failed.map { ConsoleRenderer.fieldErrors(Self.prefixed($0.error), names: names) } ?? [:]
            sections.append([
                "summary": "\(declaration.summary) (\(offered.provider))", "columns": declaration.columns, "span": declaration.columns.count + 1,
                "createAction": base + "/add", "open": failed != nil, "creatable": declaration.creatable,
                "items": items.map { item -> [String: Any] in
                    let object = item.objectValue ?? [:]
                    let key = declaration.itemKey.map { ["name": $0, "value": Self.text(object[$0])] }
                    return [
                        "cells": declaration.columns.map { Self.text(object[$0]) }, "removeLink": base + "/remove?" + Self.keyQuery(key, returnTo: nil),
                        "label": key.map { $0["value"] ?? "" }.joined(separator: " "),
                    ]
                },
                "fields": declaration.createFields.map { field in
                    field.fromFile
                        ? ConsoleField.textarea(
                            "field.\(field.name)", label: field.name, lines: Self.lines(failed?.values["field.\(field.name)"]), hint: field.summary,
                            error: errors["field.\(field.name)"], rows: 6)
                        : ConsoleField.text(
                            "field.\(field.name)", label: field.name, value: failed?.values["field.\(field.name)"] ?? "", hint: field.summary,
                            error: errors["field.\(field.name)"])
                },
            ])
        }
        return sections
    }

    /// The query of a removal's confirmation page: the item's key fields, and where to come back to.
    static func keyQuery(_ key: [[String: String]], returnTo: String?) -> String {
        (key.map { "key.\(queryValue($0["name"] ?? ""))=\(queryValue($0["value"] ?? ""))" } + (returnTo.map { ["return=\(queryValue($0))"] } ?? []))
            .joined(separator: "&")
    }

    /// Plugins name fields by their own names; the form names them `field.<name>`.
    static func prefixed(_ error: BrokerError) -> BrokerError {
        var copy = error
        copy.issues = error.issues.map { ConfigIssue(path: "field." + $0.path, $0.message) }
        return copy
    }

    static func text(_ value: JSONValue?) -> String { AccountPageService.text(value) }
}
