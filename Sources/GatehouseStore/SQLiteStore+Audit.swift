import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: AuditStore {
    public func appendAudit(_ event: AuditEvent) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO audit_events (id, time, type, app_id, account_id, provider_id, outcome, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    event.id, event.time.storeValue, event.type, event.appID, event.accountID, event.providerID, event.outcome,
                    try StoreJSON.encode(event.details),
                ]
            )
        }
    }

    public func auditEvents(type: String?, appID: String?, accountID: String?, since: Date?, limit: Int) async throws -> [AuditEvent] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let type {
            conditions.append("type = ?")
            arguments += [type]
        }
        if let appID {
            conditions.append("app_id = ?")
            arguments += [appID]
        }
        if let accountID {
            conditions.append("account_id = ?")
            arguments += [accountID]
        }
        if let since {
            conditions.append("time >= ?")
            arguments += [since.storeValue]
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments += [limit]
        let query = "SELECT * FROM audit_events \(filter) ORDER BY time DESC, rowid DESC LIMIT ?"
        let finalArguments = arguments
        return try await pool.read { db in
            try Row.fetchAll(try db.cachedStatement(sql: query), arguments: finalArguments).map { row in
                AuditEvent(
                    id: row["id"], time: Date(storeValue: row["time"]), type: row["type"], appID: row["app_id"], accountID: row["account_id"],
                    providerID: row["provider_id"], outcome: row["outcome"], details: try StoreJSON.decode([String: String].self, row["details"])
                )
            }
        }
    }
}
