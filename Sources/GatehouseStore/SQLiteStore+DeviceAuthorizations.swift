import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: DeviceAuthorizationStore {
    public func insertDeviceAuthorization(_ record: DeviceAuthorizationRecord) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO device_authorizations (device_code_digest, user_code_digest, app_id, payload, expires_at, version)
                    VALUES (?, ?, ?, ?, ?, 0) ON CONFLICT DO NOTHING
                    """,
                arguments: [record.deviceCodeDigest, record.userCodeDigest, record.appID, try StoreJSON.encode(record), record.expiresAt.storeValue]
            )
            return db.changesCount == 1
        }
    }

    public func deviceAuthorization(deviceCodeDigest: String) async throws -> DeviceAuthorizationRecord? {
        try readOneStatement { db in
            try Self.deviceAuthorization(
                try Row.fetchOne(
                    try db.cachedStatement(sql: "SELECT payload, version FROM device_authorizations WHERE device_code_digest = ?"), arguments: [deviceCodeDigest]
                )
            )
        }
    }

    public func deviceAuthorization(userCodeDigest: String) async throws -> DeviceAuthorizationRecord? {
        try readOneStatement { db in
            try Self.deviceAuthorization(
                try Row.fetchOne(
                    try db.cachedStatement(sql: "SELECT payload, version FROM device_authorizations WHERE user_code_digest = ?"), arguments: [userCodeDigest]
                )
            )
        }
    }

    static func deviceAuthorization(_ row: Row?) throws -> DeviceAuthorizationRecord? {
        guard let row else { return nil }
        var record = try StoreJSON.decode(DeviceAuthorizationRecord.self, row["payload"])
        record.version = row["version"]
        return record
    }

    public func updateDeviceAuthorization(_ record: DeviceAuthorizationRecord) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: "UPDATE device_authorizations SET payload = ?, version = version + 1 WHERE device_code_digest = ? AND version = ?",
                arguments: [try StoreJSON.encode(record), record.deviceCodeDigest, record.version]
            )
            return db.changesCount == 1
        }
    }

    public func deleteExpiredDeviceAuthorizations(before: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM device_authorizations WHERE expires_at < ?").execute(arguments: [before.storeValue])
            return db.changesCount
        }
    }
}
