import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: FlowStore {
    public func insertFlow(_ flow: FlowRecord) async throws {
        try await write { db in
            try db.executeCached(
                sql: "INSERT INTO flows (id, app_id, payload, expires_at, version) VALUES (?, ?, ?, ?, ?)",
                arguments: [flow.id, flow.appID, try StoreJSON.encode(flow), flow.expiresAt.storeValue, flow.version]
            )
        }
    }

    public func flow(id: String, now: Date) async throws -> FlowRecord? {
        try readOneStatement { db in
            guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT payload, version FROM flows WHERE id = ? AND expires_at > ?"), arguments: [id, now.storeValue]) else {
                return nil
            }
            var flow = try StoreJSON.decode(FlowRecord.self, row["payload"])
            flow.version = row["version"]
            return flow
        }
    }

    public func updateFlow(_ flow: FlowRecord) async throws -> Bool {
        try await write { db in
            var stored = flow
            stored.version = flow.version + 1
            try db.executeCached(
                sql: "UPDATE flows SET payload = ?, expires_at = ?, version = ? WHERE id = ? AND version = ?",
                arguments: [try StoreJSON.encode(stored), flow.expiresAt.storeValue, stored.version, flow.id, flow.version]
            )
            return db.changesCount == 1
        }
    }

    public func deleteFlow(id: String, version: Int) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM flows WHERE id = ? AND version = ?").execute(arguments: [id, version])
            return db.changesCount == 1
        }
    }

    public func deleteExpiredFlows(now: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM flows WHERE expires_at <= ?").execute(arguments: [now.storeValue])
            return db.changesCount
        }
    }

    public func countFlows(now: Date) async throws -> Int {
        try await readLater { db in try Int.fetchOne(try db.cachedStatement(sql: "SELECT COUNT(*) FROM flows WHERE expires_at > ?"), arguments: [now.storeValue]) ?? 0 }
    }
}
