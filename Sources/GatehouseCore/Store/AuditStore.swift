import Foundation

/// The append-only audit log.
public protocol AuditStore: Sendable {
    /// Appends an event; events are never changed or removed by the broker.
    func appendAudit(_ event: AuditEvent) async throws
    /// Newest first.
    func auditEvents(_ query: AuditQuery) async throws -> [AuditEvent]
}

extension AuditStore {
    /// Newest first.
    public func auditEvents(type: String?, appID: String?, accountID: String?, since: Date?, limit: Int) async throws -> [AuditEvent] {
        try await auditEvents(AuditQuery(type: type, appID: appID, accountID: accountID, since: since, limit: limit))
    }
}

/// Which audit events to read: every filter given must match; newest first, `limit` from `offset`.
public struct AuditQuery: Sendable, Hashable {
    /// Events of this type only; a type ending in a dot (`policy.`) is every type under that prefix.
    public var type: String?
    /// Events at this app only.
    public var appID: String?
    /// The account the event is about.
    public var accountID: String?
    /// The administrator who made the change (the event's `admin` detail).
    public var admin: String?
    /// Events at or after this time only.
    public var since: Date?
    /// Events before this time only.
    public var until: Date?
    /// At most this many.
    public var limit: Int
    /// Skipping this many newest ones first.
    public var offset: Int

    /// A query; each filter left nil matches everything.
    public init(
        type: String? = nil, appID: String? = nil, accountID: String? = nil, admin: String? = nil, since: Date? = nil, until: Date? = nil,
        limit: Int = 100, offset: Int = 0
    ) {
        self.type = type
        self.appID = appID
        self.accountID = accountID
        self.admin = admin
        self.since = since
        self.until = until
        self.limit = limit
        self.offset = offset
    }
}

extension AuditLog {
    /// The log the plugin instance `providerID` appends to, forwarded to `store` (which it cannot
    /// read), each event stamped with the instance's id and the time on `clock`.
    public init(_ store: any AuditStore, providerID: String, clock: any BrokerClock) {
        self.init(append: { type, appID, accountID, outcome, details in
            try await store.appendAudit(
                AuditEvent(time: clock.now, type: type, appID: appID, accountID: accountID, providerID: providerID, outcome: outcome, details: details))
        })
    }
}
