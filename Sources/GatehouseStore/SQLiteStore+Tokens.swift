import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: RefreshTokenStore {
    public func insertRefreshToken(_ token: RefreshTokenRecord) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO refresh_tokens (digest, family_id, account_id, app_id, scopes, issued_at, expires_at, used_at, revoked_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    token.digest, token.familyID, token.accountID, token.appID, try StoreJSON.encode(token.scopes),
                    token.issuedAt.storeValue, token.expiresAt.storeValue, token.usedAt?.storeValue, token.revokedAt?.storeValue,
                ]
            )
        }
    }

    public func refreshToken(digest: String) async throws -> RefreshTokenRecord? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM refresh_tokens WHERE digest = ?", arguments: [digest]) else { return nil }
            return RefreshTokenRecord(
                digest: row["digest"], familyID: row["family_id"], accountID: row["account_id"], appID: row["app_id"],
                scopes: try StoreJSON.decode([String].self, row["scopes"]), issuedAt: Date(storeValue: row["issued_at"]),
                expiresAt: Date(storeValue: row["expires_at"]), usedAt: (row["used_at"] as Double?).map(Date.init(storeValue:)),
                revokedAt: (row["revoked_at"] as Double?).map(Date.init(storeValue:))
            )
        }
    }

    public func revokeRefreshTokens(accountID: String, now: Date) async throws -> Int {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE refresh_tokens SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL", arguments: [now.storeValue, accountID]
            )
            return db.changesCount
        }
    }
}

extension SQLiteStore: SigningKeyStore {
    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM signing_keys ORDER BY created_at").compactMap { row in
                guard let algorithm = SigningAlgorithm(rawValue: row["algorithm"]) else { return nil }
                return SigningKeyRecord(
                    kid: row["kid"], algorithm: algorithm, privateKeyPEM: row["private_key_pem"], createdAt: Date(storeValue: row["created_at"]),
                    retiredAt: (row["retired_at"] as Double?).map(Date.init(storeValue:))
                )
            }
        }
    }

    public func insertSigningKey(_ key: SigningKeyRecord) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO signing_keys (kid, algorithm, private_key_pem, created_at, retired_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [key.kid, key.algorithm.rawValue, key.privateKeyPEM, key.createdAt.storeValue, key.retiredAt?.storeValue]
            )
        }
    }
}
