import GatehousePluginKit

/// Administrators see every registered credential (never anything secret: public keys are not shown
/// either) with the account it belongs to, and remove one.
extension WebAuthnProvider {
    public var adminResources: [AdminResource] {
        [
            AdminResource(
                name: "credentials", scope: .provider, summary: "Passkeys and security keys (registered by their people; removing one stops it signing in)",
                itemKey: ["credential"], columns: ["name", "account", "createdAt", "lastUsedAt", "backupState", "authenticator"], dangerous: true, creatable: false,
                accountField: "account"
            )
        ]
    }

    public func listItems(of resource: String, app: AppView?) async throws -> [JSONValue] {
        guard resource == "credentials" else { throw BrokerError(.notFound, .notFound, "No resource '\(resource)'.") }
        var items: [JSONValue] = []
        for credential in try await book.all() {
            items.append(credential.summary(account: try await book.accountID(ofHandle: credential.userHandle)))
        }
        return items
    }

    public func deleteItem(from resource: String, key: [String], app: AppView?, by admin: String) async throws -> AdminChange {
        guard resource == "credentials", key.count == 1 else { throw BrokerError(.notFound, .notFound, "No resource '\(resource)'.") }
        guard let stored = try await book.credential(key[0]) else { throw BrokerError(.notFound, .notFound, "No credential '\(key[0])'.") }
        let account = try await book.accountID(ofHandle: stored.value.userHandle)
        guard let removed = try await book.remove(key[0]) else { throw BrokerError(.notFound, .notFound, "No credential '\(key[0])'.") }
        return AdminChange(item: removed.summary(account: account), event: "credential_removed", details: ["credential": removed.id], accountID: account)
    }
}
