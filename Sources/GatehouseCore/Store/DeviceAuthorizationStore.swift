import Foundation

/// A device authorization (RFC 8628) as stored: found by the digest of its device code (the device
/// polls with it) or of its user code (the person types it), never by either code itself. Its state
/// changes by compare-and-swap on `version`, so a user code approves one device once, and two polls
/// at two nodes at the same moment count as two.
public struct DeviceAuthorizationRecord: Sendable, Hashable, Codable {
    /// Where the authorization stands.
    public enum Status: String, Sendable, Hashable, Codable {
        /// Waiting for the person: polls answer `authorization_pending`.
        case pending
        /// The person signed in and confirmed: the next poll gets tokens.
        case approved
        /// The person refused: polls answer `access_denied`.
        case denied
        /// Tokens were issued for it; it is spent.
        case used
    }

    public var deviceCodeDigest: String
    public var userCodeDigest: String
    public var appID: String
    public var scopes: [String]
    public var status: Status
    public var createdAt: Date
    public var expiresAt: Date
    /// The polling interval the device must keep, in seconds; each `slow_down` adds 5 (RFC 8628 section 3.5).
    public var interval: Int
    public var lastPolledAt: Date?
    /// Who approved it, how and when (set with `approved`).
    public var accountID: String?
    public var methods: [String]
    public var identityProvider: String?
    public var authTime: Date?
    public var approvedAt: Date?
    /// The store's version, for compare-and-swap updates (-1 before the first insert).
    public var version: Int

    public init(
        deviceCodeDigest: String, userCodeDigest: String, appID: String, scopes: [String], status: Status = .pending, createdAt: Date, expiresAt: Date,
        interval: Int, lastPolledAt: Date? = nil, accountID: String? = nil, methods: [String] = [], identityProvider: String? = nil, authTime: Date? = nil,
        approvedAt: Date? = nil, version: Int = -1
    ) {
        self.deviceCodeDigest = deviceCodeDigest
        self.userCodeDigest = userCodeDigest
        self.appID = appID
        self.scopes = scopes
        self.status = status
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.interval = interval
        self.lastPolledAt = lastPolledAt
        self.accountID = accountID
        self.methods = methods
        self.identityProvider = identityProvider
        self.authTime = authTime
        self.approvedAt = approvedAt
        self.version = version
    }

    enum CodingKeys: String, CodingKey {
        case deviceCodeDigest, userCodeDigest, appID, scopes, status, createdAt, expiresAt, interval, lastPolledAt, accountID, methods, identityProvider
        case authTime, approvedAt
    }

    /// The stored payload leaves the version out (the row holds it).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            deviceCodeDigest: try container.decode(String.self, forKey: .deviceCodeDigest), userCodeDigest: try container.decode(String.self, forKey: .userCodeDigest),
            appID: try container.decode(String.self, forKey: .appID), scopes: try container.decode([String].self, forKey: .scopes),
            status: try container.decode(Status.self, forKey: .status), createdAt: try container.decode(Date.self, forKey: .createdAt),
            expiresAt: try container.decode(Date.self, forKey: .expiresAt), interval: try container.decode(Int.self, forKey: .interval),
            lastPolledAt: try container.decodeIfPresent(Date.self, forKey: .lastPolledAt), accountID: try container.decodeIfPresent(String.self, forKey: .accountID),
            methods: try container.decodeIfPresent([String].self, forKey: .methods) ?? [],
            identityProvider: try container.decodeIfPresent(String.self, forKey: .identityProvider),
            authTime: try container.decodeIfPresent(Date.self, forKey: .authTime), approvedAt: try container.decodeIfPresent(Date.self, forKey: .approvedAt)
        )
    }
}

/// Device authorizations (RFC 8628), shared by every node.
public protocol DeviceAuthorizationStore: Sendable {
    /// Adds a new authorization at version 0; false when its user code's digest is taken by a live
    /// one (the caller draws another code).
    func insertDeviceAuthorization(_ record: DeviceAuthorizationRecord) async throws -> Bool
    func deviceAuthorization(deviceCodeDigest: String) async throws -> DeviceAuthorizationRecord?
    func deviceAuthorization(userCodeDigest: String) async throws -> DeviceAuthorizationRecord?
    /// Writes `record` if the stored version still is `record.version` (and bumps it); false when
    /// another request changed it first.
    func updateDeviceAuthorization(_ record: DeviceAuthorizationRecord) async throws -> Bool
    /// Deletes authorizations that expired before `before`.
    func deleteExpiredDeviceAuthorizations(before: Date) async throws -> Int
}
