import Foundation
import GatehouseCore
import PostgresNIO

/// The PostgreSQL schema, as the same ordered, named migrations as `SQLiteMigrations` (so that a copy
/// between the two can check both are at the same version). A released migration is never edited.
///
/// Column types mirror SQLite's: times are seconds since 1970 (`double precision`), lists and
/// structures JSON text, flags `boolean`. Keys that are listed in order or matched by prefix are
/// `COLLATE "C"` (byte order, as SQLite compares), whatever the database's locale.
enum PostgresMigrations {
    static let all: [(name: String, sql: String)] = [
        (
            "v1-foundation",
            """
            CREATE TABLE apps (
                id TEXT COLLATE "C" PRIMARY KEY,
                name TEXT NOT NULL,
                secret_digest TEXT,
                redirect_uris TEXT NOT NULL,
                policy TEXT NOT NULL,
                managed_by TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL
            );
            CREATE TABLE accounts (
                id TEXT COLLATE "C" PRIMARY KEY,
                username TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL
            );
            CREATE INDEX accounts_by_username ON accounts(username);
            CREATE TABLE identity_links (
                provider_id TEXT NOT NULL,
                subject TEXT NOT NULL,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                claims TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                last_sign_in_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (provider_id, subject)
            );
            CREATE INDEX identity_links_by_account ON identity_links(account_id);
            CREATE TABLE flows (
                id TEXT PRIMARY KEY,
                app_id TEXT NOT NULL,
                payload TEXT NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                version BIGINT NOT NULL
            );
            CREATE INDEX flows_by_expiry ON flows(expires_at);
            CREATE INDEX flows_by_app ON flows(app_id);
            CREATE TABLE refresh_tokens (
                digest TEXT PRIMARY KEY,
                family_id TEXT NOT NULL,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                app_id TEXT NOT NULL,
                scopes TEXT NOT NULL,
                issued_at DOUBLE PRECISION NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                used_at DOUBLE PRECISION,
                revoked_at DOUBLE PRECISION
            );
            CREATE INDEX refresh_tokens_by_account ON refresh_tokens(account_id);
            CREATE INDEX refresh_tokens_by_family ON refresh_tokens(family_id);
            CREATE INDEX refresh_tokens_by_app ON refresh_tokens(app_id);
            CREATE INDEX refresh_tokens_by_expiry ON refresh_tokens(expires_at);
            CREATE TABLE signing_keys (
                kid TEXT COLLATE "C" PRIMARY KEY,
                algorithm TEXT NOT NULL,
                private_key_pem TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                retired_at DOUBLE PRECISION
            );
            CREATE TABLE audit_events (
                seq BIGSERIAL UNIQUE,
                id TEXT PRIMARY KEY,
                time DOUBLE PRECISION NOT NULL,
                type TEXT NOT NULL,
                app_id TEXT,
                account_id TEXT,
                provider_id TEXT,
                outcome TEXT,
                details TEXT NOT NULL
            );
            CREATE INDEX audit_events_by_time ON audit_events(time);
            CREATE TABLE plugin_data (
                namespace TEXT COLLATE "C" NOT NULL,
                key TEXT COLLATE "C" NOT NULL,
                value BYTEA NOT NULL,
                version BIGINT NOT NULL,
                expires_at DOUBLE PRECISION,
                PRIMARY KEY (namespace, key)
            );
            CREATE INDEX plugin_data_by_expiry ON plugin_data(expires_at) WHERE expires_at IS NOT NULL;
            """
        ),
        (
            "v2-openid-provider",
            """
            ALTER TABLE refresh_tokens ADD COLUMN auth_time DOUBLE PRECISION NOT NULL DEFAULT 0;
            ALTER TABLE refresh_tokens ADD COLUMN amr TEXT NOT NULL DEFAULT '[]';
            ALTER TABLE refresh_tokens ADD COLUMN idp TEXT;
            CREATE TABLE authorization_codes (
                digest TEXT PRIMARY KEY,
                app_id TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                code_challenge TEXT NOT NULL,
                nonce TEXT,
                scopes TEXT NOT NULL,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                auth_time DOUBLE PRECISION NOT NULL,
                amr TEXT NOT NULL,
                idp TEXT,
                expires_at DOUBLE PRECISION NOT NULL,
                used_at DOUBLE PRECISION,
                issued_family_id TEXT,
                issued_access_token_id TEXT,
                issued_access_token_expires_at DOUBLE PRECISION
            );
            CREATE INDEX authorization_codes_by_app ON authorization_codes(app_id);
            CREATE INDEX authorization_codes_by_expiry ON authorization_codes(expires_at);
            CREATE TABLE revocations (
                kind TEXT NOT NULL,
                value TEXT NOT NULL,
                revoked_at DOUBLE PRECISION NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (kind, value)
            );
            CREATE INDEX revocations_by_expiry ON revocations(expires_at);
            """
        ),
        (
            "v3-lockouts-admin",
            """
            CREATE TABLE attempt_counters (
                key TEXT PRIMARY KEY,
                failures BIGINT NOT NULL,
                window_start DOUBLE PRECISION NOT NULL,
                locked_until DOUBLE PRECISION,
                lockouts BIGINT NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL
            );
            CREATE INDEX attempt_counters_by_update ON attempt_counters(updated_at);
            CREATE INDEX attempt_counters_by_lock ON attempt_counters(locked_until) WHERE locked_until IS NOT NULL;
            ALTER TABLE apps ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
            CREATE INDEX audit_events_by_type ON audit_events(type, time);
            CREATE INDEX audit_events_by_app ON audit_events(app_id, time);
            CREATE INDEX audit_events_by_account ON audit_events(account_id, time);
            """
        ),
        ("v4-test-accounts", "ALTER TABLE accounts ADD COLUMN is_test BOOLEAN NOT NULL DEFAULT false;"),
        (
            "v5-provisional-identities",
            """
            CREATE TABLE provisional_identities (
                id TEXT COLLATE "C" PRIMARY KEY,
                app_id TEXT NOT NULL,
                email TEXT NOT NULL,
                grants TEXT NOT NULL,
                groups TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                created_by TEXT NOT NULL,
                account_id TEXT REFERENCES accounts(id) ON DELETE CASCADE,
                attached_at DOUBLE PRECISION,
                UNIQUE (app_id, email)
            );
            CREATE INDEX provisional_identities_by_account ON provisional_identities(account_id);
            """
        ),
        ("v6-disabled-apps", "ALTER TABLE apps ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT false;"),
        ("v7-key-activation", "ALTER TABLE signing_keys ADD COLUMN activates_at DOUBLE PRECISION;"),
        (
            "v8-verified-email-index",
            """
            CREATE INDEX identity_links_by_verified_email ON identity_links (lower((claims::jsonb) ->> 'email'))
                WHERE (claims::jsonb) ->> 'email_verified' = 'true';
            """
        ),
        (
            "v9-devices",
            """
            CREATE TABLE devices (
                id TEXT PRIMARY KEY,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                vendor_id TEXT,
                platform TEXT NOT NULL,
                model TEXT,
                alias TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                last_used_at DOUBLE PRECISION
            );
            CREATE UNIQUE INDEX devices_by_vendor_id ON devices(account_id, vendor_id) WHERE vendor_id IS NOT NULL;
            CREATE TABLE installations (
                id TEXT PRIMARY KEY,
                device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
                account_id TEXT NOT NULL,
                app_id TEXT NOT NULL,
                installation_id TEXT NOT NULL,
                os_version TEXT,
                app_version TEXT,
                build_type TEXT,
                created_at DOUBLE PRECISION NOT NULL,
                last_used_at DOUBLE PRECISION
            );
            CREATE UNIQUE INDEX installations_by_app ON installations(device_id, app_id, installation_id);
            CREATE INDEX installations_by_account ON installations(account_id, installation_id);
            CREATE TABLE sign_in_keys (
                id TEXT PRIMARY KEY,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
                installation_ref TEXT NOT NULL REFERENCES installations(id) ON DELETE CASCADE,
                provider_id TEXT NOT NULL,
                public_key TEXT NOT NULL,
                thumbprint TEXT NOT NULL UNIQUE,
                algorithm TEXT NOT NULL,
                counter BIGINT,
                attestation TEXT,
                created_at DOUBLE PRECISION NOT NULL,
                last_used_at DOUBLE PRECISION
            );
            CREATE INDEX sign_in_keys_by_device ON sign_in_keys(device_id);
            ALTER TABLE refresh_tokens ADD COLUMN sign_in_key TEXT;
            ALTER TABLE refresh_tokens ADD COLUMN dpop_jkt TEXT;
            CREATE INDEX refresh_tokens_by_sign_in_key ON refresh_tokens(sign_in_key) WHERE sign_in_key IS NOT NULL;
            """
        ),
        (
            "v10-activation-profiles",
            """
            ALTER TABLE installations ADD COLUMN push_token TEXT;
            ALTER TABLE installations ADD COLUMN biometric BOOLEAN;
            CREATE INDEX installations_by_installation_id ON installations(app_id, installation_id);
            ALTER TABLE accounts ADD COLUMN profile TEXT;
            ALTER TABLE accounts ADD COLUMN profile_pending BOOLEAN NOT NULL DEFAULT false;
            ALTER TABLE refresh_tokens ADD COLUMN installation TEXT;
            """
        ),
        (
            "v11-browser-sessions",
            """
            CREATE TABLE browser_sessions (
                id TEXT PRIMARY KEY,
                cookie_digest TEXT NOT NULL UNIQUE,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                providers TEXT NOT NULL,
                factors TEXT NOT NULL,
                amr TEXT NOT NULL,
                subject TEXT NOT NULL,
                username TEXT NOT NULL,
                auth_time DOUBLE PRECISION NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                last_seen_at DOUBLE PRECISION NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                ended_at DOUBLE PRECISION,
                client_ip TEXT,
                user_agent TEXT
            );
            CREATE INDEX browser_sessions_by_account ON browser_sessions(account_id);
            CREATE TABLE browser_session_apps (
                session_id TEXT NOT NULL REFERENCES browser_sessions(id) ON DELETE CASCADE,
                app_id TEXT NOT NULL,
                PRIMARY KEY (session_id, app_id)
            );
            ALTER TABLE authorization_codes ADD COLUMN session_id TEXT;
            ALTER TABLE refresh_tokens ADD COLUMN session_id TEXT;
            CREATE INDEX refresh_tokens_by_session ON refresh_tokens(session_id) WHERE session_id IS NOT NULL
            """
        ),
        // No table changes: it marks databases whose app policies keep plugin settings under
        // `policy.plugins`, so that an older Gatehouse (which would read them as absent: device
        // attestation off, default PIN rules) refuses the database instead.
        ("v12-policy-plugin-settings", "SELECT 1;"),
        // No table changes: it marks databases whose flows keep a hand-off (`handOff`) where the
        // previous version kept a plugin's sub-flow in fields of its own, so that a node of that
        // version, which would continue such a flow without the provider's checks, refuses the
        // database instead.
        ("v13-flow-hand-offs", "SELECT 1;"),
        (
            "v14-device-authorizations",
            """
            CREATE TABLE device_authorizations (
                device_code_digest TEXT PRIMARY KEY,
                user_code_digest TEXT NOT NULL UNIQUE,
                app_id TEXT NOT NULL,
                payload TEXT NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                version BIGINT NOT NULL
            );
            CREATE INDEX device_authorizations_by_expiry ON device_authorizations(expires_at)
            """
        ),
        (
            "v15-event-outbox",
            """
            CREATE TABLE event_outbox (
                id BIGSERIAL PRIMARY KEY,
                app_id TEXT NOT NULL,
                subject TEXT NOT NULL,
                kind TEXT NOT NULL,
                payload TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                next_attempt_at DOUBLE PRECISION NOT NULL,
                attempts BIGINT NOT NULL,
                status TEXT NOT NULL,
                last_error TEXT,
                lease_until DOUBLE PRECISION,
                lease_token TEXT,
                delivered_at DOUBLE PRECISION
            );
            CREATE INDEX event_outbox_due ON event_outbox(status, next_attempt_at);
            CREATE INDEX event_outbox_by_subject ON event_outbox(status, app_id, subject, id)
            """
        ),
        ("v16-account-disabled", "ALTER TABLE accounts ADD COLUMN disabled_at DOUBLE PRECISION, ADD COLUMN disabled_by TEXT;"),
        (
            "v17-scim",
            """
            CREATE TABLE scim_clients (
                id TEXT COLLATE "C" PRIMARY KEY,
                name TEXT NOT NULL,
                token_digest TEXT NOT NULL UNIQUE,
                created_at DOUBLE PRECISION NOT NULL,
                created_by TEXT NOT NULL
            );
            CREATE TABLE scim_resources (
                id TEXT COLLATE "C" PRIMARY KEY,
                client_id TEXT NOT NULL REFERENCES scim_clients(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                name TEXT NOT NULL,
                name_key TEXT NOT NULL,
                external_id TEXT,
                account_id TEXT REFERENCES accounts(id) ON DELETE CASCADE,
                active BOOLEAN NOT NULL,
                attributes TEXT NOT NULL,
                version BIGINT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL
            );
            CREATE UNIQUE INDEX scim_user_names ON scim_resources(client_id, name_key) WHERE kind = 'User';
            CREATE INDEX scim_resources_by_client ON scim_resources(client_id, kind, created_at);
            CREATE INDEX scim_resources_by_name ON scim_resources(name_key) WHERE kind = 'User';
            CREATE INDEX scim_resources_by_external_id ON scim_resources(external_id) WHERE kind = 'User';
            CREATE INDEX scim_resources_by_account ON scim_resources(account_id);
            CREATE TABLE scim_members (
                group_id TEXT NOT NULL REFERENCES scim_resources(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES scim_resources(id) ON DELETE CASCADE,
                position BIGINT NOT NULL,
                PRIMARY KEY (group_id, user_id)
            );
            CREATE INDEX scim_members_by_user ON scim_members(user_id);
            """
        ),
    ]

