import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: RefreshTokenStore {
    public func insertRefreshToken(_ token: RefreshTokenRecord) async throws {
        try await write { db in try Self.insert(token, db) }
    }

    static func insert(_ token: RefreshTokenRecord, _ db: Database) throws {
        try db.executeCached(
            sql: """
                INSERT INTO refresh_tokens (digest, family_id, account_id, app_id, scopes, issued_at, expires_at, auth_time, amr, idp, used_at, revoked_at,
                    sign_in_key, dpop_jkt, installation, session_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                token.digest, token.familyID, token.accountID, token.appID, try StoreJSON.encode(token.scopes),
                token.issuedAt.storeValue, token.expiresAt.storeValue, token.authTime.storeValue, try StoreJSON.encode(token.methods),
                token.identityProvider, token.usedAt?.storeValue, token.revokedAt?.storeValue, token.signInKeyID, token.dpopJKT, token.installation,
                token.sessionID,
            ]
        )
    }

    public func refreshToken(digest: String) async throws -> RefreshTokenRecord? {
        try readOneStatement { db in
            guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM refresh_tokens WHERE digest = ?"), arguments: [digest]) else { return nil }
            return RefreshTokenRecord(
                digest: row["digest"], familyID: row["family_id"], accountID: row["account_id"], appID: row["app_id"],
                scopes: try StoreJSON.decode([String].self, row["scopes"]), issuedAt: Date(storeValue: row["issued_at"]),
                expiresAt: Date(storeValue: row["expires_at"]), authTime: Date(storeValue: row["auth_time"]),
                methods: try StoreJSON.decode([String].self, row["amr"]), identityProvider: row["idp"],
                usedAt: (row["used_at"] as Double?).map(Date.init(storeValue:)), revokedAt: (row["revoked_at"] as Double?).map(Date.init(storeValue:)),
                signInKeyID: row["sign_in_key"], dpopJKT: row["dpop_jkt"], installation: row["installation"], sessionID: row["session_id"]
            )
        }
    }

    public func isRefreshTokenFamilyLive(familyID: String, now: Date) async throws -> Bool {
        try readOneStatement { db in
            try Bool.fetchOne(
                try db.cachedStatement(
                    sql: "SELECT 1 FROM refresh_tokens WHERE family_id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ? LIMIT 1"
                ),
                arguments: [familyID, now.storeValue]
            ) != nil
        }
    }

    public func rotateRefreshToken(usedDigest: String, replacement: RefreshTokenRecord, now: Date) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: "UPDATE refresh_tokens SET used_at = ? WHERE digest = ? AND used_at IS NULL AND revoked_at IS NULL",
                arguments: [now.storeValue, usedDigest]
            )
            guard db.changesCount == 1 else { return false }
            try Self.insert(replacement, db)
            return true
        }
    }

    public func revokeRefreshTokenFamily(familyID: String, now: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "UPDATE refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL").execute(arguments: [
                now.storeValue, familyID,
            ]
            )
            return db.changesCount
        }
    }

    public func revokeRefreshTokens(accountID: String, now: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "UPDATE refresh_tokens SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL").execute(
                arguments: [now.storeValue, accountID]
            )
            return db.changesCount
        }
    }

    public func revokeRefreshTokens(accountID: String, appID: String, now: Date) async throws -> (families: [String], redeemedCodeFamilies: [String]) {
        try await write { db in
            let families = try String.fetchAll(
                db.cachedStatement(sql: "SELECT DISTINCT family_id FROM refresh_tokens WHERE account_id = ? AND app_id = ? AND revoked_at IS NULL"),
                arguments: [accountID, appID]
            )
            try db.cachedStatement(sql: "UPDATE refresh_tokens SET revoked_at = ? WHERE account_id = ? AND app_id = ? AND revoked_at IS NULL").execute(
                arguments: [now.storeValue, accountID, appID]
            )
            try db.cachedStatement(sql: "DELETE FROM authorization_codes WHERE account_id = ? AND app_id = ? AND used_at IS NULL").execute(arguments: [accountID, appID])
            // A code redeemed a moment ago whose tokens are not written yet: its family goes too.
            let redeemed = try String.fetchAll(
                db.cachedStatement(
                    sql:
                        "SELECT DISTINCT issued_family_id FROM authorization_codes WHERE account_id = ? AND app_id = ? AND used_at IS NOT NULL AND issued_family_id IS NOT NULL"
                ),
                arguments: [accountID, appID]
            )
            return (families.sorted(), Set(redeemed).subtracting(families).sorted())
        }
    }

    public func replaceSigningKeyMaterial(kid: String, expected: String, replacement: String) async throws -> Bool {
        try await write { db in
            try db.executeCached(sql: "UPDATE signing_keys SET private_key_pem = ? WHERE kid = ? AND private_key_pem = ?", arguments: [replacement, kid, expected])
            return db.changesCount == 1
        }
    }

    public func revokeGrants(appID: String, now: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "UPDATE refresh_tokens SET revoked_at = ? WHERE app_id = ? AND revoked_at IS NULL").execute(arguments: [now.storeValue, appID])
            let revoked = db.changesCount
            try db.cachedStatement(sql: "DELETE FROM authorization_codes WHERE app_id = ? AND used_at IS NULL").execute(arguments: [appID])
            try db.cachedStatement(sql: "DELETE FROM flows WHERE app_id = ?").execute(arguments: [appID])
            return revoked
        }
    }

    public func deleteExpiredRefreshTokens(now: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM refresh_tokens WHERE expires_at <= ?").execute(arguments: [now.storeValue])
            return db.changesCount
        }
    }
}

extension SQLiteStore: SigningKeyStore {
    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await readLater { db in
            try Row.fetchAll(try db.cachedStatement(sql: "SELECT * FROM signing_keys ORDER BY created_at, kid")).compactMap { row in
                guard let algorithm = SigningAlgorithm(rawValue: row["algorithm"]) else { return nil }
                return SigningKeyRecord(
                    kid: row["kid"], algorithm: algorithm, privateKeyPEM: row["private_key_pem"], createdAt: Date(storeValue: row["created_at"]),
                    retiredAt: (row["retired_at"] as Double?).map(Date.init(storeValue:)), activatesAt: (row["activates_at"] as Double?).map(Date.init(storeValue:))
                )
            }
        }
    }

    public func retireSigningKeys(keeping kids: [String], now: Date, includingWaiting: Bool) async throws {
        try await write { db in
            let placeholders = kids.map { _ in "?" }.joined(separator: ", ")
            // A waiting key's start is moved back to `now` too, so that its signing window is empty
            // rather than inverted.
            try db.execute(
                sql: """
                    UPDATE signing_keys SET retired_at = ?, activates_at = MIN(COALESCE(activates_at, created_at), ?)
                    WHERE retired_at IS NULL AND (? OR COALESCE(activates_at, created_at) < ?) AND kid NOT IN (\(placeholders))
                    """,
                arguments: [now.storeValue, now.storeValue, includingWaiting, now.storeValue] + StatementArguments(kids)
            )
        }
    }

    public func deleteSigningKey(kid: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM signing_keys WHERE kid = ?", arguments: [kid])
            return db.changesCount > 0
        }
    }

    public func deleteSigningKeys(retiredBefore before: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < ?").execute(arguments: [before.storeValue])
            return db.changesCount
        }
    }

    public func insertSigningKey(_ key: SigningKeyRecord) async throws {
        try await write { db in
            try db.executeCached(
                sql: "INSERT OR IGNORE INTO signing_keys (kid, algorithm, private_key_pem, created_at, retired_at, activates_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [key.kid, key.algorithm.rawValue, key.privateKeyPEM, key.createdAt.storeValue, key.retiredAt?.storeValue, key.activatesAt?.storeValue]
            )
        }
    }
}
