import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: ProvisionalIdentityStore {
    public func createProvisionalIdentity(_ identity: ProvisionalIdentity) async throws -> (identity: ProvisionalIdentity, created: Bool) {
        try await write { db in
            if let existing = try Row.fetchOne(
                try db.cachedStatement(sql: "SELECT * FROM provisional_identities WHERE app_id = ? AND email = ?"), arguments: [identity.appID, identity.email.value]
            ) {
                return (try Self.provisionalIdentity(existing), false)
            }
            try db.executeCached(
                sql: """
                    INSERT INTO provisional_identities (id, app_id, email, grants, groups, created_at, created_by, account_id, attached_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)
                    """,
                arguments: [
                    identity.id, identity.appID, identity.email.value, try StoreJSON.encode(identity.grants), try StoreJSON.encode(identity.groups),
                    identity.createdAt.storeValue, identity.createdBy,
                ]
            )
            return (identity, true)
        }
    }

    public func provisionalIdentity(id: String) async throws -> ProvisionalIdentity? {
        try readOneStatement { db in
            try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM provisional_identities WHERE id = ?"), arguments: [id]).map(Self.provisionalIdentity)
        }
    }

    public func addProvisionalGrants(id: String, grants: [String], groups: [String]) async throws -> ProvisionalIdentity? {
        try await write { db in
            guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM provisional_identities WHERE id = ?"), arguments: [id]) else { return nil }
            var identity = try Self.provisionalIdentity(row)
            identity.grants = (identity.grants + grants).uniqued()
            identity.groups = (identity.groups + groups).uniqued()
            try db.executeCached(
                sql: "UPDATE provisional_identities SET grants = ?, groups = ? WHERE id = ?",
                arguments: [try StoreJSON.encode(identity.grants), try StoreJSON.encode(identity.groups), id]
            )
            return identity
        }
    }

    public func attachProvisionalIdentity(id: String, accountID: String, now: Date) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: "UPDATE provisional_identities SET account_id = ?, attached_at = ? WHERE id = ? AND account_id IS NULL AND attached_at IS NULL")
                .execute(arguments: [accountID, now.storeValue, id])
            return db.changesCount == 1
        }
    }

    public func provisionalIdentities(accountID: String) async throws -> [ProvisionalIdentity] {
        try await readLater { db in
            try Row.fetchAll(try db.cachedStatement(sql: "SELECT * FROM provisional_identities WHERE account_id = ? ORDER BY attached_at, id"), arguments: [accountID])
                .map(Self.provisionalIdentity)
        }
    }

    static func provisionalIdentity(_ row: Row) throws -> ProvisionalIdentity {
        guard let email = EmailAddress(row["email"]) else { throw DatabaseError(message: "provisional_identities.email holds no address") }
        return ProvisionalIdentity(
            id: row["id"], appID: row["app_id"], email: email, grants: try StoreJSON.decode([String].self, row["grants"]),
            groups: try StoreJSON.decode([String].self, row["groups"]), createdAt: Date(storeValue: row["created_at"]), createdBy: row["created_by"],
            accountID: row["account_id"], attachedAt: (row["attached_at"] as Double?).map(Date.init(storeValue:))
        )
    }
}