    /// Any fixed number, the same on every node: the advisory lock migrations run under.
    static let lockKey = 0x6761_7465_686F_7573  // "gatehous"
}

extension PostgresStore {
    /// Applies the migrations this database lacks, in one transaction under a transaction-scoped
    /// advisory lock: nodes that start together wait for the first, then find nothing left to do.
    /// Refuses (before changing anything) a database that has migrations this code does not know: it
    /// was upgraded by a newer Gatehouse. Returns the names applied now.
    @discardableResult
    public func migrate() async throws -> [String] {
        do {
            return try await transaction { connection in
                // Nodes starting together wait here for the first, however long its migration takes.
                try await connection.query("SET LOCAL lock_timeout = 0", logger: self.logger)
                try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresMigrations.lockKey))", logger: self.logger)
                // The DDL itself waits for table locks a few seconds at most: while it waits, every
                // node's queries of that table queue behind it. Too busy: the whole migration is
                // rolled back and tried again (`serve` retries; `migrate` says so).
                try await connection.query("SET LOCAL lock_timeout = '3s'", logger: self.logger)
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS gatehouse_migrations (name TEXT PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)", logger: self.logger
                )
                let applied = try await Self.rows("SELECT name FROM gatehouse_migrations", on: connection, logger: self.logger).map { try $0[0].string() }
                try Self.refuseNewerSchema(applied: applied, known: PostgresMigrations.all.map(\.name), database: self.settings.summary)
                var now: [String] = []
                for migration in PostgresMigrations.all where !applied.contains(migration.name) {
                    // One statement at a time: the extended protocol takes no more (no statement here holds a `;`).
                    for statement in migration.sql.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) where !statement.isEmpty {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                    }
                    try await connection.query(
                        "INSERT INTO gatehouse_migrations (name, applied_at) VALUES (\(migration.name), \(Date().timeIntervalSince1970))", logger: self.logger
                    )
                    now.append(migration.name)
                }
                return now
            }
        } catch let error as StoreOpenError {
            throw error
        } catch let error as BrokerError where error.code == .temporarilyUnavailable {
            guard let cause = lastFailure.withLock({ $0 }) else {
                throw StoreOpenError(
                    "the database at \(settings.summary) is busy (a table lock the migration needs is held elsewhere); trying the migration again", retryable: true)
            }
            throw StoreOpenError("cannot reach the database at \(settings.summary) (storage.postgres.url): \(cause)", retryable: true)
        } catch {
            throw StoreOpenError("cannot use the database at \(settings.summary) (storage.postgres.url): \(Self.explain(error))")
        }
    }

    /// Names of the migrations applied so far, oldest first.
    public func appliedMigrations() async throws -> [String] {
        try await rows("SELECT name FROM gatehouse_migrations ORDER BY applied_at, name").map { try $0[0].string() }
    }

    static func refuseNewerSchema(applied: [String], known: [String], database: String) throws {
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else {
            throw StoreOpenError(
                "the database at \(database) has a newer schema than this Gatehouse (migrations it does not know: \(unknown.sorted().joined(separator: ", "))). "
                    + "Run the Gatehouse version that upgraded it, or a newer one; do not downgrade a migrated database.",
                newerSchema: true
            )
        }
    }

    /// A connection failure in words an operator can act on (postgres-nio's errors say little by
    /// themselves).
    public static func explain(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return "\(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))" }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        if let error = error as? BrokerError, error.code == .temporarilyUnavailable {
            return "no answer"
        }
        return String(describing: error)
    }
}
