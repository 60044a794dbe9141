import Foundation

/// One delivery waiting in (or done from) the outbox: an event for an app's webhook, or a
/// back-channel logout token for an app. Delivered in `id` order per (`appID`, `subject`).
public struct OutboxItem: Sendable, Hashable {
    /// What is delivered.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// An audit event, as a CloudEvent, to the app's webhook (`payload`: the audit event's JSON).
        case event
        /// A logout token to the app's back-channel logout URI (`payload`: `{"sid", "sub"}`).
        case backchannelLogout = "backchannel_logout"
    }

    /// Where the delivery stands.
    public enum Status: String, Sendable, Hashable, Codable {
        case pending, delivered
        /// Given up after the last retry: listed for the administrators, who may replay it.
        case dead
    }

    public var id: Int64
    public var appID: String
    /// The ordering key: the account, the session, or empty.
    public var subject: String
    public var kind: Kind
    public var payload: String
    public var createdAt: Date
    public var nextAttemptAt: Date
    public var attempts: Int
    public var status: Status
    public var lastError: String?
    public var deliveredAt: Date?

    public init(
        id: Int64, appID: String, subject: String, kind: Kind, payload: String, createdAt: Date, nextAttemptAt: Date, attempts: Int = 0, status: Status = .pending,
        lastError: String? = nil, deliveredAt: Date? = nil
    ) {
        self.id = id
        self.appID = appID
        self.subject = subject
        self.kind = kind
        self.payload = payload
        self.createdAt = createdAt
        self.nextAttemptAt = nextAttemptAt
        self.attempts = attempts
        self.status = status
        self.lastError = lastError
        self.deliveredAt = deliveredAt
    }
}

/// The outbox: deliveries kept in the store until they succeed, so that none is lost when a node
/// stops, and any node delivers. Audit events are added to it by `AuditStore.appendAudit` itself, in
/// the same write, for apps whose policy has a webhook URL.
public protocol EventOutboxStore: Sendable {
    /// Adds deliveries (back-channel logout tokens), pending from `now`.
    func enqueueOutbox(appID: String, subject: String, kind: OutboxItem.Kind, payload: String, now: Date) async throws
    /// Pending deliveries that are due, not leased, and first of their (app, subject) among the
    /// pending ones (so each subject's deliveries go in order), oldest first.
    func dueOutboxItems(now: Date, limit: Int) async throws -> [OutboxItem]
    /// Takes a due delivery for this node until `until` under `token`, if no other node holds it and
    /// it still is the first pending one of its subject; false otherwise.
    func leaseOutboxItem(id: Int64, until: Date, now: Date, token: String) async throws -> Bool
    /// Records an attempt of the holder of lease `token`: delivered, to be tried again at
    /// `nextAttemptAt`, or given up (`dead`); frees the lease. Nothing changes when the lease is
    /// another's by now (it ran out and another node took the delivery).
    func finishOutboxAttempt(id: Int64, token: String, delivered: Bool, nextAttemptAt: Date?, dead: Bool, error: String?, now: Date) async throws
    /// An app's deliveries in one status, newest first.
    func outboxItems(appID: String, status: OutboxItem.Status, limit: Int) async throws -> [OutboxItem]
    /// Makes a dead delivery of `appID` pending again, due now; false when there is none.
    func replayOutboxItem(id: Int64, appID: String, now: Date) async throws -> Bool
    /// Deletes delivered items delivered before `deliveredBefore` and dead ones made before `deadBefore`.
    func deleteFinishedOutboxItems(deliveredBefore: Date, deadBefore: Date) async throws -> Int
    /// Deletes every item of an app (the app was deleted); answers how many.
    func deleteOutboxItems(appID: String) async throws -> Int
}
