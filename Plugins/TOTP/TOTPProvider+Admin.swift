import GatehousePluginKit

/// Administrators see every account's authenticator app (never its secret) and reset one: the
/// enrolment and its recovery codes go, the account's lock and wrong guesses are lifted, and the next
/// sign-in that needs the app sets one up.
extension TOTPProvider {
    public var adminResources: [AdminResource] {
        [
            AdminResource(
                name: "enrollments", scope: .provider,
                summary: "Authenticator apps (set up by their people at sign-in; removing one resets it: the next sign-in sets one up again)",
                itemKey: ["account"], columns: ["account", "username", "createdAt", "lastUsedAt", "recoveryCodesLeft"], dangerous: true,
                creatable: false, accountField: "account"
            )
        ]
    }

    public func listItems(of resource: String, app: AppView?) async throws -> [JSONValue] {
        guard resource == "enrollments" else { throw BrokerError(.notFound, .notFound, "No resource '\(resource)'.") }
        return try await book.all().map { $0.enrolment.summary(accountID: $0.accountID) }
    }

    public func deleteItem(from resource: String, key: [String], app: AppView?, by admin: String) async throws -> AdminChange {
        guard resource == "enrollments", key.count == 1 else { throw BrokerError(.notFound, .notFound, "No resource '\(resource)'.") }
        let accountID = key[0]
        guard let enrolment = try await book.enrolment(for: accountID), try await book.remove(for: accountID) else {
            throw BrokerError(.notFound, .notFound, "Account '\(accountID)' has no authenticator app.")
        }
        // The person sets an app up anew: a lock earned with the old one no longer applies.
        try await book.unlock(accountID: accountID)
        return AdminChange(item: enrolment.value.summary(accountID: accountID), event: "reset", details: ["account": accountID], accountID: accountID)
    }
}
