import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: RefreshTokenStore {
    public func insertRefreshToken(_ token: RefreshTokenRecord) async throws {
        try await run(try Self.insert(token))
    }

    static func insert(_ token: RefreshTokenRecord) throws -> PostgresQuery {
        """
        INSERT INTO refresh_tokens (digest, family_id, account_id, app_id, scopes, issued_at, expires_at, auth_time, amr, idp, used_at, revoked_at, sign_in_key, dpop_jkt, installation, session_id)
        VALUES (\(token.digest), \(token.familyID), \(token.accountID), \(token.appID), \(try StoreJSON.encode(token.scopes)),
                \(token.issuedAt.storeValue), \(token.expiresAt.storeValue), \(token.authTime.storeValue), \(try StoreJSON.encode(token.methods)),
                \(token.identityProvider), \(token.usedAt?.storeValue), \(token.revokedAt?.storeValue), \(token.signInKeyID), \(token.dpopJKT), \(token.installation), \(token.sessionID))
        """
    }

    public func isRefreshTokenFamilyLive(familyID: String, now: Date) async throws -> Bool {
        try await !rows(
            "SELECT 1 FROM refresh_tokens WHERE family_id = \(familyID) AND used_at IS NULL AND revoked_at IS NULL AND expires_at > \(now.storeValue) LIMIT 1"
        ).isEmpty
    }

    public func refreshToken(digest: String) async throws -> RefreshTokenRecord? {
        guard let row = try await rows(PreparedStatements.RefreshTokenByDigest.self, { $0.append(digest) }).first else { return nil }
        return RefreshTokenRecord(
            digest: try row["digest"].string(), familyID: try row["family_id"].string(), accountID: try row["account_id"].string(),
            appID: try row["app_id"].string(), scopes: try row["scopes"].json([String].self), issuedAt: try row["issued_at"].date(),
            expiresAt: try row["expires_at"].date(), authTime: try row["auth_time"].date(), methods: try row["amr"].json([String].self),
            identityProvider: try row["idp"].optionalString(), usedAt: try row["used_at"].optionalDate(), revokedAt: try row["revoked_at"].optionalDate(),
            signInKeyID: try row["sign_in_key"].optionalString(), dpopJKT: try row["dpop_jkt"].optionalString(),
            installation: try row["installation"].optionalString(), sessionID: try row["session_id"].optionalString()
        )
    }

    /// One statement: the conditional update and the insert of the replacement in one CTE, so the
    /// replacement exists exactly when this request won the token. Of two nodes rotating the same
    /// token at once, the second's update re-checks `used_at` after the first commits and changes
    /// nothing, and then nothing is inserted.
    public func rotateRefreshToken(usedDigest: String, replacement: RefreshTokenRecord, now: Date) async throws -> Bool {
        let token = replacement
        let scopes = try StoreJSON.encode(token.scopes), methods = try StoreJSON.encode(token.methods)
        return try await rows(PreparedStatements.RotateRefreshToken.self) { binds in
            binds.append(now.storeValue)
            binds.append(usedDigest)
            binds.append(token.digest)
            binds.append(token.familyID)
            binds.append(token.accountID)
            binds.append(token.appID)
            binds.append(scopes)
            binds.append(token.issuedAt.storeValue)
            binds.append(token.expiresAt.storeValue)
            binds.append(token.authTime.storeValue)
            binds.append(methods)
            binds.append(token.identityProvider)
            binds.append(token.usedAt?.storeValue)
            binds.append(token.revokedAt?.storeValue)
            binds.append(token.signInKeyID)
            binds.append(token.dpopJKT)
            binds.append(token.installation)
            binds.append(token.sessionID)
        }.count == 1
    }

    /// Repeated until a pass revokes nothing: a rotation running at the same moment inserts its
    /// replacement after this statement's snapshot was taken (the update waits for the rotated row,
    /// then revokes it, but cannot see the new one), and the next pass, with a new snapshot, catches
    /// it. A rotation needs a live token, so the passes end.
    public func revokeRefreshTokenFamily(familyID: String, now: Date) async throws -> Int {
        var total = 0
        while true {
            let revoked = try await run("UPDATE refresh_tokens SET revoked_at = \(now.storeValue) WHERE family_id = \(familyID) AND revoked_at IS NULL RETURNING 1")
            total += revoked
            if revoked == 0 { return total }
        }
    }

    public func revokeGrants(appID: String, now: Date) async throws -> Int {
        try await transaction { connection in
            // Repeated until a pass revokes nothing, as for one family: a rotation committing meanwhile.
            var revoked = 0
            while true {
                let pass = try await Self.rows(
                    "UPDATE refresh_tokens SET revoked_at = \(now.storeValue) WHERE app_id = \(appID) AND revoked_at IS NULL RETURNING 1", on: connection,
                    logger: self.logger
                ).count
                revoked += pass
                if pass == 0 { break }
            }
            try await connection.query("DELETE FROM authorization_codes WHERE app_id = \(appID) AND used_at IS NULL", logger: self.logger)
            try await connection.query("DELETE FROM flows WHERE app_id = \(appID)", logger: self.logger)
            return revoked
        }
    }

    public func revokeRefreshTokens(accountID: String, now: Date) async throws -> Int {
        try await run("UPDATE refresh_tokens SET revoked_at = \(now.storeValue) WHERE account_id = \(accountID) AND revoked_at IS NULL RETURNING 1")
    }

    /// Repeated until a pass revokes nothing, as for one family: a rotation committing meanwhile.
    public func revokeRefreshTokens(accountID: String, appID: String, now: Date) async throws -> (families: [String], redeemedCodeFamilies: [String]) {
        try await transaction { connection in
            try await connection.query(
                "DELETE FROM authorization_codes WHERE account_id = \(accountID) AND app_id = \(appID) AND used_at IS NULL", logger: self.logger
            )
            var families = Set<String>()
            // A code redeemed a moment ago whose tokens are not written yet: its family goes too.
            var redeemed = Set<String>()
            for row in try await Self.rows(
                "SELECT DISTINCT issued_family_id FROM authorization_codes WHERE account_id = \(accountID) AND app_id = \(appID) AND used_at IS NOT NULL AND issued_family_id IS NOT NULL",
                on: connection, logger: self.logger
            ) {
                redeemed.insert(try row[0].string())
            }
            while true {
                let pass = try await Self.rows(
                    "UPDATE refresh_tokens SET revoked_at = \(now.storeValue) WHERE account_id = \(accountID) AND app_id = \(appID) AND revoked_at IS NULL RETURNING family_id",
                    on: connection, logger: self.logger
                )
                if pass.isEmpty { break }
                for row in pass { families.insert(try row["family_id"].string()) }
            }
            return (families.sorted(), redeemed.subtracting(families).sorted())
        }
    }

    public func deleteExpiredRefreshTokens(now: Date) async throws -> Int {
        try await run("DELETE FROM refresh_tokens WHERE expires_at <= \(now.storeValue) RETURNING 1")
    }
}

