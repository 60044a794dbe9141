import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: AccountStore {
    public func updateAccountProfile(id: String, profile: AccountProfile?, pending: Bool) async throws -> Bool {
        let encoded = try profile.map { try StoreJSON.encode($0) }
        return try await write { db in
            try db.executeCached(sql: "UPDATE accounts SET profile = ?, profile_pending = ? WHERE id = ?", arguments: [encoded, pending, id])
            return db.changesCount == 1
        }
    }

    public func setAccountDisabled(id: String, at: Date?, by: String?) async throws -> Bool {
        try await write { db in
            if let at {
                // A disabled account keeps when it was first disabled, and by whom, except that an
                // administrator's disable always becomes the administrator's (no SCIM re-activation lifts it).
                try db.executeCached(
                    sql: """
                        UPDATE accounts SET disabled_by = CASE WHEN disabled_at IS NULL OR ? = 'admin' THEN ? ELSE disabled_by END,
                            disabled_at = coalesce(disabled_at, ?) WHERE id = ?
                        """,
                    arguments: [by, by, at.storeValue, id])
            } else {
                try db.executeCached(sql: "UPDATE accounts SET disabled_at = NULL, disabled_by = NULL WHERE id = ?", arguments: [id])
            }
            return db.changesCount == 1
        }
    }

    public func account(id: String) async throws -> Account? {
        try readOneStatement { db in try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM accounts WHERE id = ?"), arguments: [id]).map(Self.account) }
    }

    public func accounts(limit: Int, offset: Int) async throws -> [Account] {
        try await readLater { db in
            try Row.fetchAll(try db.cachedStatement(sql: "SELECT * FROM accounts ORDER BY created_at, id LIMIT ? OFFSET ?"), arguments: [limit, offset]).map(Self.account)
        }
    }

    public func accounts(matching search: String, limit: Int, offset: Int) async throws -> [Account] {
        try await readLater { db in
            try Row.fetchAll(
                try db.cachedStatement(sql: "SELECT * FROM accounts WHERE instr(lower(username), lower(?)) > 0 OR id = ? ORDER BY created_at, id LIMIT ? OFFSET ?"),
                arguments: [search, search, limit, offset]
            ).map(Self.account)
        }
    }

    public func identityLink(providerID: String, subject: String) async throws -> IdentityLink? {
        try readOneStatement { db in
            try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM identity_links WHERE provider_id = ? AND subject = ?"), arguments: [providerID, subject]).map(
                Self.link)
        }
    }

    public func identityLinks(accountID: String) async throws -> [IdentityLink] {
        try readOneStatement { db in
            try Row.fetchAll(try db.cachedStatement(sql: "SELECT * FROM identity_links WHERE account_id = ? ORDER BY created_at"), arguments: [accountID]).map(Self.link)
        }
    }

    public func accountIDs(withVerifiedEmail email: String) async throws -> [String] {
        try await readLater { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT account_id FROM identity_links
                    WHERE lower(json_extract(claims, '$.email')) = lower(?) AND json_extract(claims, '$.email_verified') = 1 ORDER BY account_id
                    """,
                arguments: [email]
            )
        }
    }

    public func linkIdentity(_ identity: ExternalIdentity, now: Date) async throws -> (account: Account, created: Bool) {
        // One write transaction: SQLite serialises writers, so two racing first sign-ins of the same
        // identity cannot both create an account.
        try await write { db in
            let claims = try StoreJSON.encode(identity.claims)
            if let accountID = try String.fetchOne(
                db, sql: "SELECT account_id FROM identity_links WHERE provider_id = ? AND subject = ?", arguments: [identity.providerID, identity.subject]
            ), let account = try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM accounts WHERE id = ?"), arguments: [accountID]).map(Self.account) {
                try db.executeCached(
                    sql: "UPDATE identity_links SET claims = ?, last_sign_in_at = ? WHERE provider_id = ? AND subject = ?",
                    arguments: [claims, now.storeValue, identity.providerID, identity.subject]
                )
                return (account, false)
            }
            let account = Account(
                id: UUID().uuidString.lowercased(), username: identity.username, createdAt: now, isTest: identity.isTest
            )
            try db.cachedStatement(sql: "INSERT INTO accounts (id, username, created_at, is_test) VALUES (?, ?, ?, ?)")
                .execute(arguments: [account.id, account.username, now.storeValue, account.isTest])
            try db.executeCached(
                sql: "INSERT INTO identity_links (provider_id, subject, account_id, claims, created_at, last_sign_in_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [identity.providerID, identity.subject, account.id, claims, now.storeValue, now.storeValue]
            )
            return (account, true)
        }
    }

    public func linkedAccount(providerID: String, subject: String) async throws -> Account? {
        try readOneStatement { db in
            try Row.fetchOne(
                try db.cachedStatement(
                    sql: "SELECT accounts.* FROM identity_links JOIN accounts ON accounts.id = identity_links.account_id WHERE provider_id = ? AND subject = ?"
                ),
                arguments: [providerID, subject]
            ).map(Self.account)
        }
    }

    public func refreshIdentityLink(_ identity: ExternalIdentity, now: Date) async throws {
        let claims = try StoreJSON.encode(identity.claims)
        try await write { db in
            try db.executeCached(
                sql: "UPDATE identity_links SET claims = ?, last_sign_in_at = ? WHERE provider_id = ? AND subject = ?",
                arguments: [claims, now.storeValue, identity.providerID, identity.subject]
            )
        }
    }

    public func updateIdentityLinkClaims(providerID: String, subject: String, claims: IdentityClaims) async throws {
        let encoded = try StoreJSON.encode(claims)
        try await write { db in
            try db.executeCached(sql: "UPDATE identity_links SET claims = ? WHERE provider_id = ? AND subject = ?", arguments: [encoded, providerID, subject])
        }
    }

    public func addIdentityLink(_ identity: ExternalIdentity, accountID: String, now: Date) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO identity_links (provider_id, subject, account_id, claims, created_at, last_sign_in_at) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (provider_id, subject) DO NOTHING
                    """,
                arguments: [identity.providerID, identity.subject, accountID, try StoreJSON.encode(identity.claims), now.storeValue, now.storeValue]
            )
            let owner = try String.fetchOne(
                db, sql: "SELECT account_id FROM identity_links WHERE provider_id = ? AND subject = ?", arguments: [identity.providerID, identity.subject]
            )
            return owner == accountID
        }
    }

    public func unlinkIdentity(providerID: String, subject: String) async throws -> Bool {
        try await write { db in
            guard
                let accountID = try String.fetchOne(
                    db, sql: "SELECT account_id FROM identity_links WHERE provider_id = ? AND subject = ?", arguments: [providerID, subject]
                )
            else { return false }
            try db.cachedStatement(sql: "DELETE FROM identity_links WHERE provider_id = ? AND subject = ?").execute(arguments: [providerID, subject])
            let remaining = try Int.fetchOne(try db.cachedStatement(sql: "SELECT COUNT(*) FROM identity_links WHERE account_id = ?"), arguments: [accountID]) ?? 0
            if remaining == 0 {
                // Refresh tokens go with the account (ON DELETE CASCADE).
                try db.cachedStatement(sql: "DELETE FROM accounts WHERE id = ?").execute(arguments: [accountID])
            }
            return true
        }
    }

    public func deleteAccount(id: String) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM accounts WHERE id = ?").execute(arguments: [id])
            guard db.changesCount > 0 else { return false }
            // Its second factors' attempt counters (`factor:<authenticator>:<account>`) go with it:
            // matched by their exact ending, so no id can name another account's counters.
            try db.cachedStatement(sql: "DELETE FROM attempt_counters WHERE substr(key, 1, 7) = 'factor:' AND substr(key, -(length(?) + 1)) = ':' || ?")
                .execute(arguments: [id, id])
            return true
        }
    }

    static func account(_ row: Row) throws -> Account {
        var account = Account(
            id: row["id"], username: row["username"], createdAt: Date(storeValue: row["created_at"]), isTest: row["is_test"],
            profile: try (row["profile"] as String?).map { try StoreJSON.decode(AccountProfile.self, $0) }, profilePending: row["profile_pending"]
        )
        account.disabledAt = (row["disabled_at"] as Double?).map(Date.init(storeValue:))
        account.disabledBy = row["disabled_by"]
        return account
    }

    static func link(_ row: Row) throws -> IdentityLink {
        IdentityLink(
            providerID: row["provider_id"], subject: row["subject"], accountID: row["account_id"],
            claims: try StoreJSON.decode(IdentityClaims.self, row["claims"]),
            createdAt: Date(storeValue: row["created_at"]), lastSignInAt: Date(storeValue: row["last_sign_in_at"])
        )
    }
}
