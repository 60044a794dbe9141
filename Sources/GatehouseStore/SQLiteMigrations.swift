import GRDB

/// The schema, as an ordered list of migrations. A migration, once released, is never edited: changes
/// come as new migrations appended here.
enum SQLiteMigrations {
    /// Every migration's name, in order.
    static var names: [String] { migrator.migrations }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-foundation") { db in
            try db.execute(
                sql: """
                    CREATE TABLE apps (
                        id TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        secret_digest TEXT,
                        redirect_uris TEXT NOT NULL,
                        policy TEXT NOT NULL,
                        managed_by TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL
                    );
                    CREATE TABLE accounts (
                        id TEXT PRIMARY KEY NOT NULL,
                        username TEXT NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE INDEX accounts_by_username ON accounts(username);
                    CREATE TABLE identity_links (
                        provider_id TEXT NOT NULL,
                        subject TEXT NOT NULL,
                        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                        claims TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        last_sign_in_at REAL NOT NULL,
                        PRIMARY KEY (provider_id, subject)
                    );
                    CREATE INDEX identity_links_by_account ON identity_links(account_id);
                    CREATE TABLE flows (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL,
                        payload TEXT NOT NULL,
                        expires_at REAL NOT NULL,
                        version INTEGER NOT NULL
                    );
                    CREATE INDEX flows_by_expiry ON flows(expires_at);
                    CREATE TABLE refresh_tokens (
                        digest TEXT PRIMARY KEY NOT NULL,
                        family_id TEXT NOT NULL,
                        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                        app_id TEXT NOT NULL,
                        scopes TEXT NOT NULL,
                        issued_at REAL NOT NULL,
                        expires_at REAL NOT NULL,
                        used_at REAL,
                        revoked_at REAL
                    );
                    CREATE INDEX refresh_tokens_by_account ON refresh_tokens(account_id);
                    CREATE INDEX refresh_tokens_by_family ON refresh_tokens(family_id);
                    CREATE TABLE signing_keys (
                        kid TEXT PRIMARY KEY NOT NULL,
                        algorithm TEXT NOT NULL,
                        private_key_pem TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        retired_at REAL
                    );
                    CREATE TABLE audit_events (
                        id TEXT PRIMARY KEY NOT NULL,
                        time REAL NOT NULL,
                        type TEXT NOT NULL,
                        app_id TEXT,
                        account_id TEXT,
                        provider_id TEXT,
                        outcome TEXT,
                        details TEXT NOT NULL
                    );
                    CREATE INDEX audit_events_by_time ON audit_events(time);
                    CREATE TABLE plugin_data (
                        namespace TEXT NOT NULL,
                        key TEXT NOT NULL,
                        value BLOB NOT NULL,
                        version INTEGER NOT NULL,
                        expires_at REAL,
                        PRIMARY KEY (namespace, key)
                    );
                    """
            )
        }
        migrator.registerMigration("v2-openid-provider") { db in
            try db.execute(
                sql: """
                    ALTER TABLE refresh_tokens ADD COLUMN auth_time REAL NOT NULL DEFAULT 0;
                    ALTER TABLE refresh_tokens ADD COLUMN amr TEXT NOT NULL DEFAULT '[]';
                    ALTER TABLE refresh_tokens ADD COLUMN idp TEXT;
                    UPDATE refresh_tokens SET auth_time = issued_at;
                    CREATE TABLE authorization_codes (
                        digest TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL,
                        redirect_uri TEXT NOT NULL,
                        code_challenge TEXT NOT NULL,
                        nonce TEXT,
                        scopes TEXT NOT NULL,
                        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                        auth_time REAL NOT NULL,
                        amr TEXT NOT NULL,
                        idp TEXT,
                        expires_at REAL NOT NULL,
                        used_at REAL,
                        issued_family_id TEXT,
                        issued_access_token_id TEXT,
                        issued_access_token_expires_at REAL
                    );
                    CREATE TABLE revocations (
                        kind TEXT NOT NULL,
                        value TEXT NOT NULL,
                        revoked_at REAL NOT NULL,
                        expires_at REAL NOT NULL,
                        PRIMARY KEY (kind, value)
                    );
                    CREATE INDEX revocations_by_expiry ON revocations(expires_at);
                    """
            )
        }
        migrator.registerMigration("v3-lockouts-admin") { db in
            try db.execute(
                sql: """
                    CREATE TABLE attempt_counters (
                        key TEXT PRIMARY KEY NOT NULL,
                        failures INTEGER NOT NULL,
                        window_start REAL NOT NULL,
                        locked_until REAL,
                        lockouts INTEGER NOT NULL,
                        updated_at REAL NOT NULL
                    );
                    CREATE INDEX attempt_counters_by_update ON attempt_counters(updated_at);
                    ALTER TABLE apps ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
                    CREATE INDEX audit_events_by_type ON audit_events(type, time);
                    CREATE INDEX audit_events_by_app ON audit_events(app_id, time);
                    CREATE INDEX audit_events_by_account ON audit_events(account_id, time);
                    """
            )
        }
        migrator.registerMigration("v4-test-accounts") { db in
            try db.execute(sql: "ALTER TABLE accounts ADD COLUMN is_test INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v5-provisional-identities") { db in
            // An attached identity goes with its account (deregistration deletes everything); it is
            // never detached, so it can never be attached to another account.
            try db.execute(
                sql: """
                    CREATE TABLE provisional_identities (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL,
                        email TEXT NOT NULL,
                        grants TEXT NOT NULL,
                        groups TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        created_by TEXT NOT NULL,
                        account_id TEXT REFERENCES accounts(id) ON DELETE CASCADE,
                        attached_at REAL,
                        UNIQUE (app_id, email)
                    );
                    CREATE INDEX provisional_identities_by_account ON provisional_identities(account_id);
                    """
            )
        }
        migrator.registerMigration("v6-disabled-apps") { db in
            try db.execute(sql: "ALTER TABLE apps ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v7-key-activation") { db in
            try db.execute(sql: "ALTER TABLE signing_keys ADD COLUMN activates_at REAL")
        }
        // Linking a first sign-in to an existing account by a verified address looks the address up.
        migrator.registerMigration("v8-verified-email-index") { db in
            try db.execute(
                sql: """
                    CREATE INDEX identity_links_by_verified_email ON identity_links(lower(json_extract(claims, '$.email')))
                        WHERE json_extract(claims, '$.email_verified') = 1
                    """
            )
        }
        // Devices, their installations and sign-in keys; refresh tokens remember the key and the
        // DPoP key they were issued through.
        migrator.registerMigration("v9-devices") { db in
            try db.execute(
                sql: """
                    CREATE TABLE devices (
                        id TEXT PRIMARY KEY NOT NULL,
                        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                        vendor_id TEXT,
                        platform TEXT NOT NULL,
                        model TEXT,
                        alias TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        last_used_at REAL
                    );
                    CREATE UNIQUE INDEX devices_by_vendor_id ON devices(account_id, vendor_id) WHERE vendor_id IS NOT NULL;
                    CREATE TABLE installations (
                        id TEXT PRIMARY KEY NOT NULL,
                        device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
                        account_id TEXT NOT NULL,
                        app_id TEXT NOT NULL,
                        installation_id TEXT NOT NULL,
                        os_version TEXT,
                        app_version TEXT,
                        build_type TEXT,
                        created_at REAL NOT NULL,
                        last_used_at REAL
                    );
                    CREATE UNIQUE INDEX installations_by_app ON installations(device_id, app_id, installation_id);
                    CREATE INDEX installations_by_account ON installations(account_id, installation_id);
                    CREATE TABLE sign_in_keys (
                        id TEXT PRIMARY KEY NOT NULL,
                        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                        device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
                        installation_ref TEXT NOT NULL REFERENCES installations(id) ON DELETE CASCADE,
                        provider_id TEXT NOT NULL,
                        public_key TEXT NOT NULL,
                        thumbprint TEXT NOT NULL UNIQUE,
                        algorithm TEXT NOT NULL,
                        counter INTEGER,
                        attestation TEXT,
                        created_at REAL NOT NULL,
                        last_used_at REAL
                    );
                    CREATE INDEX sign_in_keys_by_device ON sign_in_keys(device_id);
                    ALTER TABLE refresh_tokens ADD COLUMN sign_in_key TEXT;
                    ALTER TABLE refresh_tokens ADD COLUMN dpop_jkt TEXT;
                    CREATE INDEX refresh_tokens_by_sign_in_key ON refresh_tokens(sign_in_key) WHERE sign_in_key IS NOT NULL;
                    """
            )
        }
        migrator.registerMigration("v10-activation-profiles") { db in
            try db.execute(
                sql: """
                    ALTER TABLE installations ADD COLUMN push_token TEXT;
                    ALTER TABLE installations ADD COLUMN biometric INTEGER;
                    CREATE INDEX installations_by_installation_id ON installations(app_id, installation_id);
                    ALTER TABLE accounts ADD COLUMN profile TEXT;
                    ALTER TABLE accounts ADD COLUMN profile_pending INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE refresh_tokens ADD COLUMN installation TEXT;
                    """
            )
        }
        migrator.registerMigration("v11-browser-sessions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE browser_sessions (
                        id TEXT PRIMARY KEY,
                        cookie_digest TEXT NOT NULL UNIQUE,
                        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                        providers TEXT NOT NULL,
                        factors TEXT NOT NULL,
                        amr TEXT NOT NULL,
                        subject TEXT NOT NULL,
                        username TEXT NOT NULL,
                        auth_time REAL NOT NULL,
                        created_at REAL NOT NULL,
                        last_seen_at REAL NOT NULL,
                        expires_at REAL NOT NULL,
                        ended_at REAL,
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
                    CREATE INDEX refresh_tokens_by_session ON refresh_tokens(session_id) WHERE session_id IS NOT NULL;
                    """
            )
        }
        // No table changes: it marks databases whose app policies keep plugin settings under
        // `policy.plugins`, so that an older Gatehouse (which would read them as absent: device
        // attestation off, default PIN rules) refuses the database instead.
        migrator.registerMigration("v12-policy-plugin-settings") { db in
            try db.execute(sql: "SELECT 1")
        }
        // No table changes: it marks databases whose flows keep a hand-off (`handOff`) where the
        // previous version kept a plugin's sub-flow in fields of its own, so that a node of that
        // version, which would continue such a flow without the provider's checks, refuses the
        // database instead.
        migrator.registerMigration("v13-flow-hand-offs") { db in
            try db.execute(sql: "SELECT 1")
        }
        migrator.registerMigration("v14-device-authorizations") { db in
            try db.execute(
                sql: """
                    CREATE TABLE device_authorizations (
                        device_code_digest TEXT PRIMARY KEY,
                        user_code_digest TEXT NOT NULL UNIQUE,
                        app_id TEXT NOT NULL,
                        payload TEXT NOT NULL,
                        expires_at REAL NOT NULL,
                        version INTEGER NOT NULL
                    );
                    CREATE INDEX device_authorizations_by_expiry ON device_authorizations(expires_at);
                    """
            )
        }
        migrator.registerMigration("v15-event-outbox") { db in
            try db.execute(
                sql: """
                    CREATE TABLE event_outbox (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        app_id TEXT NOT NULL,
                        subject TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        payload TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        next_attempt_at REAL NOT NULL,
                        attempts INTEGER NOT NULL,
                        status TEXT NOT NULL,
                        last_error TEXT,
                        lease_until REAL,
                        lease_token TEXT,
                        delivered_at REAL
                    );
                    CREATE INDEX event_outbox_due ON event_outbox(status, next_attempt_at);
                    CREATE INDEX event_outbox_by_subject ON event_outbox(status, app_id, subject, id);
                    """
            )
        }
        migrator.registerMigration("v16-account-disabled") { db in
            try db.execute(sql: "ALTER TABLE accounts ADD COLUMN disabled_at REAL; ALTER TABLE accounts ADD COLUMN disabled_by TEXT;")
        }
        migrator.registerMigration("v17-scim") { db in
            try db.execute(
                sql: """
                    CREATE TABLE scim_clients (
                        id TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        token_digest TEXT NOT NULL UNIQUE,
                        created_at REAL NOT NULL,
                        created_by TEXT NOT NULL
                    );
                    CREATE TABLE scim_resources (
                        id TEXT PRIMARY KEY NOT NULL,
                        client_id TEXT NOT NULL REFERENCES scim_clients(id) ON DELETE CASCADE,
                        kind TEXT NOT NULL,
                        name TEXT NOT NULL,
                        name_key TEXT NOT NULL,
                        external_id TEXT,
                        account_id TEXT REFERENCES accounts(id) ON DELETE CASCADE,
                        active INTEGER NOT NULL,
                        attributes TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL
                    );
                    CREATE UNIQUE INDEX scim_user_names ON scim_resources(client_id, name_key) WHERE kind = 'User';
                    CREATE INDEX scim_resources_by_client ON scim_resources(client_id, kind, created_at);
                    CREATE INDEX scim_resources_by_name ON scim_resources(name_key) WHERE kind = 'User';
                    CREATE INDEX scim_resources_by_external_id ON scim_resources(external_id) WHERE kind = 'User';
                    CREATE INDEX scim_resources_by_account ON scim_resources(account_id);
                    CREATE TABLE scim_members (
                        group_id TEXT NOT NULL REFERENCES scim_resources(id) ON DELETE CASCADE,
                        user_id TEXT NOT NULL REFERENCES scim_resources(id) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        PRIMARY KEY (group_id, user_id)
                    );
                    CREATE INDEX scim_members_by_user ON scim_members(user_id);
                    """
            )
        }
        return migrator
    }
}
