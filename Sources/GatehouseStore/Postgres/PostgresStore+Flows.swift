import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: FlowStore {
    public func insertFlow(_ flow: SealedFlow) async throws {
        try await run(
            """
            INSERT INTO flows (id, app_id, payload, expires_at, version)
            VALUES (\(flow.id), \(flow.appID), \(flow.payload), \(flow.expiresAt.storeValue), \(flow.version))
            """
        )
    }

    public func sealedFlow(id: String, now: Date) async throws -> SealedFlow? {
        guard let row = try await rows("SELECT app_id, payload, expires_at, version FROM flows WHERE id = \(id) AND expires_at > \(now.storeValue)").first else {
            return nil
        }
        return SealedFlow(
            id: id, appID: try row["app_id"].string(), payload: try row["payload"].string(), expiresAt: try row["expires_at"].date(), version: try row["version"].int()
        )
    }

    public func updateFlow(_ flow: SealedFlow, expectedVersion: Int) async throws -> Bool {
        try await run(
            """
            UPDATE flows SET payload = \(flow.payload), expires_at = \(flow.expiresAt.storeValue), version = \(flow.version)
            WHERE id = \(flow.id) AND version = \(expectedVersion) RETURNING 1
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
