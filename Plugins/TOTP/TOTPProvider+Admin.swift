import GatehousePluginKit

/// Administrators see every account's authenticator app (never its secret) and reset one: the
/// enrolment and its recovery codes go, the account's lock and wrong guesses are lifted, and the next
/// sign-in that needs the app sets one up.
extension TOTPProvider: AdminResourceOffering {
    public var adminResources: [AdminResource] {
        [
            AdminResource(
                name: "enrollments", scope: .provider,
                summary: "Authenticator apps (set up by their people at sign-in; removing one resets it: the next sign-in sets one up again)",
                itemKey: ["account"], columns: ["account", "username", "createdAt", "lastUsedAt", "recoveryCodesLeft"], dangerous: true,
                accountField: "account", list: { _ in try await listEnrollments() }, delete: { key, _, _ in try await reset(accountID: key[0]) }
            )
        ]
    }

    func listEnrollments() async throws -> [JSONValue] {
        try await book.all().map { $0.enrollment.summary(accountID: $0.accountID) }
    }

    func reset(accountID: String) async throws -> AdminChange {
        guard let enrollment = try await book.enrollment(for: accountID), try await book.remove(for: accountID) else {
            throw BrokerError(.notFound, .notFound, "Account '\(accountID)' has no authenticator app.")
        }
        // The person sets an app up anew: a lock earned with the old one no longer applies.
        try await book.unlock(accountID: accountID)
        return AdminChange(item: enrollment.value.summary(accountID: accountID), event: "reset", details: ["account": accountID], accountID: accountID)
    }
}
