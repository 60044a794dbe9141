import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: FlowStore {
    public func insertFlow(_ flow: FlowRecord) async throws {
        try await run(
            """
            INSERT INTO flows (id, app_id, payload, expires_at, version)
            VALUES (\(flow.id), \(flow.appID), \(try StoreJSON.encode(flow)), \(flow.expiresAt.storeValue), \(flow.version))
            """
        )
    }

    public func flow(id: String, now: Date) async throws -> FlowRecord? {
        guard let row = try await rows("SELECT payload, version FROM flows WHERE id = \(id) AND expires_at > \(now.storeValue)").first else { return nil }
        var flow = try row["payload"].json(FlowRecord.self)
        flow.version = try row["version"].int()
        return flow
    }

    public func updateFlow(_ flow: FlowRecord) async throws -> Bool {
        var stored = flow
        stored.version = flow.version + 1
        return try await run(
            """
            UPDATE flows SET payload = \(try StoreJSON.encode(stored)), expires_at = \(flow.expiresAt.storeValue), version = \(stored.version)
            WHERE id = \(flow.id) AND version = \(flow.version) RETURNING 1
            """
        ) == 1
    }

    public func deleteFlow(id: String, version: Int) async throws -> Bool {
        try await run("DELETE FROM flows WHERE id = \(id) AND version = \(version) RETURNING 1") == 1
    }

    public func deleteExpiredFlows(now: Date) async throws -> Int {
        try await run("DELETE FROM flows WHERE expires_at <= \(now.storeValue) RETURNING 1")
    }

    public func countFlows(now: Date) async throws -> Int {
        try await rows("SELECT COUNT(*) FROM flows WHERE expires_at > \(now.storeValue)").first.map { try $0[0].int() } ?? 0
    }
}
