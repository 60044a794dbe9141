import Logging
import PostgresNIO

/// The text of a statement the PostgreSQL store prepares once on each connection and from then on only
/// binds and runs: for the short lookups and writes of every token request, parsing and planning cost
/// PostgreSQL more than running them (postgres-nio's ordinary queries are unnamed statements, parsed
/// and planned every time).
///
/// The columns are named, never `*`: a prepared statement whose result columns change (a migration that
/// adds one, run by a newer node while this one is up) fails with "cached plan must not change result
/// type" until the connection is replaced.
protocol PreparedSQL: Sendable {
    static var sql: String { get }
}

/// A `PreparedSQL` with its values, as postgres-nio runs it: prepared under the statement type's name the
/// first time a connection sees it.
struct Prepared<Statement: PreparedSQL>: PostgresPreparedStatement {
    typealias Row = PostgresRow
    /// The full type name (`GatehouseStore.PreparedStatements.AppByID`): a connection runs whatever it
    /// prepared under a name, so two statements must never share one.
    static var name: String { String(reflecting: Statement.self) }
    static var sql: String { Statement.sql }
    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

extension PostgresStore {
    /// Runs a prepared statement with the values `bind` appends in order (`$1`, `$2`, ...), under the
    /// same outage rules as every other statement, and answers its rows.
    func rows<Statement: PreparedSQL>(
        _ statement: Statement.Type, _ bind: (inout PostgresBindings) throws -> Void
    ) async throws -> [PostgresRandomAccessRow] {
        var bindings = PostgresBindings()
        try bind(&bindings)
        let prepared = Prepared<Statement>(bindings: bindings)
        return try await withConnection { connection in
            do {
                var rows: [PostgresRandomAccessRow] = []
                for try await row in try await connection.execute(prepared, logger: self.logger) { rows.append(row.makeRandomAccess()) }
                return rows
            } catch let error as PSQLError where error.code == .server {
                // postgres-nio keeps a failed preparation's error for the connection's lifetime and
                // never prepares again, nor notices a statement the server lost (a pooler's
                // `DISCARD ALL`): this connection is closed so the pool opens a fresh one. Errors here
                // are rare (a lock timeout while a migration holds a table, a lost race on a write).
                try? await connection.close()
                throw error
            }
        }
    }
}

/// The prepared statements of the hot paths: the lookups every token request and sign-in makes (the
/// app, the failure counters, plugins' records such as a local account's password), and refresh
/// rotation with the account it reads.
enum PreparedStatements {
    enum AppByID: PreparedSQL {
        static let sql = """
            SELECT id, name, secret_digest, redirect_uris, policy, managed_by, created_at, updated_at, version, disabled FROM apps WHERE id = $1
            """
    }

    enum PluginRecordByKey: PreparedSQL {
        static let sql = """
            SELECT key, value, version, expires_at FROM plugin_data
            WHERE namespace = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > $3)
            """
    }

    enum AttemptCounterByKey: PreparedSQL {
        static let sql = "SELECT key, failures, window_start, locked_until, lockouts FROM attempt_counters WHERE key = $1"
    }

    enum AccountByID: PreparedSQL {
        static let sql = "SELECT id, username, created_at, is_test, profile, profile_pending, disabled_at, disabled_by FROM accounts WHERE id = $1"
    }

    enum AccountOfIdentity: PreparedSQL {
        static let sql = """
            SELECT accounts.id, accounts.username, accounts.created_at, accounts.is_test, accounts.profile, accounts.profile_pending, accounts.disabled_at, accounts.disabled_by
            FROM identity_links JOIN accounts ON accounts.id = identity_links.account_id
            WHERE identity_links.provider_id = $1 AND identity_links.subject = $2
            """
    }

    enum IdentityLinksOfAccount: PreparedSQL {
        static let sql = """
            SELECT provider_id, subject, account_id, claims, created_at, last_sign_in_at FROM identity_links
            WHERE account_id = $1 ORDER BY created_at
            """
    }

    static let refreshTokenColumns = """
        digest, family_id, account_id, app_id, scopes, issued_at, expires_at, auth_time, amr, idp, used_at, revoked_at, sign_in_key, dpop_jkt, \
        installation, session_id
        """

    enum RefreshTokenByDigest: PreparedSQL {
        static let sql = "SELECT \(refreshTokenColumns) FROM refresh_tokens WHERE digest = $1"
    }

    /// `$1` the time of use, `$2` the used token's digest, `$3`... the replacement's columns in
    /// `refreshTokenColumns` order.
    enum RotateRefreshToken: PreparedSQL {
        static let sql = """
            WITH used AS (
                UPDATE refresh_tokens SET used_at = $1 WHERE digest = $2 AND used_at IS NULL AND revoked_at IS NULL RETURNING 1
            )
            INSERT INTO refresh_tokens (\(refreshTokenColumns))
            SELECT $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18 FROM used RETURNING 1
            """
    }
}
