import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: AuthorizationCodeStore {
    public func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws {
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO authorization_codes (digest, app_id, redirect_uri, code_challenge, nonce, scopes, account_id, auth_time, amr, idp, expires_at, session_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    code.digest, code.appID, code.redirectURI, code.codeChallenge, code.nonce, try StoreJSON.encode(code.scopes), code.accountID,
                    code.authTime.storeValue, try StoreJSON.encode(code.methods), code.identityProvider, code.expiresAt.storeValue, code.sessionID,
                ]
            )
        }
    }

    public func authorizationCode(digest: String) async throws -> AuthorizationCodeRecord? {
        try readOneStatement { db in
            guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM authorization_codes WHERE digest = ?"), arguments: [digest]) else { return nil }
            return AuthorizationCodeRecord(
                digest: row["digest"], appID: row["app_id"], redirectURI: row["redirect_uri"], codeChallenge: row["code_challenge"], nonce: row["nonce"],
                scopes: try StoreJSON.decode([String].self, row["scopes"]), accountID: row["account_id"], authTime: Date(storeValue: row["auth_time"]),
                methods: try StoreJSON.decode([String].self, row["amr"]), identityProvider: row["idp"], expiresAt: Date(storeValue: row["expires_at"]),
                usedAt: (row["used_at"] as Double?).map(Date.init(storeValue:)), issuedFamilyID: row["issued_family_id"],
                issuedAccessTokenID: row["issued_access_token_id"],
                issuedAccessTokenExpiresAt: (row["issued_access_token_expires_at"] as Double?).map(Date.init(storeValue:)), sessionID: row["session_id"]
            )
        }
    }

    public func redeemAuthorizationCode(digest: String, now: Date, familyID: String, accessTokenID: String, accessTokenExpiresAt: Date) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: """
                    UPDATE authorization_codes SET used_at = ?, issued_family_id = ?, issued_access_token_id = ?, issued_access_token_expires_at = ?
                    WHERE digest = ? AND used_at IS NULL
                    """,
                arguments: [now.storeValue, familyID, accessTokenID, accessTokenExpiresAt.storeValue, digest]
            )
            return db.changesCount == 1
        }
    }

    public func deleteExpiredAuthorizationCodes(before: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM authorization_codes WHERE expires_at < ?").execute(arguments: [before.storeValue])
            return db.changesCount
        }
    }
}

extension SQLiteStore: RevocationStore {
    public func insertRevocation(_ revocation: RevocationRecord) async throws {
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO revocations (kind, value, revoked_at, expires_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (kind, value) DO UPDATE SET revoked_at = MAX(revoked_at, excluded.revoked_at), expires_at = MAX(expires_at, excluded.expires_at)
                    """,
                arguments: [revocation.kind.rawValue, revocation.value, revocation.revokedAt.storeValue, revocation.expiresAt.storeValue]
            )
        }
    }

    public func activeRevocations(now: Date) async throws -> [RevocationRecord] {
        try await readLater { db in
            try Row.fetchAll(try db.cachedStatement(sql: "SELECT * FROM revocations WHERE expires_at > ?"), arguments: [now.storeValue]).compactMap { row in
                guard let kind = RevocationRecord.Kind(rawValue: row["kind"]) else { return nil }
                return RevocationRecord(
                    kind: kind, value: row["value"], revokedAt: Date(storeValue: row["revoked_at"]), expiresAt: Date(storeValue: row["expires_at"])
                )
            }
        }
    }

    public func deleteExpiredRevocations(now: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM revocations WHERE expires_at <= ?").execute(arguments: [now.storeValue])
            return db.changesCount
        }
    }
}
