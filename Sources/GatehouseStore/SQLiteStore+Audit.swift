import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: AuditStore {
    /// Appends the event and, in the same write, queues it for the app's webhook (`EventOutboxStore`).
    public func appendAudit(_ event: AuditEvent) async throws {
        let payload = event.appID == nil ? nil : try StoreJSON.encode(event)
        try await write { db in
            try db.executeCached(
                sql: "INSERT INTO audit_events (id, time, type, app_id, account_id, provider_id, outcome, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    event.id, event.time.storeValue, event.type, event.appID, event.accountID, event.providerID, event.outcome,
                    try StoreJSON.encode(event.details),
                ]
            )
            if let appID = event.appID, let payload {
                try db.executeCached(
                    sql: Self.enqueueAuditEvent,
                    arguments: [event.accountID ?? "", payload, event.time.storeValue, event.time.storeValue, appID, event.type]
                )
            }
        }
    }

    public func auditEvents(_ query: AuditQuery) async throws -> [AuditEvent] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        func condition(_ sql: String, _ value: some DatabaseValueConvertible) {
            conditions.append(sql)
            arguments += [value]
        }
        if let type = query.type {
            // `policy.` is every type under that prefix (compared as text: no LIKE wildcards to escape).
            if type.hasSuffix(".") {
                conditions.append("substr(type, 1, ?) = ?")
                arguments += [type.unicodeScalars.count, type]
            } else {
                condition("type = ?", type)
            }
        }
        if let appID = query.appID { condition("app_id = ?", appID) }
        if let accountID = query.accountID { condition("account_id = ?", accountID) }
        if let admin = query.admin { condition("json_extract(details, '$.admin') = ?", admin) }
        if let since = query.since { condition("time >= ?", since.storeValue) }
        if let until = query.until { condition("time < ?", until.storeValue) }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments += [query.limit, query.offset]
        let sql = "SELECT * FROM audit_events \(filter) ORDER BY time DESC, rowid DESC LIMIT ? OFFSET ?"
        let finalArguments = arguments
        return try await readLater { db in
            try Row.fetchAll(try db.cachedStatement(sql: sql), arguments: finalArguments).map { row in
                AuditEvent(
                    id: row["id"], time: Date(storeValue: row["time"]), type: row["type"], appID: row["app_id"], accountID: row["account_id"],
                    providerID: row["provider_id"], outcome: row["outcome"], details: try StoreJSON.decode([String: String].self, row["details"])
                )
            }
        }
    }
}
