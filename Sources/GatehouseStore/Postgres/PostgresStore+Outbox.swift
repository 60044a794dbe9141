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

    public func dueOutboxItems(now: Date, limit: Int) async throws -> [OutboxItem] {
        try await rows(
            """
            SELECT * FROM event_outbox o
            WHERE o.status = 'pending' AND o.next_attempt_at <= \(now.storeValue) AND (o.lease_until IS NULL OR o.lease_until <= \(now.storeValue))
              AND NOT EXISTS (SELECT 1 FROM event_outbox p WHERE p.app_id = o.app_id AND p.subject = o.subject AND p.status = 'pending' AND p.id < o.id)
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
    public func leaseOutboxItem(id: Int64, until: Date, now: Date) async throws -> Bool {
        try await run(
            """
            UPDATE event_outbox SET lease_until = \(until.storeValue)
            WHERE id = \(id) AND status = 'pending' AND (lease_until IS NULL OR lease_until <= \(now.storeValue)) RETURNING 1
            """
        ) == 1
    }

    public func finishOutboxAttempt(id: Int64, delivered: Bool, nextAttemptAt: Date?, dead: Bool, error: String?, now: Date) async throws {
        let status = delivered ? "delivered" : dead ? "dead" : "pending"
        let deliveredAt: Double? = delivered ? now.storeValue : nil
        _ = try await run(
            """
            UPDATE event_outbox SET status = \(status), attempts = attempts + 1, next_attempt_at = COALESCE(\(nextAttemptAt?.storeValue), next_attempt_at),
                last_error = \(error), delivered_at = \(deliveredAt), lease_until = NULL
            WHERE id = \(id) AND status = 'pending'
            """
        )
    }

    public func outboxItems(appID: String, status: OutboxItem.Status, limit: Int) async throws -> [OutboxItem] {
        try await rows("SELECT * FROM event_outbox WHERE app_id = \(appID) AND status = \(status.rawValue) ORDER BY id DESC LIMIT \(limit)").map(Self.outboxItem)
    }

    public func replayOutboxItem(id: Int64, appID: String, now: Date) async throws -> Bool {
        try await run(
            """
            UPDATE event_outbox SET status = 'pending', attempts = 0, next_attempt_at = \(now.storeValue), last_error = NULL, lease_until = NULL
            WHERE id = \(id) AND app_id = \(appID) AND status = 'dead' RETURNING 1
            """
        ) == 1
    }

    public func deleteDeliveredOutboxItems(before: Date) async throws -> Int {
        try await run("DELETE FROM event_outbox WHERE status = 'delivered' AND delivered_at < \(before.storeValue) RETURNING 1")
    }
}
