import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: DeviceAuthorizationStore {
    public func insertDeviceAuthorization(_ record: DeviceAuthorizationRecord) async throws -> Bool {
        try await run(
            """
            INSERT INTO device_authorizations (device_code_digest, user_code_digest, app_id, payload, expires_at, version)
            VALUES (\(record.deviceCodeDigest), \(record.userCodeDigest), \(record.appID), \(try StoreJSON.encode(record)), \(record.expiresAt.storeValue), 0)
            ON CONFLICT DO NOTHING RETURNING 1
            """
        ) == 1
    }

    public func deviceAuthorization(deviceCodeDigest: String) async throws -> DeviceAuthorizationRecord? {
        try Self.deviceAuthorization(
            try await rows("SELECT payload, version FROM device_authorizations WHERE device_code_digest = \(deviceCodeDigest)").first
        )
    }

    public func deviceAuthorization(userCodeDigest: String) async throws -> DeviceAuthorizationRecord? {
        try Self.deviceAuthorization(try await rows("SELECT payload, version FROM device_authorizations WHERE user_code_digest = \(userCodeDigest)").first)
    }

    static func deviceAuthorization(_ row: PostgresRandomAccessRow?) throws -> DeviceAuthorizationRecord? {
        guard let row else { return nil }
        var record = try row["payload"].json(DeviceAuthorizationRecord.self)
        record.version = try row["version"].int()
        return record
    }

    /// One conditional update: of two nodes changing the same authorization at once, the second
    /// waits for the first's row lock, finds another version, and changes nothing.
    public func updateDeviceAuthorization(_ record: DeviceAuthorizationRecord) async throws -> Bool {
        try await run(
            """
            UPDATE device_authorizations SET payload = \(try StoreJSON.encode(record)), version = version + 1
            WHERE device_code_digest = \(record.deviceCodeDigest) AND version = \(record.version) RETURNING 1
            """
        ) == 1
    }

    public func deleteExpiredDeviceAuthorizations(before: Date) async throws -> Int {
        try await run("DELETE FROM device_authorizations WHERE expires_at < \(before.storeValue) RETURNING 1")
    }
}
