import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: EventOutboxStore {
    /// The statement `appendAudit` runs beside its insert: the event, for the app's webhook, when the
    /// app's policy has a webhook URL (and the event is not about webhook deliveries themselves).
    static let enqueueAuditEvent = """
        INSERT INTO event_outbox (app_id, subject, kind, payload, created_at, next_attempt_at, attempts, status)
        SELECT id, ?, 'event', ?, ?, ?, 0, 'pending' FROM apps
        WHERE id = ? AND COALESCE(json_extract(policy, '$.webhook.url'), '') <> '' AND ? NOT LIKE 'webhook.%'
        """

    public func enqueueOutbox(appID: String, subject: String, kind: OutboxItem.Kind, payload: String, now: Date) async throws {
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO event_outbox (app_id, subject, kind, payload, created_at, next_attempt_at, attempts, status)
                    VALUES (?, ?, ?, ?, ?, ?, 0, 'pending')
                    """,
                arguments: [appID, subject, kind.rawValue, payload, now.storeValue, now.storeValue]
            )
        }
    }

    /// The head of each subject's queue (its lowest pending id), if it is due and not leased.
    public func dueOutboxItems(now: Date, limit: Int) async throws -> [OutboxItem] {
        try await readLater { db in
            try Row.fetchAll(
                try db.cachedStatement(
                    sql: """
                        SELECT o.* FROM event_outbox o
                        JOIN (SELECT MIN(id) AS head FROM event_outbox WHERE status = 'pending' GROUP BY app_id, subject) h ON o.id = h.head
                        WHERE o.next_attempt_at <= ? AND (o.lease_until IS NULL OR o.lease_until <= ?)
                        ORDER BY o.id LIMIT ?
                        """
                ),
                arguments: [now.storeValue, now.storeValue, limit]
            ).map(Self.outboxItem)
        }
    }

    static func outboxItem(_ row: Row) -> OutboxItem {
        OutboxItem(
            id: row["id"], appID: row["app_id"], subject: row["subject"], kind: OutboxItem.Kind(rawValue: row["kind"]) ?? .event, payload: row["payload"],
            createdAt: Date(storeValue: row["created_at"]), nextAttemptAt: Date(storeValue: row["next_attempt_at"]), attempts: row["attempts"],
            status: OutboxItem.Status(rawValue: row["status"]) ?? .pending, lastError: row["last_error"],
            deliveredAt: (row["delivered_at"] as Double?).map(Date.init(storeValue:))
        )
    }

    public func leaseOutboxItem(id: Int64, until: Date, now: Date, token: String) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: """
                    UPDATE event_outbox SET lease_until = ?, lease_token = ?
                    WHERE id = ? AND status = 'pending' AND (lease_until IS NULL OR lease_until <= ?)
                      AND NOT EXISTS (
                        SELECT 1 FROM event_outbox p
                        WHERE p.status = 'pending' AND p.app_id = event_outbox.app_id AND p.subject = event_outbox.subject AND p.id < event_outbox.id
                      )
                    """,
                arguments: [until.storeValue, token, id, now.storeValue]
            )
            return db.changesCount == 1
        }
    }

    public func finishOutboxAttempt(id: Int64, token: String, delivered: Bool, nextAttemptAt: Date?, dead: Bool, error: String?, now: Date) async throws {
        try await write { db in
            let status = delivered ? "delivered" : dead ? "dead" : "pending"
            try db.executeCached(
                sql: """
                    UPDATE event_outbox SET status = ?, attempts = attempts + 1, next_attempt_at = COALESCE(?, next_attempt_at), last_error = ?,
                        delivered_at = ?, lease_until = NULL, lease_token = NULL
                    WHERE id = ? AND status = 'pending' AND lease_token = ?
                    """,
                arguments: [status, nextAttemptAt?.storeValue, error, delivered ? now.storeValue : nil, id, token]
            )
        }
    }

    public func outboxItems(appID: String, status: OutboxItem.Status, limit: Int) async throws -> [OutboxItem] {
        try await readLater { db in
            try Row.fetchAll(
                try db.cachedStatement(sql: "SELECT * FROM event_outbox WHERE app_id = ? AND status = ? ORDER BY id DESC LIMIT ?"),
                arguments: [appID, status.rawValue, limit]
            ).map(Self.outboxItem)
        }
    }

    public func replayOutboxItem(id: Int64, appID: String, now: Date) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: """
                    UPDATE event_outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, last_error = NULL, lease_until = NULL, lease_token = NULL
                    WHERE id = ? AND app_id = ? AND status = 'dead'
                    """,
                arguments: [now.storeValue, id, appID]
            )
            return db.changesCount == 1
        }
    }

    public func deleteFinishedOutboxItems(deliveredBefore: Date, deadBefore: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(
                sql: "DELETE FROM event_outbox WHERE (status = 'delivered' AND delivered_at < ?) OR (status = 'dead' AND created_at < ?)"
            ).execute(arguments: [deliveredBefore.storeValue, deadBefore.storeValue])
            return db.changesCount
        }
    }

    public func deleteOutboxItems(appID: String) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM event_outbox WHERE app_id = ?").execute(arguments: [appID])
            return db.changesCount
        }
    }
}
