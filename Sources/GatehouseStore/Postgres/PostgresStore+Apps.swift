import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: AppStore {
    public func app(id: String) async throws -> App? {
        try await rows(PreparedStatements.AppByID.self) { $0.append(id) }.first.map(Self.app)
    }

    public func apps() async throws -> [App] {
        try await rows("SELECT * FROM apps ORDER BY id").map(Self.app)
    }

    /// Nodes that start together seed the same apps: the row is made if missing, then locked, so the
    /// comparison and the update see one version.
    public func seedApp(_ app: App) async throws -> App {
        let redirectURIs = try StoreJSON.encode(app.redirectURIs)
        let policy = try StoreJSON.encode(app.policy)
        return try await transaction { connection in
            let inserted = try await Self.rows(
                """
                INSERT INTO apps (id, name, secret_digest, redirect_uris, policy, managed_by, created_at, updated_at, version, disabled)
                VALUES (\(app.id), \(app.name), \(app.secretDigest), \(redirectURIs), \(policy), \(app.managedBy.rawValue),
                        \(app.createdAt.storeValue), \(app.updatedAt.storeValue), 0, false)
                ON CONFLICT (id) DO NOTHING RETURNING 1
                """, on: connection, logger: self.logger
            )
            if !inserted.isEmpty { return app }
            guard let existing = try await Self.rows("SELECT * FROM apps WHERE id = \(app.id) FOR UPDATE", on: connection, logger: self.logger).first.map(Self.app)
            else { return app }
            if existing.managedBy == .admin { return existing }
            if existing.name == app.name, existing.secretDigest == app.secretDigest, existing.redirectURIs == app.redirectURIs, existing.policy == app.policy {
                return existing
            }
            var updated = app
            updated.createdAt = existing.createdAt
            updated.version = existing.version + 1
            updated.disabled = existing.disabled
            try await connection.query(
                """
                UPDATE apps SET name = \(app.name), secret_digest = \(app.secretDigest), redirect_uris = \(redirectURIs), policy = \(policy),
                    managed_by = \(app.managedBy.rawValue), updated_at = \(app.updatedAt.storeValue), version = version + 1
                WHERE id = \(app.id)
                """, logger: self.logger
            )
            return updated
        }
    }

    public func insertApp(_ app: App) async throws -> Bool {
        try await run(
            """
            INSERT INTO apps (id, name, secret_digest, redirect_uris, policy, managed_by, created_at, updated_at, version, disabled)
            VALUES (\(app.id), \(app.name), \(app.secretDigest), \(try StoreJSON.encode(app.redirectURIs)), \(try StoreJSON.encode(app.policy)),
                    \(app.managedBy.rawValue), \(app.createdAt.storeValue), \(app.updatedAt.storeValue), 0, \(app.disabled))
            ON CONFLICT (id) DO NOTHING RETURNING 1
            """
        ) == 1
    }

    public func updateApp(_ app: App) async throws -> Bool {
        try await run(
            """
            UPDATE apps SET name = \(app.name), secret_digest = \(app.secretDigest), redirect_uris = \(try StoreJSON.encode(app.redirectURIs)),
                policy = \(try StoreJSON.encode(app.policy)), managed_by = \(app.managedBy.rawValue), updated_at = \(app.updatedAt.storeValue),
                disabled = \(app.disabled), version = version + 1
            WHERE id = \(app.id) AND version = \(app.version) RETURNING 1
            """
        ) == 1
    }

    public func deleteApp(id: String) async throws -> Bool {
        try await transaction { connection in
            guard try await !Self.rows("DELETE FROM apps WHERE id = \(id) RETURNING 1", on: connection, logger: self.logger).isEmpty else { return false }
            // What the app held goes with it: its tokens, codes and open flows.
            try await connection.query("DELETE FROM refresh_tokens WHERE app_id = \(id)", logger: self.logger)
            try await connection.query("DELETE FROM authorization_codes WHERE app_id = \(id)", logger: self.logger)
            try await connection.query("DELETE FROM flows WHERE app_id = \(id)", logger: self.logger)
            // And what an app made later with this id must not inherit: its installations (with their
            // sign-in keys), provisional identities, device codes and place in browser sessions.
            try await connection.query("DELETE FROM installations WHERE app_id = \(id)", logger: self.logger)
            try await connection.query("DELETE FROM provisional_identities WHERE app_id = \(id)", logger: self.logger)
            try await connection.query("DELETE FROM device_authorizations WHERE app_id = \(id)", logger: self.logger)
            try await connection.query("DELETE FROM browser_session_apps WHERE app_id = \(id)", logger: self.logger)
            return true
        }
    }

    static func app(_ row: PostgresRandomAccessRow) throws -> App {
        App(
            id: try row["id"].string(), name: try row["name"].string(), secretDigest: try row["secret_digest"].optionalString(),
            redirectURIs: try row["redirect_uris"].json([String].self), policy: try row["policy"].json(Policy.self),
            managedBy: App.ManagedBy(rawValue: try row["managed_by"].string()) ?? .config, createdAt: try row["created_at"].date(),
            updatedAt: try row["updated_at"].date(), version: try row["version"].int(), disabled: try row["disabled"].decode(Bool.self)
        )
    }
}
