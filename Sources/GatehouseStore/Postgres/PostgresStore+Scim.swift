import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: ScimStore {
    public func insertScimClient(_ client: ScimClientRecord) async throws -> Bool {
        try await run(
            """
            INSERT INTO scim_clients (id, name, token_digest, created_at, created_by)
            VALUES (\(client.id), \(client.name), \(client.tokenDigest), \(client.createdAt.storeValue), \(client.createdBy))
            ON CONFLICT DO NOTHING RETURNING 1
            """
        ) == 1
    }

    public func scimClient(tokenDigest: String) async throws -> ScimClientRecord? {
        try await rows("SELECT * FROM scim_clients WHERE token_digest = \(tokenDigest)").first.map(Self.scimClient)
    }

    public func scimClients() async throws -> [ScimClientRecord] {
        try await rows("SELECT * FROM scim_clients ORDER BY created_at, id").map(Self.scimClient)
    }

    public func replaceScimClientToken(id: String, tokenDigest: String) async throws -> Bool {
        try await run("UPDATE scim_clients SET token_digest = \(tokenDigest) WHERE id = \(id) RETURNING 1") == 1
    }

    public func deleteScimClient(id: String) async throws -> Bool {
        try await run("DELETE FROM scim_clients WHERE id = \(id) RETURNING 1") == 1
    }

    public func insertScimResource(_ resource: ScimResourceRecord, account: Account?) async throws -> Bool {
        let attributes = try StoreJSON.encode(resource.attributes)
        let members = try StoreJSON.encode(resource.members)
        return try await transaction { connection in
            if let account {
                try await connection.query(
                    "INSERT INTO accounts (id, username, created_at, is_test) VALUES (\(account.id), \(account.username), \(account.createdAt.storeValue), false)",
                    logger: self.logger)
            }
            // The partial unique index decides a race between two creates of one userName.
            let inserted = try await Self.rows(
                """
                INSERT INTO scim_resources (id, client_id, kind, name, name_key, external_id, account_id, active, attributes, members, version, created_at, updated_at)
                VALUES (\(resource.id), \(resource.clientID), \(resource.kind.rawValue), \(resource.name), \(resource.nameKey), \(resource.externalID),
                        \(resource.accountID), \(resource.active), \(attributes), \(members), \(resource.version), \(resource.createdAt.storeValue),
                        \(resource.updatedAt.storeValue))
                ON CONFLICT (client_id, name_key) WHERE kind = 'User' DO NOTHING RETURNING 1
                """, on: connection, logger: self.logger
            )
            guard !inserted.isEmpty else {
                // Taken: the account made for it goes again, in this transaction.
                if let account { try await connection.query("DELETE FROM accounts WHERE id = \(account.id)", logger: self.logger) }
                return false
            }
            return true
        }
    }

    public func scimResource(id: String, clientID: String, kind: ScimKind) async throws -> ScimResourceRecord? {
        try await rows("SELECT * FROM scim_resources WHERE id = \(id) AND client_id = \(clientID) AND kind = \(kind.rawValue)").first.map(Self.scimResource)
    }

    public func scimResources(clientID: String, kind: ScimKind) async throws -> [ScimResourceRecord] {
        try await rows("SELECT * FROM scim_resources WHERE client_id = \(clientID) AND kind = \(kind.rawValue) ORDER BY created_at, id").map(Self.scimResource)
    }

    public func replaceScimResource(_ resource: ScimResourceRecord, expectedVersion: Int) async throws -> ScimWrite {
        do {
            return try await replaceScimResourceOnce(resource, expectedVersion: expectedVersion)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            // Two renames to one userName at once: the unique index decided, after the check above read
            // no clash (READ COMMITTED).
            return .nameTaken
        }
    }

    private func replaceScimResourceOnce(_ resource: ScimResourceRecord, expectedVersion: Int) async throws -> ScimWrite {
        let attributes = try StoreJSON.encode(resource.attributes)
        let members = try StoreJSON.encode(resource.members)
        return try await transaction { connection in
            guard
                let row = try await Self.rows(
                    "SELECT version FROM scim_resources WHERE id = \(resource.id) AND client_id = \(resource.clientID) AND kind = \(resource.kind.rawValue) FOR UPDATE",
                    on: connection, logger: self.logger
                ).first
            else { return .gone }
            guard try row["version"].decode(Int.self) == expectedVersion else { return .versionMismatch }
            if resource.kind == .user,
                try await !Self.rows(
                    """
                    SELECT 1 FROM scim_resources WHERE client_id = \(resource.clientID) AND kind = 'User' AND name_key = \(resource.nameKey) AND id <> \(resource.id)
                    """, on: connection, logger: self.logger
                ).isEmpty
            {
                return .nameTaken
            }
            try await connection.query(
                """
                UPDATE scim_resources SET name = \(resource.name), name_key = \(resource.nameKey), external_id = \(resource.externalID), active = \(resource.active),
                    attributes = \(attributes), members = \(members), version = version + 1, updated_at = \(resource.updatedAt.storeValue)
                WHERE id = \(resource.id)
                """, logger: self.logger
            )
            return .written
        }
    }

    public func deleteScimResource(id: String, clientID: String, kind: ScimKind) async throws -> ScimResourceRecord? {
        try await transaction { connection in
            guard
                let row = try await Self.rows(
                    "DELETE FROM scim_resources WHERE id = \(id) AND client_id = \(clientID) AND kind = \(kind.rawValue) RETURNING *", on: connection, logger: self.logger
                ).first
            else { return nil }
            let deleted = try Self.scimResource(row)
            if kind == .user {
                // A deleted user leaves the client's groups.
                let groups = try await Self.rows(
                    "SELECT * FROM scim_resources WHERE client_id = \(clientID) AND kind = 'Group' FOR UPDATE", on: connection, logger: self.logger
                ).map(Self.scimResource)
                for group in groups where group.members.contains(id) {
                    let remaining = try StoreJSON.encode(group.members.filter { $0 != id })
                    try await connection.query(
                        "UPDATE scim_resources SET members = \(remaining), version = version + 1, updated_at = \(deleted.updatedAt.storeValue) WHERE id = \(group.id)",
                        logger: self.logger)
                }
            }
            return deleted
        }
    }

    public func scimUsers(accountID: String) async throws -> [ScimResourceRecord] {
        try await rows("SELECT * FROM scim_resources WHERE account_id = \(accountID) ORDER BY created_at, id").map(Self.scimResource)
    }

    public func scimUsers(matching attribute: ScimLinkAttribute, value: String) async throws -> [ScimResourceRecord] {
        switch attribute {
        case .userName:
            try await rows("SELECT * FROM scim_resources WHERE kind = 'User' AND name_key = \(value.lowercased()) ORDER BY created_at, id").map(Self.scimResource)
        case .externalId:
            try await rows("SELECT * FROM scim_resources WHERE kind = 'User' AND external_id = \(value) ORDER BY created_at, id").map(Self.scimResource)
        }
    }

    static func scimClient(_ row: PostgresRandomAccessRow) throws -> ScimClientRecord {
        ScimClientRecord(
            id: try row["id"].string(), name: try row["name"].string(), tokenDigest: try row["token_digest"].string(), createdAt: try row["created_at"].date(),
            createdBy: try row["created_by"].string())
    }

    static func scimResource(_ row: PostgresRandomAccessRow) throws -> ScimResourceRecord {
        guard let kind = ScimKind(rawValue: try row["kind"].string()) else { throw BrokerError.internalFailure("scim_resources.kind holds an unknown kind") }
        return ScimResourceRecord(
            id: try row["id"].string(), clientID: try row["client_id"].string(), kind: kind, name: try row["name"].string(),
            externalID: try row["external_id"].optionalString(), accountID: try row["account_id"].optionalString(), active: try row["active"].decode(Bool.self),
            attributes: try row["attributes"].json([String: JSONValue].self), members: try row["members"].json([String].self),
            version: try row["version"].decode(Int.self), createdAt: try row["created_at"].date(), updatedAt: try row["updated_at"].date()
        )
    }
}
