import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: AppStore {
    public func app(id: String) async throws -> App? {
        try readOneStatement { db in try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM apps WHERE id = ?"), arguments: [id]).map(Self.app) }
    }

    public func apps() async throws -> [App] {
        try await readLater { db in try Row.fetchAll(try db.cachedStatement(sql: "SELECT * FROM apps ORDER BY id")).map(Self.app) }
    }

    public func seedApp(_ app: App) async throws -> App {
        try await write { db in
            if let existing = try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM apps WHERE id = ?"), arguments: [app.id]).map(Self.app) {
                if existing.managedBy == .admin { return existing }
                var updated = app
                updated.createdAt = existing.createdAt
                if existing.name == app.name, existing.secretDigest == app.secretDigest, existing.redirectURIs == app.redirectURIs,
                    existing.policy == app.policy
                {
                    return existing
                }
                updated.version = existing.version + 1
                try db.executeCached(
                    sql: "UPDATE apps SET name = ?, secret_digest = ?, redirect_uris = ?, policy = ?, managed_by = ?, updated_at = ?, version = version + 1 WHERE id = ?",
                    arguments: [
                        app.name, app.secretDigest, try StoreJSON.encode(app.redirectURIs), try StoreJSON.encode(app.policy),
                        app.managedBy.rawValue, app.updatedAt.storeValue, app.id,
                    ]
                )
                return updated
            }
            try db.executeCached(
                sql: "INSERT INTO apps (id, name, secret_digest, redirect_uris, policy, managed_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    app.id, app.name, app.secretDigest, try StoreJSON.encode(app.redirectURIs), try StoreJSON.encode(app.policy),
                    app.managedBy.rawValue, app.createdAt.storeValue, app.updatedAt.storeValue,
                ]
            )
            return app
        }
    }

    public func insertApp(_ app: App) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT OR IGNORE INTO apps (id, name, secret_digest, redirect_uris, policy, managed_by, created_at, updated_at, version, disabled)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
                    """,
                arguments: [
                    app.id, app.name, app.secretDigest, try StoreJSON.encode(app.redirectURIs), try StoreJSON.encode(app.policy),
                    app.managedBy.rawValue, app.createdAt.storeValue, app.updatedAt.storeValue, app.disabled,
                ]
            )
            return db.changesCount == 1
        }
    }

    public func updateApp(_ app: App) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: """
                    UPDATE apps SET name = ?, secret_digest = ?, redirect_uris = ?, policy = ?, managed_by = ?, updated_at = ?, disabled = ?, version = version + 1
                    WHERE id = ? AND version = ?
                    """,
                arguments: [
                    app.name, app.secretDigest, try StoreJSON.encode(app.redirectURIs), try StoreJSON.encode(app.policy), app.managedBy.rawValue,
                    app.updatedAt.storeValue, app.disabled, app.id, app.version,
                ]
            )
            return db.changesCount == 1
        }
    }

    public func deleteApp(id: String) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM apps WHERE id = ?").execute(arguments: [id])
            guard db.changesCount == 1 else { return false }
            // What the app held goes with it: its tokens, codes and open flows.
            try db.cachedStatement(sql: "DELETE FROM refresh_tokens WHERE app_id = ?").execute(arguments: [id])
            try db.cachedStatement(sql: "DELETE FROM authorization_codes WHERE app_id = ?").execute(arguments: [id])
            try db.cachedStatement(sql: "DELETE FROM flows WHERE app_id = ?").execute(arguments: [id])
            // And what an app made later with this id must not inherit: its installations (with their
            // sign-in keys), provisional identities, device codes and place in browser sessions.
            for table in ["installations", "provisional_identities", "device_authorizations", "browser_session_apps"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE app_id = ?", arguments: [id])
            }
            return true
        }
    }

    static func app(_ row: Row) throws -> App {
        App(
            id: row["id"], name: row["name"], secretDigest: row["secret_digest"],
            redirectURIs: try StoreJSON.decode([String].self, row["redirect_uris"]),
            policy: try StoreJSON.decode(Policy.self, row["policy"]),
            managedBy: App.ManagedBy(rawValue: row["managed_by"]) ?? .config,
            createdAt: Date(storeValue: row["created_at"]), updatedAt: Date(storeValue: row["updated_at"]), version: row["version"],
            disabled: row["disabled"]
        )
    }
}
