import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: AccountStore {
    public func account(id: String) async throws -> Account? {
        try await rows(PreparedStatements.AccountByID.self) { $0.append(id) }.first.map(Self.account)
    }

    public func updateAccountProfile(id: String, profile: AccountProfile?, pending: Bool) async throws -> Bool {
        let encoded = try profile.map { try StoreJSON.encode($0) }
        return try await run("UPDATE accounts SET profile = \(encoded), profile_pending = \(pending) WHERE id = \(id) RETURNING 1") == 1
    }

    public func setAccountDisabled(id: String, at: Date?, by: String?) async throws -> Bool {
        guard let at else { return try await run("UPDATE accounts SET disabled_at = NULL, disabled_by = NULL WHERE id = \(id) RETURNING 1") == 1 }
        // A disabled account keeps when it was first disabled, and by whom, except that an
        // administrator's disable always becomes the administrator's (no SCIM re-activation lifts it).
        let admin = by == "admin"
        return try await run(
            """
            UPDATE accounts SET disabled_by = CASE WHEN disabled_at IS NULL OR \(admin) THEN \(by) ELSE disabled_by END,
                disabled_at = coalesce(disabled_at, \(at.storeValue))
            WHERE id = \(id) RETURNING 1
            """
        ) == 1
    }

    public func accounts(limit: Int, offset: Int) async throws -> [Account] {
        try await rows("SELECT * FROM accounts ORDER BY created_at, id LIMIT \(limit) OFFSET \(offset)").map(Self.account)
    }

    public func accounts(matching search: String, limit: Int, offset: Int) async throws -> [Account] {
        try await rows(
            "SELECT * FROM accounts WHERE strpos(lower(username), lower(\(search))) > 0 OR id = \(search) ORDER BY created_at, id LIMIT \(limit) OFFSET \(offset)"
        ).map(Self.account)
    }

    public func identityLink(providerID: String, subject: String) async throws -> IdentityLink? {
        try await rows("SELECT * FROM identity_links WHERE provider_id = \(providerID) AND subject = \(subject)").first.map(Self.link)
    }

    public func identityLinks(accountID: String) async throws -> [IdentityLink] {
        try await rows(PreparedStatements.IdentityLinksOfAccount.self) { $0.append(accountID) }.map(Self.link)
    }

    public func accountIDs(withVerifiedEmail email: String) async throws -> [String] {
        try await rows(
            """
            SELECT DISTINCT account_id FROM identity_links
            WHERE lower((claims::jsonb) ->> 'email') = lower(\(email)) AND (claims::jsonb) ->> 'email_verified' = 'true' ORDER BY account_id
            """
        ).map { try $0["account_id"].decode(String.self) }
    }

    /// A returning person costs one statement (the link's refresh, which answers the account). A new
    /// one inserts account and link in one transaction; the link's `ON CONFLICT DO NOTHING` waits
    /// for a concurrent first sign-in of the same identity on another node, and when that one won,
    /// this transaction drops its own account and answers the winner's.
    public func linkIdentity(_ identity: ExternalIdentity, now: Date) async throws -> (account: Account, created: Bool) {
        let claims = try StoreJSON.encode(identity.claims)
        if let account = try await rows(Self.refreshLink(identity, claims: claims, now: now)).first.map(Self.account) {
            return (account, false)
        }
        return try await transaction { connection in
            let account = Account(id: UUID().uuidString.lowercased(), username: identity.username, createdAt: now, isTest: identity.isTest)
            try await connection.query(
                "INSERT INTO accounts (id, username, created_at, is_test) VALUES (\(account.id), \(account.username), \(now.storeValue), \(account.isTest))",
                logger: self.logger
            )
            let linked = try await Self.rows(
                """
                INSERT INTO identity_links (provider_id, subject, account_id, claims, created_at, last_sign_in_at)
                VALUES (\(identity.providerID), \(identity.subject), \(account.id), \(claims), \(now.storeValue), \(now.storeValue))
                ON CONFLICT (provider_id, subject) DO NOTHING RETURNING 1
                """, on: connection, logger: self.logger
            )
            if !linked.isEmpty { return (account, true) }
            try await connection.query("DELETE FROM accounts WHERE id = \(account.id)", logger: self.logger)
            guard let existing = try await Self.rows(Self.refreshLink(identity, claims: claims, now: now), on: connection, logger: self.logger).first.map(Self.account)
            else { throw BrokerError(.conflict, .conflict, "The identity was linked and removed at the same time; try again.") }
            return (existing, false)
        }
    }

    /// Refreshes a link's claims and last sign-in, answering its account's row.
    static func refreshLink(_ identity: ExternalIdentity, claims: String, now: Date) -> PostgresQuery {
        """
        WITH link AS (
            UPDATE identity_links SET claims = \(claims), last_sign_in_at = \(now.storeValue)
            WHERE provider_id = \(identity.providerID) AND subject = \(identity.subject) RETURNING account_id
        )
        SELECT accounts.* FROM accounts JOIN link ON accounts.id = link.account_id
        """
    }

    public func linkedAccount(providerID: String, subject: String) async throws -> Account? {
        try await rows(PreparedStatements.AccountOfIdentity.self) {
            $0.append(providerID); $0.append(subject)
        }.first.map(Self.account)
    }

    public func refreshIdentityLink(_ identity: ExternalIdentity, now: Date) async throws {
        let claims = try StoreJSON.encode(identity.claims)
        try await run(
            "UPDATE identity_links SET claims = \(claims), last_sign_in_at = \(now.storeValue) WHERE provider_id = \(identity.providerID) AND subject = \(identity.subject)"
        )
    }

    public func updateIdentityLinkClaims(providerID: String, subject: String, claims: IdentityClaims) async throws {
        let encoded = try StoreJSON.encode(claims)
        try await run("UPDATE identity_links SET claims = \(encoded) WHERE provider_id = \(providerID) AND subject = \(subject)")
    }

    public func addIdentityLink(_ identity: ExternalIdentity, accountID: String, now: Date) async throws -> Bool {
        let claims = try StoreJSON.encode(identity.claims)
        return try await transaction { connection in
            try await connection.query(
                """
                INSERT INTO identity_links (provider_id, subject, account_id, claims, created_at, last_sign_in_at)
                VALUES (\(identity.providerID), \(identity.subject), \(accountID), \(claims), \(now.storeValue), \(now.storeValue))
                ON CONFLICT (provider_id, subject) DO NOTHING
                """, logger: self.logger
            )
            let owner = try await Self.rows(
                "SELECT account_id FROM identity_links WHERE provider_id = \(identity.providerID) AND subject = \(identity.subject)", on: connection, logger: self.logger
            ).first.map { try $0[0].string() }
            return owner == accountID
        }
    }

    /// The account row is locked first, so two links of one account removed at once on two nodes
    /// cannot both see the other remaining and leave an account with no link.
    public func unlinkIdentity(providerID: String, subject: String) async throws -> Bool {
        try await transaction { connection in
            guard
                let accountID = try await Self.rows(
                    "SELECT account_id FROM identity_links WHERE provider_id = \(providerID) AND subject = \(subject)", on: connection, logger: self.logger
                ).first.map({ try $0[0].string() })
            else { return false }
            try await connection.query("SELECT id FROM accounts WHERE id = \(accountID) FOR UPDATE", logger: self.logger)
            guard
                try await !Self.rows(
                    "DELETE FROM identity_links WHERE provider_id = \(providerID) AND subject = \(subject) RETURNING 1", on: connection, logger: self.logger
                ).isEmpty
            else { return false }
            let remaining =
                try await Self.rows("SELECT COUNT(*) FROM identity_links WHERE account_id = \(accountID)", on: connection, logger: self.logger)
                .first.map { try $0[0].int() } ?? 0
            if remaining == 0 {
                // Refresh tokens, codes and attached identities go with the account (ON DELETE CASCADE).
                try await connection.query("DELETE FROM accounts WHERE id = \(accountID)", logger: self.logger)
            }
            return true
        }
    }

    public func deleteAccount(id: String) async throws -> Bool {
        try await transaction { connection in
            guard try await !Self.rows("DELETE FROM accounts WHERE id = \(id) RETURNING 1", on: connection, logger: self.logger).isEmpty else { return false }
            // Its second factors' attempt counters (`factor:<authenticator>:<account>`) go with it:
            // matched by their exact ending, so no id can name another account's counters.
            let suffix = ":" + id
            try await connection.query("DELETE FROM attempt_counters WHERE left(key, 7) = 'factor:' AND right(key, length(\(suffix))) = \(suffix)", logger: self.logger)
            return true
        }
    }

    static func account(_ row: PostgresRandomAccessRow) throws -> Account {
        var account = Account(
            id: try row["id"].string(), username: try row["username"].string(), createdAt: try row["created_at"].date(), isTest: try row["is_test"].decode(Bool.self),
            profile: try row["profile"].optionalString().map { try StoreJSON.decode(AccountProfile.self, $0) },
            profilePending: try row["profile_pending"].decode(Bool.self)
        )
        account.disabledAt = try row["disabled_at"].optionalDate()
        account.disabledBy = try row["disabled_by"].optionalString()
        return account
    }

    static func link(_ row: PostgresRandomAccessRow) throws -> IdentityLink {
        IdentityLink(
            providerID: try row["provider_id"].string(), subject: try row["subject"].string(), accountID: try row["account_id"].string(),
            claims: try row["claims"].json(IdentityClaims.self), createdAt: try row["created_at"].date(), lastSignInAt: try row["last_sign_in_at"].date()
        )
    }
}
