import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: EventOutboxStore {
    public func enqueueOutbox(appID: String, subject: String, kind: OutboxItem.Kind, payload: String, now: Date) async throws {
        try await run(
            """
            INSERT INTO event_outbox (app_id, subject, kind, payload, created_at, next_attempt_at, attempts, status)
            VALUES (\(appID), \(subject), \(kind.rawValue), \(payload), \(now.storeValue), \(now.storeValue), 0, 'pending')
            """
        )
    }

    /// The head of each subject's queue (its lowest pending id), if it is due and not leased.
    public func dueOutboxItems(now: Date, limit: Int) async throws -> [OutboxItem] {
        try await rows(
            """
            SELECT o.* FROM event_outbox o
            JOIN (SELECT MIN(id) AS head FROM event_outbox WHERE status = 'pending' GROUP BY app_id, subject) h ON o.id = h.head
            WHERE o.next_attempt_at <= \(now.storeValue) AND (o.lease_until IS NULL OR o.lease_until <= \(now.storeValue))
            ORDER BY o.id LIMIT \(limit)
            """
        ).map(Self.outboxItem)
    }

    static func outboxItem(_ row: PostgresRandomAccessRow) throws -> OutboxItem {
        OutboxItem(
            id: Int64(try row["id"].int()), appID: try row["app_id"].string(), subject: try row["subject"].string(),
            kind: OutboxItem.Kind(rawValue: try row["kind"].string()) ?? .event, payload: try row["payload"].string(), createdAt: try row["created_at"].date(),
            nextAttemptAt: try row["next_attempt_at"].date(), attempts: try row["attempts"].int(),
            status: OutboxItem.Status(rawValue: try row["status"].string()) ?? .pending, lastError: try row["last_error"].optionalString(),
            deliveredAt: try row["delivered_at"].optionalDate()
        )
    }

    /// One conditional update: of two nodes taking the same delivery, the second waits for the
    /// first's row lock, finds the lease taken, and changes nothing.
    public func leaseOutboxItem(id: Int64, until: Date, now: Date, token: String) async throws -> Bool {
        try await run(
            """
            UPDATE event_outbox o SET lease_until = \(until.storeValue), lease_token = \(token)
            WHERE o.id = \(id) AND o.status = 'pending' AND (o.lease_until IS NULL OR o.lease_until <= \(now.storeValue))
              AND NOT EXISTS (SELECT 1 FROM event_outbox p WHERE p.status = 'pending' AND p.app_id = o.app_id AND p.subject = o.subject AND p.id < o.id)
            RETURNING 1
            """
        ) == 1
    }

    public func finishOutboxAttempt(id: Int64, token: String, delivered: Bool, nextAttemptAt: Date?, dead: Bool, error: String?, now: Date) async throws {
        let status = delivered ? "delivered" : dead ? "dead" : "pending"
        let deliveredAt: Double? = delivered ? now.storeValue : nil
        _ = try await run(
            """
            UPDATE event_outbox SET status = \(status), attempts = attempts + 1, next_attempt_at = COALESCE(\(nextAttemptAt?.storeValue), next_attempt_at),
                last_error = \(error), delivered_at = \(deliveredAt), lease_until = NULL, lease_token = NULL
            WHERE id = \(id) AND status = 'pending' AND lease_token = \(token)
            """
        )
    }

    public func outboxItems(appID: String, status: OutboxItem.Status, limit: Int) async throws -> [OutboxItem] {
        try await rows("SELECT * FROM event_outbox WHERE app_id = \(appID) AND status = \(status.rawValue) ORDER BY id DESC LIMIT \(limit)").map(Self.outboxItem)
    }

    public func replayOutboxItem(id: Int64, appID: String, now: Date) async throws -> Bool {
        try await run(
            """
            UPDATE event_outbox SET status = 'pending', attempts = 0, next_attempt_at = \(now.storeValue), last_error = NULL, lease_until = NULL, lease_token = NULL
            WHERE id = \(id) AND app_id = \(appID) AND status = 'dead' RETURNING 1
            """
        ) == 1
    }

    public func deleteFinishedOutboxItems(deliveredBefore: Date, deadBefore: Date) async throws -> Int {
        try await run(
            """
            DELETE FROM event_outbox WHERE (status = 'delivered' AND delivered_at < \(deliveredBefore.storeValue))
                OR (status = 'dead' AND created_at < \(deadBefore.storeValue)) RETURNING 1
            """
        )
    }

    public func deleteOutboxItems(appID: String) async throws -> Int {
        try await run("DELETE FROM event_outbox WHERE app_id = \(appID) RETURNING 1")
    }
}
