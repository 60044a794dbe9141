import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: PluginDataStore {
    public func pluginRecord(namespace: String, key: String, now: Date) async throws -> PluginRecord? {
        try readOneStatement { db in
            try Row.fetchOne(
                try db.cachedStatement(sql: "SELECT * FROM plugin_data WHERE namespace = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)"),
                arguments: [namespace, key, now.storeValue]
            ).map(Self.pluginRecord)
        }
    }

    public func insertPluginRecord(namespace: String, key: String, value: Data, expiresAt: Date?, now: Date) async throws -> Bool {
        try await write { db in
            // An expired record no longer counts: it is replaced, its version going on (so a writer still
            // holding the old record's version cannot replace the new one). A new record starts at a
            // random version (`PluginRecord.firstVersion`), for the same reason after a delete.
            try db.executeCached(
                sql: """
                    INSERT INTO plugin_data (namespace, key, value, version, expires_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, version = plugin_data.version + 1, expires_at = excluded.expires_at
                    WHERE plugin_data.expires_at IS NOT NULL AND plugin_data.expires_at <= ?
                    """,
                arguments: [namespace, key, value, PluginRecord.firstVersion(), expiresAt?.storeValue, now.storeValue]
            )
            return db.changesCount == 1
        }
    }

    public func replacePluginRecord(namespace: String, key: String, value: Data, expiresAt: Date?, expectedVersion: Int) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: "UPDATE plugin_data SET value = ?, expires_at = ?, version = version + 1 WHERE namespace = ? AND key = ? AND version = ?",
                arguments: [value, expiresAt?.storeValue, namespace, key, expectedVersion]
            )
            return db.changesCount == 1
        }
    }

    public func deletePluginRecord(namespace: String, key: String) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM plugin_data WHERE namespace = ? AND key = ?").execute(arguments: [namespace, key])
            return db.changesCount == 1
        }
    }

    public func deletePluginRecord(namespace: String, key: String, expectedVersion: Int) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM plugin_data WHERE namespace = ? AND key = ? AND version = ?").execute(arguments: [namespace, key, expectedVersion])
            return db.changesCount == 1
        }
    }

    public func pluginRecords(namespace: String, keyPrefix: String, now: Date) async throws -> [PluginRecord] {
        try await readLater { db in
            // `key >= prefix` lets the primary key index start at the prefix; substr makes the match
            // exact (LIKE would treat % and _ in a prefix as wildcards).
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM plugin_data WHERE namespace = ? AND key >= ? AND substr(key, 1, ?) = ?
                    AND (expires_at IS NULL OR expires_at > ?) ORDER BY key
                    """,
                arguments: [namespace, keyPrefix, keyPrefix.unicodeScalars.count, keyPrefix, now.storeValue]
            ).map(Self.pluginRecord)
        }
    }

    public func pluginRecords(valuePrefix: Data, now: Date) async throws -> [(namespace: String, record: PluginRecord)] {
        try await readLater { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM plugin_data WHERE substr(value, 1, ?) = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY namespace, key",
                arguments: [valuePrefix.count, valuePrefix, now.storeValue]
            ).map { (namespace: $0["namespace"], record: Self.pluginRecord($0)) }
        }
    }

    public func deleteExpiredPluginRecords(now: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM plugin_data WHERE expires_at IS NOT NULL AND expires_at <= ?").execute(arguments: [now.storeValue])
            return db.changesCount
        }
    }

    static func pluginRecord(_ row: Row) -> PluginRecord {
        PluginRecord(key: row["key"], value: row["value"], version: row["version"], expiresAt: (row["expires_at"] as Double?).map(Date.init(storeValue:)))
    }
}
