import Foundation

/// An identity provider whose people an administrator can search before they ever sign in (the
/// console's users page, `GET /admin/v1/providers/{id}/directory`): a directory (LDAP, Active
/// Directory) or a provider that keeps its own users (`local`).
public protocol DirectorySearching: IdentityProvider {
    /// The people whose username, name or email address contains `text` (compared as the
    /// directory compares, usually without letter case), at most `limit` of them. `text` is what an
    /// administrator typed: it must match itself only (`*` is no wildcard).
    func searchDirectory(_ text: String, limit: Int) async throws -> DirectorySearch
}

/// What a directory search found.
public struct DirectorySearch: Sendable, Hashable {
    /// The people found, at most the search's limit.
    public var people: [DirectoryPerson]
    /// There were more than the limit: the administrator should type more.
    public var truncated: Bool

    /// A result.
    public init(people: [DirectoryPerson], truncated: Bool = false) {
        self.people = people
        self.truncated = truncated
    }
}

/// One person a directory search found: the identity a sign-in through the provider would link
/// (`subject`), and what an administrator recognises them by.
public struct DirectoryPerson: Sendable, Hashable {
    /// The identity's subject, as a sign-in would link it.
    public var subject: String
    public var username: String
    public var name: String?
    public var email: String?

    /// A person.
    public init(subject: String, username: String, name: String? = nil, email: String? = nil) {
        self.subject = subject
        self.username = username
        self.name = name
        self.email = email
    }
}
