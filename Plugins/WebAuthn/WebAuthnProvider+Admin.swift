import GatehousePluginKit

/// Administrators see every registered credential (never anything secret: public keys are not shown
/// either) with the account it belongs to, and remove one.
extension WebAuthnProvider {
    public var adminResources: [AdminResource] {
        [
            AdminResource(
                name: "credentials", scope: .provider, summary: "Passkeys and security keys (registered by their people; removing one stops it signing in)",
                itemKey: ["credential"], columns: ["name", "account", "createdAt", "lastUsedAt", "backupState", "authenticator"], dangerous: true,
                accountField: "account", list: { _ in try await listCredentials() }, delete: { key, _, _ in try await removeCredential(key[0]) }
            )
        ]
    }

    func listCredentials() async throws -> [JSONValue] {
        var items: [JSONValue] = []
        for credential in try await book.all() {
            items.append(credential.summary(account: try await book.accountID(ofHandle: credential.userHandle)))
        }
        return items
    }

    func removeCredential(_ id: String) async throws -> AdminChange {
        guard let stored = try await book.credential(id) else { throw BrokerError(.notFound, .notFound, "No credential '\(id)'.") }
        let account = try await book.accountID(ofHandle: stored.value.userHandle)
        guard let removed = try await book.remove(id) else { throw BrokerError(.notFound, .notFound, "No credential '\(id)'.") }
        return AdminChange(item: removed.summary(account: account), event: "credential_removed", details: ["credential": removed.id], accountID: account)
    }
}
