/// The resources plugins let administrators manage (`AdminResourceOffering`), for the admin API and
/// the CLI alike: found by name on a provider instance or on an app's providers, changed with an
/// audit event the plugin names.
extension AdminService {
    /// Where a resource lives: on a provider instance, or on an app (kept by one of its providers).
    public enum ResourceOwner: Sendable, Hashable {
        case provider(String)
        case app(String)
    }

    /// One resource a plugin instance offers, as `gatehouse resources` lists them.
    public struct OfferedResource: Sendable, Encodable {
        public var provider: String
        public var type: String
        public var resource: AdminResource
    }

    /// Every resource every plugin instance offers, by provider id.
    public func offeredResources() -> [OfferedResource] {
        plugins.adminResources.keys.sorted().flatMap { id -> [OfferedResource] in
            plugins.adminResources[id, default: []].map { OfferedResource(provider: id, type: plugins.typeNames[id] ?? "", resource: $0) }
        }
    }

    /// The items of a resource, with its declaration (whose `columns` a table shows).
    public func resourceItems(_ resource: String, of owner: ResourceOwner) async throws -> (declaration: AdminResource, items: [JSONValue]) {
        let (_, declaration, app) = try await resolve(resource, of: owner)
        return (declaration, try await declaration.list(app?.view))
    }

    /// The items of every provider resource of people's credentials (`accountField`) that belong to
    /// one account, by provider: what the console's user page lists.
    public func accountResourceItems(accountID: String) async throws -> [(offered: OfferedResource, items: [JSONValue])] {
        var found: [(OfferedResource, [JSONValue])] = []
        for offered in offeredResources() where offered.resource.scope == .provider {
            guard let field = offered.resource.accountField else { continue }
            let items = try await offered.resource.list(nil).filter { $0[field] == .string(accountID) }
            found.append((offered, items))
        }
        return found
    }

    public func createResourceItem(_ resource: String, of owner: ResourceOwner, fields: [String: JSONValue], by admin: AdminIdentity) async throws -> AdminChange {
        let (plugin, declaration, app) = try await resolve(resource, of: owner)
        guard let create = declaration.create else {
            throw BrokerError(.invalidRequest, .badRequest, "Items of '\(resource)' are not added by administrators: \(declaration.summary)")
        }
        let change = try await create(fields, app?.view, admin.name)
        try await audit(change, plugin: plugin, appID: app?.id, admin: admin)
        return change
    }

    public func deleteResourceItem(_ resource: String, of owner: ResourceOwner, key: [String], by admin: AdminIdentity) async throws -> AdminChange {
        let (plugin, declaration, app) = try await resolve(resource, of: owner)
        guard !declaration.itemKey.isEmpty, let delete = declaration.delete else {
            throw BrokerError(.invalidRequest, .badRequest, "Items of '\(resource)' cannot be removed.")
        }
        guard key.count == declaration.itemKey.count else {
            throw BrokerError(.invalidRequest, .badRequest, "An item of '\(resource)' is named by \(declaration.itemKey.joined(separator: " and ")).")
        }
        let change = try await delete(key, app?.view, admin.name)
        try await audit(change, plugin: plugin, appID: app?.id, admin: admin)
        return change
    }

    /// The plugin that keeps `resource` for `owner`: the named provider, or the first of the app's
    /// providers and authenticators that offers it.
    private func resolve(_ resource: String, of owner: ResourceOwner) async throws -> (String, AdminResource, App?) {
        switch owner {
        case .provider(let id):
            guard let declaration = plugins.adminResources[id]?.first(where: { $0.name == resource && $0.scope == .provider })
            else { throw BrokerError(.notFound, .notFound, "The provider '\(id)' offers no resource '\(resource)'.") }
            return (id, declaration, nil)
        case .app(let appID):
            let app = try await existingApp(appID)
            for id in app.policy.identityProviders + app.policy.authenticators {
                if let declaration = plugins.adminResources[id]?.first(where: { $0.name == resource && $0.scope == .app }) {
                    return (id, declaration, app)
                }
            }
            throw BrokerError(.notFound, .notFound, "None of the app '\(appID)''s providers offers a resource '\(resource)'.")
        }
    }

    /// Audits a plugin's change as `<plugin type>.<event>`, naming the admin who made it.
    func audit(_ change: AdminChange, plugin: String, appID: String?, admin: AdminIdentity) async throws {
        let type = plugins.typeNames[plugin] ?? plugin
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: "\(type).\(change.event)", appID: appID, accountID: change.accountID, providerID: plugin,
                details: change.details.merging(admin.auditDetails) { _, admin in admin }
            )
        )
    }

    /// Removes what admins who are no longer configured added, where a plugin keeps such things
    /// (`Departure.admins`); each removal is audited under `system`, naming the admin it belonged to.
    /// `remaining`: the names of the admin credentials configured now.
    public func removeWhatDepartedAdminsAdded(remaining: Set<String>) async throws -> Int {
        var count = 0
        for (id, plugin) in plugins.forgetting {
            for change in try await plugin.forget(.admins(remaining: remaining)) {
                try await audit(change, plugin: id, appID: change.details["app"], admin: AdminIdentity(name: "system"))
                count += 1
            }
        }
        return count
    }
}
