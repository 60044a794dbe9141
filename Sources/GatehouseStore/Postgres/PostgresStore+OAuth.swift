import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: AuthorizationCodeStore {
    public func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws {
        try await run(
            """
            INSERT INTO authorization_codes (digest, app_id, redirect_uri, code_challenge, nonce, scopes, account_id, auth_time, amr, idp, expires_at, session_id)
            VALUES (\(code.digest), \(code.appID), \(code.redirectURI), \(code.codeChallenge), \(code.nonce), \(try StoreJSON.encode(code.scopes)),
                    \(code.accountID), \(code.authTime.storeValue), \(try StoreJSON.encode(code.methods)), \(code.identityProvider), \(code.expiresAt.storeValue), \(code.sessionID))
            """
        )
    }

    public func authorizationCode(digest: String) async throws -> AuthorizationCodeRecord? {
        guard let row = try await rows("SELECT * FROM authorization_codes WHERE digest = \(digest)").first else { return nil }
        return AuthorizationCodeRecord(
            digest: try row["digest"].string(), appID: try row["app_id"].string(), redirectURI: try row["redirect_uri"].string(),
            codeChallenge: try row["code_challenge"].string(), nonce: try row["nonce"].optionalString(), scopes: try row["scopes"].json([String].self),
            accountID: try row["account_id"].string(), authTime: try row["auth_time"].date(), methods: try row["amr"].json([String].self),
            identityProvider: try row["idp"].optionalString(), expiresAt: try row["expires_at"].date(), usedAt: try row["used_at"].optionalDate(),
            issuedFamilyID: try row["issued_family_id"].optionalString(), issuedAccessTokenID: try row["issued_access_token_id"].optionalString(),
            issuedAccessTokenExpiresAt: try row["issued_access_token_expires_at"].optionalDate(), sessionID: try row["session_id"].optionalString()
        )
    }

    /// One conditional update: of two nodes redeeming the same code at the same instant, the second
    /// waits for the first's row lock, re-checks `used_at`, and changes nothing.
    public func redeemAuthorizationCode(digest: String, now: Date, familyID: String, accessTokenID: String, accessTokenExpiresAt: Date) async throws -> Bool {
        try await run(
            """
            UPDATE authorization_codes SET used_at = \(now.storeValue), issued_family_id = \(familyID), issued_access_token_id = \(accessTokenID),
                issued_access_token_expires_at = \(accessTokenExpiresAt.storeValue)
            WHERE digest = \(digest) AND used_at IS NULL RETURNING 1
            """
        ) == 1
    }

    public func deleteExpiredAuthorizationCodes(before: Date) async throws -> Int {
        try await run("DELETE FROM authorization_codes WHERE expires_at < \(before.storeValue) RETURNING 1")
    }
}

extension PostgresStore: RevocationStore {
    public func insertRevocation(_ revocation: RevocationRecord) async throws {
        try await run(
            """
            INSERT INTO revocations (kind, value, revoked_at, expires_at)
            VALUES (\(revocation.kind.rawValue), \(revocation.value), \(revocation.revokedAt.storeValue), \(revocation.expiresAt.storeValue))
            ON CONFLICT (kind, value) DO UPDATE SET revoked_at = GREATEST(revocations.revoked_at, excluded.revoked_at),
                expires_at = GREATEST(revocations.expires_at, excluded.expires_at)
            """
        )
    }

    public func activeRevocations(now: Date) async throws -> [RevocationRecord] {
        try await rows("SELECT * FROM revocations WHERE expires_at > \(now.storeValue)").compactMap { row in
            guard let kind = RevocationRecord.Kind(rawValue: try row["kind"].string()) else { return nil }
            return RevocationRecord(kind: kind, value: try row["value"].string(), revokedAt: try row["revoked_at"].date(), expiresAt: try row["expires_at"].date())
        }
    }

    public func deleteExpiredRevocations(now: Date) async throws -> Int {
        try await run("DELETE FROM revocations WHERE expires_at <= \(now.storeValue) RETURNING 1")
    }
}
