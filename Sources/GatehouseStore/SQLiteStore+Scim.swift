import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: ScimStore {
    public func insertScimClient(_ client: ScimClientRecord) async throws -> Bool {
        try await write { db in
            try db.executeCached(
                sql: "INSERT INTO scim_clients (id, name, token_digest, created_at, created_by) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                arguments: [client.id, client.name, client.tokenDigest, client.createdAt.storeValue, client.createdBy]
            )
            return db.changesCount == 1
        }
    }

    public func scimClient(tokenDigest: String) async throws -> ScimClientRecord? {
        try readOneStatement { db in
            try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM scim_clients WHERE token_digest = ?"), arguments: [tokenDigest]).map(Self.scimClient)
        }
    }

    public func scimClients() async throws -> [ScimClientRecord] {
        try await readLater { db in try Row.fetchAll(db, sql: "SELECT * FROM scim_clients ORDER BY created_at, id").map(Self.scimClient) }
    }

    public func replaceScimClientToken(id: String, tokenDigest: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE scim_clients SET token_digest = ? WHERE id = ?", arguments: [tokenDigest, id])
            return db.changesCount == 1
        }
    }

    public func deleteScimClient(id: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM scim_clients WHERE id = ?", arguments: [id])
            return db.changesCount == 1
        }
    }

    public func insertScimResource(_ resource: ScimResourceRecord, account: Account?) async throws -> Bool {
        let attributes = try StoreJSON.encode(resource.attributes)
        return try await write { db in
            if resource.kind == .user,
                try Row.fetchOne(
                    db, sql: "SELECT 1 FROM scim_resources WHERE client_id = ? AND kind = 'User' AND name_key = ?", arguments: [resource.clientID, resource.nameKey])
                    != nil
            {
                return false
            }
            if let account {
                try db.execute(
                    sql: "INSERT INTO accounts (id, username, created_at, is_test, disabled_at, disabled_by) VALUES (?, ?, ?, 0, ?, ?)",
                    arguments: [account.id, account.username, account.createdAt.storeValue, account.disabledAt?.storeValue, account.disabledBy])
            }
            try db.execute(
                sql: """
                    INSERT INTO scim_resources (id, client_id, kind, name, name_key, external_id, account_id, active, attributes, version, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    resource.id, resource.clientID, resource.kind.rawValue, resource.name, resource.nameKey, resource.externalID, resource.accountID, resource.active,
                    attributes, resource.version, resource.createdAt.storeValue, resource.updatedAt.storeValue,
                ]
            )
            try Self.writeMembers(resource, db)
            return true
        }
    }

    public func scimResource(id: String, clientID: String, kind: ScimKind) async throws -> ScimResourceRecord? {
        // A group is two reads (the row, its members): one transaction, so both are of one version.
        try readNow { db in
            guard
                var record = try Row.fetchOne(
                    try db.cachedStatement(sql: "SELECT * FROM scim_resources WHERE id = ? AND client_id = ? AND kind = ?"), arguments: [id, clientID, kind.rawValue]
                ).map(Self.scimResource)
            else { return nil }
            if kind == .group {
                record.members = try String.fetchAll(db, sql: "SELECT user_id FROM scim_members WHERE group_id = ? ORDER BY position", arguments: [id])
            }
            return record
        }
    }

    public func scimResources(clientID: String, kind: ScimKind) async throws -> [ScimResourceRecord] {
        try await readLater { db in
            var records = try Row.fetchAll(
                db, sql: "SELECT * FROM scim_resources WHERE client_id = ? AND kind = ? ORDER BY created_at, id", arguments: [clientID, kind.rawValue]
            ).map(Self.scimResource)
            guard kind == .group, !records.isEmpty else { return records }
            var members: [String: [String]] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT m.group_id, m.user_id FROM scim_members m JOIN scim_resources g ON g.id = m.group_id
                    WHERE g.client_id = ? ORDER BY m.group_id, m.position
                    """, arguments: [clientID])
            {
                members[row["group_id"], default: []].append(row["user_id"])
            }
            for index in records.indices { records[index].members = members[records[index].id] ?? [] }
            return records
        }
    }

    public func replaceScimResource(_ resource: ScimResourceRecord, expectedVersion: Int) async throws -> ScimWrite {
        let attributes = try StoreJSON.encode(resource.attributes)
        return try await write { db in
            guard
                let version = try Int.fetchOne(
                    db, sql: "SELECT version FROM scim_resources WHERE id = ? AND client_id = ? AND kind = ?",
                    arguments: [resource.id, resource.clientID, resource.kind.rawValue])
            else { return .gone }
            guard version == expectedVersion else { return .versionMismatch }
            if resource.kind == .user,
                try Row.fetchOne(
                    db, sql: "SELECT 1 FROM scim_resources WHERE client_id = ? AND kind = 'User' AND name_key = ? AND id <> ?",
                    arguments: [resource.clientID, resource.nameKey, resource.id]) != nil
            {
                return .nameTaken
            }
            try db.execute(
                sql: """
                    UPDATE scim_resources SET name = ?, name_key = ?, external_id = ?, active = ?, attributes = ?, version = version + 1, updated_at = ?
                    WHERE id = ?
                    """,
                arguments: [resource.name, resource.nameKey, resource.externalID, resource.active, attributes, resource.updatedAt.storeValue, resource.id]
            )
            if resource.kind == .group {
                try db.execute(sql: "DELETE FROM scim_members WHERE group_id = ?", arguments: [resource.id])
                try Self.writeMembers(resource, db)
            }
            return .written
        }
    }

    public func deleteScimResource(id: String, clientID: String, kind: ScimKind, now: Date) async throws -> ScimResourceRecord? {
        try await write { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM scim_resources WHERE id = ? AND client_id = ? AND kind = ?", arguments: [id, clientID, kind.rawValue])
            else { return nil }
            let deleted = try Self.scimResource(row)
            if kind == .user {
                // The groups it leaves change: their versions move on (its member rows go with it).
                try db.execute(
                    sql: "UPDATE scim_resources SET version = version + 1, updated_at = ? WHERE id IN (SELECT group_id FROM scim_members WHERE user_id = ?)",
                    arguments: [now.storeValue, id])
            }
            try db.execute(sql: "DELETE FROM scim_resources WHERE id = ?", arguments: [id])
            return deleted
        }
    }

    public func scimUsers(accountID: String) async throws -> [ScimResourceRecord] {
        try readOneStatement { db in
            try Row.fetchAll(
                try db.cachedStatement(sql: "SELECT * FROM scim_resources WHERE account_id = ? ORDER BY created_at, id"), arguments: [accountID]
            ).map(Self.scimResource)
        }
    }

    public func scimGroupNames(accountID: String) async throws -> [String] {
        try readOneStatement { db in
            try String.fetchAll(
                try db.cachedStatement(
                    sql: """
                        SELECT DISTINCT g.name FROM scim_resources u JOIN scim_members m ON m.user_id = u.id JOIN scim_resources g ON g.id = m.group_id
                        WHERE u.account_id = ? ORDER BY g.name
                        """), arguments: [accountID])
        }
    }

    public func scimUsers(matching attribute: ScimLinkAttribute, value: String) async throws -> [ScimResourceRecord] {
        let sql =
            switch attribute {
            case .userName: "SELECT * FROM scim_resources WHERE kind = 'User' AND name_key = ? ORDER BY created_at, id"
            case .externalId: "SELECT * FROM scim_resources WHERE kind = 'User' AND external_id = ? ORDER BY created_at, id"
            }
        let key = attribute == .userName ? value.lowercased() : value
        return try readOneStatement { db in try Row.fetchAll(try db.cachedStatement(sql: sql), arguments: [key]).map(Self.scimResource) }
    }

    /// A group's member rows, in the order given.
    static func writeMembers(_ resource: ScimResourceRecord, _ db: Database) throws {
        guard resource.kind == .group else { return }
        for (position, member) in resource.members.enumerated() {
            try db.execute(sql: "INSERT INTO scim_members (group_id, user_id, position) VALUES (?, ?, ?)", arguments: [resource.id, member, position])
        }
    }

    static func scimClient(_ row: Row) throws -> ScimClientRecord {
        ScimClientRecord(
            id: row["id"], name: row["name"], tokenDigest: row["token_digest"], createdAt: Date(storeValue: row["created_at"]), createdBy: row["created_by"])
    }

    static func scimResource(_ row: Row) throws -> ScimResourceRecord {
        guard let kind = ScimKind(rawValue: row["kind"]) else { throw DatabaseError(message: "scim_resources.kind holds an unknown kind") }
        return ScimResourceRecord(
            id: row["id"], clientID: row["client_id"], kind: kind, name: row["name"], externalID: row["external_id"], accountID: row["account_id"],
            active: row["active"], attributes: try StoreJSON.decode([String: JSONValue].self, row["attributes"]),
            members: [], version: row["version"], createdAt: Date(storeValue: row["created_at"]),
            updatedAt: Date(storeValue: row["updated_at"])
        )
    }
}
