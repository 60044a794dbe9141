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
        return try await transaction { connection in
            if let account {
                try await connection.query(
                    """
                    INSERT INTO accounts (id, username, created_at, is_test, disabled_at, disabled_by)
                    VALUES (\(account.id), \(account.username), \(account.createdAt.storeValue), false, \(account.disabledAt?.storeValue), \(account.disabledBy))
                    """,
                    logger: self.logger)
            }
            // The partial unique index decides a race between two creates of one userName.
            let inserted = try await Self.rows(
                """
                INSERT INTO scim_resources (id, client_id, kind, name, name_key, external_id, account_id, active, attributes, version, created_at, updated_at)
                VALUES (\(resource.id), \(resource.clientID), \(resource.kind.rawValue), \(resource.name), \(resource.nameKey), \(resource.externalID),
                        \(resource.accountID), \(resource.active), \(attributes), \(resource.version), \(resource.createdAt.storeValue),
                        \(resource.updatedAt.storeValue))
                ON CONFLICT (client_id, name_key) WHERE kind = 'User' DO NOTHING RETURNING 1
                """, on: connection, logger: self.logger
            )
            guard !inserted.isEmpty else {
                // Taken: the account made for it goes again, in this transaction.
                if let account { try await connection.query("DELETE FROM accounts WHERE id = \(account.id)", logger: self.logger) }
                return false
            }
            try await self.writeMembers(resource, on: connection)
            return true
        }
    }

    public func scimResource(id: String, clientID: String, kind: ScimKind) async throws -> ScimResourceRecord? {
        guard
            var record = try await rows("SELECT * FROM scim_resources WHERE id = \(id) AND client_id = \(clientID) AND kind = \(kind.rawValue)").first.map(
                Self.scimResource)
        else { return nil }
        if kind == .group {
            record.members = try await rows("SELECT user_id FROM scim_members WHERE group_id = \(id) ORDER BY position").map { try $0["user_id"].string() }
        }
        return record
    }

    public func scimResources(clientID: String, kind: ScimKind) async throws -> [ScimResourceRecord] {
        var records = try await rows("SELECT * FROM scim_resources WHERE client_id = \(clientID) AND kind = \(kind.rawValue) ORDER BY created_at, id").map(
            Self.scimResource)
        guard kind == .group, !records.isEmpty else { return records }
        var members: [String: [String]] = [:]
        for row in try await rows(
            """
            SELECT m.group_id, m.user_id FROM scim_members m JOIN scim_resources g ON g.id = m.group_id
            WHERE g.client_id = \(clientID) ORDER BY m.group_id, m.position
            """)
        {
            members[try row["group_id"].string(), default: []].append(try row["user_id"].string())
        }
        for index in records.indices { records[index].members = members[records[index].id] ?? [] }
        return records
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
                    attributes = \(attributes), version = version + 1, updated_at = \(resource.updatedAt.storeValue)
                WHERE id = \(resource.id)
                """, logger: self.logger
            )
            if resource.kind == .group {
                try await connection.query("DELETE FROM scim_members WHERE group_id = \(resource.id)", logger: self.logger)
                try await self.writeMembers(resource, on: connection)
            }
            return .written
        }
    }

    public func deleteScimResource(id: String, clientID: String, kind: ScimKind, now: Date) async throws -> ScimResourceRecord? {
        try await transaction { connection in
            guard
                let row = try await Self.rows(
                    "SELECT * FROM scim_resources WHERE id = \(id) AND client_id = \(clientID) AND kind = \(kind.rawValue) FOR UPDATE", on: connection,
                    logger: self.logger
                ).first
            else { return nil }
            let deleted = try Self.scimResource(row)
            if kind == .user {
                // The groups it leaves change: their versions move on (its member rows go with it).
                try await connection.query(
                    """
                    UPDATE scim_resources SET version = version + 1, updated_at = \(now.storeValue)
                    WHERE id IN (SELECT group_id FROM scim_members WHERE user_id = \(id))
                    """, logger: self.logger)
            }
            try await connection.query("DELETE FROM scim_resources WHERE id = \(id)", logger: self.logger)
            return deleted
        }
    }

    public func scimUsers(accountID: String) async throws -> [ScimResourceRecord] {
        try await rows("SELECT * FROM scim_resources WHERE account_id = \(accountID) ORDER BY created_at, id").map(Self.scimResource)
    }

    public func scimGroupNames(accountID: String) async throws -> [String] {
        try await rows(
            """
            SELECT DISTINCT g.name FROM scim_resources u JOIN scim_members m ON m.user_id = u.id JOIN scim_resources g ON g.id = m.group_id
            WHERE u.account_id = \(accountID) ORDER BY g.name
            """
        ).map { try $0["name"].string() }
    }

    public func scimUsers(matching attribute: ScimLinkAttribute, value: String) async throws -> [ScimResourceRecord] {
        switch attribute {
        case .userName:
            try await rows("SELECT * FROM scim_resources WHERE kind = 'User' AND name_key = \(value.lowercased()) ORDER BY created_at, id").map(Self.scimResource)
        case .externalId:
            try await rows("SELECT * FROM scim_resources WHERE kind = 'User' AND external_id = \(value) ORDER BY created_at, id").map(Self.scimResource)
        }
    }

    /// A group's member rows, in the order given.
    private func writeMembers(_ resource: ScimResourceRecord, on connection: PostgresConnection) async throws {
        guard resource.kind == .group, !resource.members.isEmpty else { return }
        // One statement for all of them, in their order.
        try await connection.query(
            """
            INSERT INTO scim_members (group_id, user_id, position)
            SELECT \(resource.id), member, position - 1 FROM unnest(\(resource.members)::text[]) WITH ORDINALITY AS given(member, position)
            """, logger: self.logger)
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
            attributes: try row["attributes"].json([String: JSONValue].self), members: [],
            version: try row["version"].decode(Int.self), createdAt: try row["created_at"].date(), updatedAt: try row["updated_at"].date()
        )
    }
}