extension PostgresStore: SigningKeyStore {
    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await rows("SELECT * FROM signing_keys ORDER BY created_at, kid").compactMap { row in
            guard let algorithm = SigningAlgorithm(rawValue: try row["algorithm"].string()) else { return nil }
            return SigningKeyRecord(
                kid: try row["kid"].string(), algorithm: algorithm, privateKeyPEM: try row["private_key_pem"].string(), createdAt: try row["created_at"].date(),
                retiredAt: try row["retired_at"].optionalDate(), activatesAt: try row["activates_at"].optionalDate()
            )
        }
    }

    public func insertSigningKey(_ key: SigningKeyRecord) async throws {
        try await run(
            """
            INSERT INTO signing_keys (kid, algorithm, private_key_pem, created_at, retired_at, activates_at)
            VALUES (\(key.kid), \(key.algorithm.rawValue), \(key.privateKeyPEM), \(key.createdAt.storeValue), \(key.retiredAt?.storeValue),
                    \(key.activatesAt?.storeValue))
            ON CONFLICT (kid) DO NOTHING
            """
        )
    }

    public func retireSigningKeys(keeping kids: [String], now: Date, includingWaiting: Bool) async throws {
        let t = now.storeValue
        // A waiting key's start is moved back to `now` too, so that its signing window is empty
        // rather than inverted.
        try await run(
            """
            UPDATE signing_keys SET retired_at = \(t), activates_at = LEAST(COALESCE(activates_at, created_at), \(t))
            WHERE retired_at IS NULL AND (\(includingWaiting) OR COALESCE(activates_at, created_at) < \(t)) AND NOT (kid = ANY(\(kids)))
            """
        )
    }

    public func deleteSigningKey(kid: String) async throws -> Bool {
        try await run("DELETE FROM signing_keys WHERE kid = \(kid) RETURNING 1") > 0
    }

    public func deleteSigningKeys(retiredBefore before: Date) async throws -> Int {
        try await run("DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < \(before.storeValue) RETURNING 1")
    }

    public func replaceSigningKeyMaterial(kid: String, expected: String, replacement: String) async throws -> Bool {
        try await run("UPDATE signing_keys SET private_key_pem = \(replacement) WHERE kid = \(kid) AND private_key_pem = \(expected) RETURNING 1") == 1
    }
}
