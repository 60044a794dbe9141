import Foundation

/// Searching a provider's people before they sign in (`DirectorySearching`): the console's users
/// page and `GET /admin/v1/providers/{id}/directory`.
extension AdminService {
    /// One person a directory search found, with the account their identity is linked to, if any.
    public struct DirectoryEntry: Sendable, Hashable, Codable {
        public var subject: String
        public var username: String
        public var name: String?
        public var email: String?
        /// The account a sign-in with this identity reaches; nil before the person's first sign-in.
        public var accountID: String?
    }

    /// What a search answered: the people, and whether there were more than `limit`.
    public struct DirectoryResult: Sendable, Hashable, Codable {
        public var provider: String
        public var people: [DirectoryEntry]
        public var truncated: Bool
    }

    /// The longest search text: a search is a few letters of a name, not a document.
    public static let directorySearchMaxLength = 100
    /// The most people one search answers.
    public static let directorySearchLimit = 50

    /// The instances whose people can be searched, by id.
    public var searchableDirectories: [String] { plugins.directories.keys.sorted() }

    /// Searches `providerID`'s people for `text` (at least one character, at most
    /// `directorySearchMaxLength`), at most `limit` of them (1 to `directorySearchLimit`). Audited as
    /// `directory.searched` (who looked, where, how many were found; not the text, which may be a name).
    public func searchDirectory(providerID: String, text: String, limit: Int = 20, by admin: AdminIdentity) async throws -> DirectoryResult {
        guard let directory = plugins.directories[providerID] else {
            if plugins.all[providerID] == nil { throw BrokerError(.notFound, .notFound, "No provider '\(providerID)'.") }
            throw BrokerError(
                .invalidRequest, .badRequest, "The provider '\(providerID)' cannot search its people; searchable: \(searchableDirectories.joined(separator: ", ")).")
        }
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        // Characters for the person typing, bytes for the directory (a letter may carry many marks).
        guard !text.isEmpty, text.count <= Self.directorySearchMaxLength, text.utf8.count <= Self.directorySearchMaxLength * 4 else {
            throw BrokerError(.invalidRequest, .badRequest, "query must be 1 to \(Self.directorySearchMaxLength) characters.")
        }
        guard (1...Self.directorySearchLimit).contains(limit) else {
            throw BrokerError(.invalidRequest, .badRequest, "limit must be between 1 and \(Self.directorySearchLimit).")
        }
        let found = try await directory.searchDirectory(text, limit: limit)
        var people: [DirectoryEntry] = []
        for person in found.people.prefix(limit) {
            let link = try await store.identityLink(providerID: providerID, subject: person.subject)
            people.append(DirectoryEntry(subject: person.subject, username: person.username, name: person.name, email: person.email, accountID: link?.accountID))
        }
        let result = DirectoryResult(provider: providerID, people: people, truncated: found.truncated || found.people.count > limit)
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: "directory.searched", providerID: providerID,
                details: admin.auditDetails.merging(["found": String(people.count), "truncated": String(result.truncated)]) { first, _ in first }))
        return result
    }
}
