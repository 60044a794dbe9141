import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: AuditStore {
    /// Appends the event and, in the same statement, queues it for the app's webhook when the app's
    /// policy has a webhook URL (and the event is not about webhook deliveries themselves).
    public func appendAudit(_ event: AuditEvent) async throws {
        guard let appID = event.appID else {
            try await run(
                """
                INSERT INTO audit_events (id, time, type, app_id, account_id, provider_id, outcome, details)
                VALUES (\(event.id), \(event.time.storeValue), \(event.type), \(event.appID), \(event.accountID), \(event.providerID), \(event.outcome),
                        \(try StoreJSON.encode(event.details)))
                """
            )
            return
        }
        try await run(
            """
            WITH audit AS (
                INSERT INTO audit_events (id, time, type, app_id, account_id, provider_id, outcome, details)
                VALUES (\(event.id), \(event.time.storeValue), \(event.type), \(event.appID), \(event.accountID), \(event.providerID), \(event.outcome),
                        \(try StoreJSON.encode(event.details)))
                RETURNING 1
            )
            INSERT INTO event_outbox (app_id, subject, kind, payload, created_at, next_attempt_at, attempts, status)
            SELECT id, \(event.accountID ?? ""), 'event', \(try StoreJSON.encode(event)), \(event.time.storeValue), \(event.time.storeValue), 0, 'pending'
            FROM apps, audit
            WHERE id = \(appID) AND COALESCE(policy::jsonb #>> '{webhook,url}', '') <> '' AND \(event.type) NOT LIKE 'webhook.%'
            """
        )
    }

    public func auditEvents(_ query: AuditQuery) async throws -> [AuditEvent] {
        var conditions: [String] = []
        var bindings = PostgresBindings()
        func condition(_ column: String, _ op: String, _ value: some PostgresEncodable & Sendable) throws {
            try bindings.append(value)
            conditions.append("\(column) \(op) $\(bindings.count)")
        }
        if let type = query.type {
            // `policy.` is every type under that prefix (compared as text: no LIKE wildcards to escape).
            if type.hasSuffix(".") {
                bindings.append(type.unicodeScalars.count)
                try condition("left(type, $\(bindings.count)::int)", "=", type)
            } else {
                try condition("type", "=", type)
            }
        }
        if let appID = query.appID { try condition("app_id", "=", appID) }
        if let accountID = query.accountID { try condition("account_id", "=", accountID) }
        if let admin = query.admin { try condition("(details::jsonb ->> 'admin')", "=", admin) }
        if let since = query.since { try condition("time", ">=", since.storeValue) }
        if let until = query.until { try condition("time", "<", until.storeValue) }
        bindings.append(query.limit)
        bindings.append(query.offset)
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = PostgresQuery(
            unsafeSQL: "SELECT * FROM audit_events \(filter) ORDER BY time DESC, seq DESC LIMIT $\(bindings.count - 1) OFFSET $\(bindings.count)", binds: bindings
        )
        return try await rows(sql).map { row in
            AuditEvent(
                id: try row["id"].string(), time: try row["time"].date(), type: try row["type"].string(), appID: try row["app_id"].optionalString(),
                accountID: try row["account_id"].optionalString(), providerID: try row["provider_id"].optionalString(),
                outcome: try row["outcome"].optionalString(), details: try row["details"].json([String: String].self)
            )
        }
    }
}
