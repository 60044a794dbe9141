import Foundation

/// A SCIM client: an identity provider (Entra ID, Okta) that provisions accounts with a bearer token
/// an administrator issued. Only the token's digest is stored.
public struct ScimClientRecord: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    /// SHA-256 (hex) of the bearer token.
    public var tokenDigest: String
    public var createdAt: Date
    /// Who issued it (`admin:<name>`, `cli`).
    public var createdBy: String

    public init(id: String, name: String, tokenDigest: String, createdAt: Date, createdBy: String) {
        self.id = id
        self.name = name
        self.tokenDigest = tokenDigest
        self.createdAt = createdAt
        self.createdBy = createdBy
    }
}

/// The two SCIM resource types Gatehouse keeps (RFC 7643 section 4).
public enum ScimKind: String, Sendable, Codable, CaseIterable {
    case user = "User"
    case group = "Group"
}

/// One provisioned user or group, as one SCIM client keeps it: its attributes as the client sent
/// them (normalised), with what the broker needs indexed beside them.
public struct ScimResourceRecord: Sendable, Hashable {
    public var id: String
    public var clientID: String
    public var kind: ScimKind
    /// `userName` of a user, `displayName` of a group.
    public var name: String
    public var externalID: String?
    /// The account a user provisions; nil for groups.
    public var accountID: String?
    /// A user's `active`; groups are always active.
    public var active: Bool
    /// The resource's attributes without `id`, `meta` and `schemas` (those are the broker's).
    public var attributes: [String: JSONValue]
    /// A group's members: ids of users of the same client.
    public var members: [String]
    /// Grows by one with every write: the ETag is `W/"<version>"`.
    public var version: Int
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, clientID: String, kind: ScimKind, name: String, externalID: String?, accountID: String?, active: Bool, attributes: [String: JSONValue],
        members: [String], version: Int, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.clientID = clientID
        self.kind = kind
        self.name = name
        self.externalID = externalID
        self.accountID = accountID
        self.active = active
        self.attributes = attributes
        self.members = members
        self.version = version
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The key `name` is unique under (per client, users only): SCIM's `userName` ignores case.
    public var nameKey: String { name.lowercased() }
}

/// How a conditional write of a resource ended.
public enum ScimWrite: Sendable, Equatable {
    case written
    /// Another write came first (the version moved on).
    case versionMismatch
    /// Another user of the client has that `userName`.
    case nameTaken
    /// The resource is gone.
    case gone
}

/// The attribute of a provisioned user that meets an identity at sign-in (`scim.links`).
public enum ScimLinkAttribute: String, Sendable, Codable, CaseIterable {
    case userName
    case externalId
}
