import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: ProvisionalIdentityStore {
    public func createProvisionalIdentity(_ identity: ProvisionalIdentity) async throws -> (identity: ProvisionalIdentity, created: Bool) {
        let grants = try StoreJSON.encode(identity.grants)
        let groups = try StoreJSON.encode(identity.groups)
        return try await transaction { connection in
            let inserted = try await Self.rows(
                """
                INSERT INTO provisional_identities (id, app_id, email, grants, groups, created_at, created_by, account_id, attached_at)
                VALUES (\(identity.id), \(identity.appID), \(identity.email.value), \(grants), \(groups), \(identity.createdAt.storeValue), \(identity.createdBy), NULL, NULL)
                ON CONFLICT (app_id, email) DO NOTHING RETURNING 1
                """, on: connection, logger: self.logger
            )
            if !inserted.isEmpty { return (identity, true) }
            guard
                let existing = try await Self.rows(
                    "SELECT * FROM provisional_identities WHERE app_id = \(identity.appID) AND email = \(identity.email.value)", on: connection, logger: self.logger
                ).first
            else { throw BrokerError(.conflict, .conflict, "The identity was created and removed at the same time; try again.") }
            return (try Self.provisionalIdentity(existing), false)
        }
    }

    public func provisionalIdentity(id: String) async throws -> ProvisionalIdentity? {
        try await rows("SELECT * FROM provisional_identities WHERE id = \(id)").first.map(Self.provisionalIdentity)
    }

    public func addProvisionalGrants(id: String, grants: [String], groups: [String]) async throws -> ProvisionalIdentity? {
        try await transaction { connection in
            guard let row = try await Self.rows("SELECT * FROM provisional_identities WHERE id = \(id) FOR UPDATE", on: connection, logger: self.logger).first
            else { return nil }
            var identity = try Self.provisionalIdentity(row)
            identity.grants = (identity.grants + grants).uniqued()
            identity.groups = (identity.groups + groups).uniqued()
            try await connection.query(
                "UPDATE provisional_identities SET grants = \(try StoreJSON.encode(identity.grants)), groups = \(try StoreJSON.encode(identity.groups)) WHERE id = \(id)",
                logger: self.logger
            )
            return identity
        }
    }

    public func attachProvisionalIdentity(id: String, accountID: String, now: Date) async throws -> Bool {
        try await run(
            """
            UPDATE provisional_identities SET account_id = \(accountID), attached_at = \(now.storeValue)
            WHERE id = \(id) AND account_id IS NULL AND attached_at IS NULL RETURNING 1
            """
        ) == 1
    }

    public func provisionalIdentities(accountID: String) async throws -> [ProvisionalIdentity] {
        try await rows("SELECT * FROM provisional_identities WHERE account_id = \(accountID) ORDER BY attached_at, id").map(Self.provisionalIdentity)
    }

    static func provisionalIdentity(_ row: PostgresRandomAccessRow) throws -> ProvisionalIdentity {
        guard let email = EmailAddress(try row["email"].string()) else { throw BrokerError.internalFailure("provisional_identities.email holds no address") }
        return ProvisionalIdentity(
            id: try row["id"].string(), appID: try row["app_id"].string(), email: email, grants: try row["grants"].json([String].self),
            groups: try row["groups"].json([String].self), createdAt: try row["created_at"].date(), createdBy: try row["created_by"].string(),
            accountID: try row["account_id"].optionalString(), attachedAt: try row["attached_at"].optionalDate()
        )
    }
}
