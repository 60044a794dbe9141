import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: PluginDataStore {
    public func pluginRecord(namespace: String, key: String, now: Date) async throws -> PluginRecord? {
        try await rows(PreparedStatements.PluginRecordByKey.self) { binds in
            binds.append(namespace)
            binds.append(key)
            binds.append(now.storeValue)
        }.first.map(Self.pluginRecord)
    }

    /// One statement: an expired record with the key is replaced, a live one wins. A new record starts
    /// at a random version (`PluginRecord.firstVersion`). Two nodes inserting
    /// the same key at once (a jti seen twice) get one success: the second waits for the first's
    /// unique-index entry and finds the record live.
    public func insertPluginRecord(namespace: String, key: String, value: Data, expiresAt: Date?, now: Date) async throws -> Bool {
        try await run(
            """
            INSERT INTO plugin_data (namespace, key, value, version, expires_at) VALUES (\(namespace), \(key), \(value), \(PluginRecord.firstVersion()), \(expiresAt?.storeValue))
            ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, version = plugin_data.version + 1, expires_at = excluded.expires_at
            WHERE plugin_data.expires_at IS NOT NULL AND plugin_data.expires_at <= \(now.storeValue)
            RETURNING 1
            """
        ) == 1
    }

    public func replacePluginRecord(namespace: String, key: String, value: Data, expiresAt: Date?, expectedVersion: Int) async throws -> Bool {
        try await run(
            """
            UPDATE plugin_data SET value = \(value), expires_at = \(expiresAt?.storeValue), version = version + 1
            WHERE namespace = \(namespace) AND key = \(key) AND version = \(expectedVersion) RETURNING 1
            """
        ) == 1
    }

    public func deletePluginRecord(namespace: String, key: String) async throws -> Bool {
        try await run("DELETE FROM plugin_data WHERE namespace = \(namespace) AND key = \(key) RETURNING 1") == 1
    }

    public func deletePluginRecord(namespace: String, key: String, expectedVersion: Int) async throws -> Bool {
        try await run("DELETE FROM plugin_data WHERE namespace = \(namespace) AND key = \(key) AND version = \(expectedVersion) RETURNING 1") == 1
    }

    public func pluginRecords(namespace: String, keyPrefix: String, now: Date) async throws -> [PluginRecord] {
        // `key >= prefix` lets the primary key index start at the prefix; starts_with makes the match
        // exact (LIKE would treat % and _ as wildcards). Keys are COLLATE "C": byte order, as SQLite.
        try await rows(
            """
            SELECT * FROM plugin_data WHERE namespace = \(namespace) AND key >= \(keyPrefix) AND starts_with(key, \(keyPrefix))
            AND (expires_at IS NULL OR expires_at > \(now.storeValue)) ORDER BY key
            """
        ).map(Self.pluginRecord)
    }

    public func pluginRecords(valuePrefix: Data, now: Date) async throws -> [(namespace: String, record: PluginRecord)] {
        try await rows(
            """
            SELECT * FROM plugin_data WHERE substring(value FROM 1 FOR length(\(valuePrefix))) = \(valuePrefix)
            AND (expires_at IS NULL OR expires_at > \(now.storeValue)) ORDER BY namespace, key
            """
        ).map { (namespace: try $0["namespace"].string(), record: try Self.pluginRecord($0)) }
    }

    public func deleteExpiredPluginRecords(now: Date) async throws -> Int {
        try await run("DELETE FROM plugin_data WHERE expires_at IS NOT NULL AND expires_at <= \(now.storeValue) RETURNING 1")
    }

    static func pluginRecord(_ row: PostgresRandomAccessRow) throws -> PluginRecord {
        PluginRecord(
            key: try row["key"].string(), value: try row["value"].decode(Data.self), version: try row["version"].int(), expiresAt: try row["expires_at"].optionalDate())
    }
}
