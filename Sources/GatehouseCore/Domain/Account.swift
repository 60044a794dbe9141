import Foundation

/// A person (or device owner) known to the broker. Identities from providers link to it; tokens name it
/// by `id` in their `sub`.
public struct Account: Sendable, Hashable, Codable {
    public var id: String
    public var username: String
    public var createdAt: Date
    /// Created with a test registration key (for integration tests of an app), not by a real person.
    public var isTest: Bool

    public init(id: String, username: String, createdAt: Date, isTest: Bool = false) {
        self.id = id
        self.username = username
        self.createdAt = createdAt
        self.isTest = isTest
    }
}

/// The link between an identity at one provider instance and an account: (provider, subject) is unique.
public struct IdentityLink: Sendable, Hashable, Codable {
    public var providerID: String
    public var subject: String
    public var accountID: String
    public var claims: [String: JSONValue]
    public var createdAt: Date
    public var lastSignInAt: Date

    public init(providerID: String, subject: String, accountID: String, claims: [String: JSONValue], createdAt: Date, lastSignInAt: Date) {
        self.providerID = providerID
        self.subject = subject
        self.accountID = accountID
        self.claims = claims
        self.createdAt = createdAt
        self.lastSignInAt = lastSignInAt
    }
}

/// A verified identity as an identity provider reports it: which provider instance, the subject that
/// is stable at that provider, and the claims it vouches for.
public struct ExternalIdentity: Sendable, Hashable, Codable {
    public var providerID: String
    public var subject: String
    /// The name the person signs in with; becomes the account's username when the account is created.
    public var username: String
    public var claims: [String: JSONValue]

    public init(providerID: String, subject: String, username: String, claims: [String: JSONValue] = [:]) {
        self.providerID = providerID
        self.subject = subject
        self.username = username
        self.claims = claims
    }
}
