import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: FlowStore {
    public func insertFlow(_ flow: SealedFlow) async throws {
        try await write { db in
            try db.executeCached(
                sql: "INSERT INTO flows (id, app_id, payload, expires_at, version) VALUES (?, ?, ?, ?, ?)",
                arguments: [flow.id, flow.appID, flow.payload, flow.expiresAt.storeValue, flow.version]
            )
        }
    }

    public func sealedFlow(id: String, now: Date) async throws -> SealedFlow? {
        try readOneStatement { db in
            let statement = try db.cachedStatement(sql: "SELECT app_id, payload, expires_at, version FROM flows WHERE id = ? AND expires_at > ?")
            guard let row = try Row.fetchOne(statement, arguments: [id, now.storeValue]) else { return nil }
            return SealedFlow(id: id, appID: row["app_id"], payload: row["payload"], expiresAt: Date(storeValue: row["expires_at"]), version: row["version"])
        }
    }

    public func updateFlow(_ flow: SealedFlow, expectedVersion: Int) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: "UPDATE flows SET payload = ?, expires_at = ?, version = ? WHERE id = ? AND version = ?",
                arguments: [flow.payload, flow.expiresAt.storeValue, flow.version, flow.id, expectedVersion]
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
