import Foundation

/// An account's browser sessions for admins: list them, end one or all (on every node at once, with
/// back-channel logout to the apps that got tokens in them).
extension AdminService {
    public func sessions(accountID: String) async throws -> [BrowserSession] {
        guard try await store.account(id: accountID) != nil else { throw BrokerError(.notFound, .notFound, "No user '\(accountID)'.") }
        return try await oauth.sessions.sessions(accountID: accountID)
    }

    /// Ends one session (`sessionID`) or every session of the account; returns how many ended.
    /// `wait`: return once the apps were told (the CLI, which exits afterwards).
    public func endSessions(accountID: String, sessionID: String?, by admin: AdminIdentity, wait: Bool = false) async throws -> Int {
        guard try await store.account(id: accountID) != nil else { throw BrokerError(.notFound, .notFound, "No user '\(accountID)'.") }
        guard let sessionID else { return try await oauth.sessions.endAll(accountID: accountID, reason: "admin", actor: admin.name, wait: wait) }
        guard try await oauth.sessions.end(sessionID: sessionID, accountID: accountID, reason: "admin", actor: admin.name, wait: wait) else {
            throw BrokerError(.notFound, .notFound, "No open session '\(sessionID)' of user '\(accountID)'.")
        }
        return 1
    }
}
