import Foundation

/// An identity for an email address that has not signed up yet (the idea comes from Tanker): an app
/// creates it, shares its public `id`, and grants it data and group memberships. When the person has
/// an account and proves the address, it is attached to that account, with everything granted to it,
/// and never to another account.
public struct ProvisionalIdentity: Sendable, Hashable, Codable {
    public var id: String
    /// The app that created it; only that app and its signed-in accounts see it.
    public var appID: String
    public var email: EmailAddress
    /// App-defined permissions (`doc:42:read`), kept in the order first granted.
    public var grants: [String]
    public var groups: [String]
    public var createdAt: Date
    /// `app:<id>` or `admin:<name>`.
    public var createdBy: String
    public var accountID: String?
    public var attachedAt: Date?

    public init(
        id: String, appID: String, email: EmailAddress, grants: [String] = [], groups: [String] = [], createdAt: Date, createdBy: String,
        accountID: String? = nil, attachedAt: Date? = nil
    ) {
        self.id = id
        self.appID = appID
        self.email = email
        self.grants = grants
        self.groups = groups
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.accountID = accountID
        self.attachedAt = attachedAt
    }

    /// How apps, accounts and admins see it (`status` pending or attached; the account once attached).
    public struct View: Sendable, Codable, Equatable {
        public var id: String
        public var app: String
        public var email: String
        public var status: String
        public var grants: [String]
        public var groups: [String]
        public var createdAt: Date
        public var account: String?
        public var attachedAt: Date?

        public init(_ identity: ProvisionalIdentity) {
            id = identity.id
            app = identity.appID
            email = identity.email.value
            status = identity.accountID == nil ? "pending" : "attached"
            grants = identity.grants
            groups = identity.groups
            createdAt = identity.createdAt
            account = identity.accountID
            attachedAt = identity.attachedAt
        }
    }

    /// Public identifiers: `pi_` and 128 random bits.
    public static func newID() -> String { "pi_" + RandomToken.make(byteCount: 16) }
}

/// Provisional identities. One per (app, address).
public protocol ProvisionalIdentityStore: Sendable {
    /// Stores a new identity, or answers the app's existing one for that address (`created` false).
    func createProvisionalIdentity(_ identity: ProvisionalIdentity) async throws -> (identity: ProvisionalIdentity, created: Bool)
    func provisionalIdentity(id: String) async throws -> ProvisionalIdentity?
    /// Adds grants and groups not there yet, in one transaction; nil when there is no such identity.
    func addProvisionalGrants(id: String, grants: [String], groups: [String]) async throws -> ProvisionalIdentity?
    /// Attaches the identity to the account if it is not attached yet, in one transaction; false when it
    /// is attached already (to any account) or gone.
    func attachProvisionalIdentity(id: String, accountID: String, now: Date) async throws -> Bool
    /// The identities attached to an account, oldest first.
    func provisionalIdentities(accountID: String) async throws -> [ProvisionalIdentity]
}
