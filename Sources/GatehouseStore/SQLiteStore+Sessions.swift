import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: BrowserSessionStore {
    public func insertBrowserSession(_ session: BrowserSession) async throws {
        try await write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO browser_sessions (id, cookie_digest, account_id, providers, factors, amr, subject, username, auth_time, created_at,
                        last_seen_at, expires_at, ended_at, client_ip, user_agent)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    session.id, session.cookieDigest, session.accountID, try StoreJSON.encode(session.providers), try StoreJSON.encode(session.factors),
                    try StoreJSON.encode(session.methods), session.subject, session.username, session.authTime.storeValue, session.createdAt.storeValue,
                    session.lastSeenAt.storeValue, session.expiresAt.storeValue, session.endedAt?.storeValue, session.clientIP, session.userAgent,
                ]
            )
            for appID in session.appIDs {
                try db.executeCached(sql: "INSERT OR IGNORE INTO browser_session_apps (session_id, app_id) VALUES (?, ?)", arguments: [session.id, appID])
            }
        }
    }

    public func browserSession(cookieDigest: String) async throws -> BrowserSession? {
        try readNow { db in
            try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM browser_sessions WHERE cookie_digest = ?"), arguments: [cookieDigest])
                .map { try Self.browserSession($0, db) }
        }
    }

    public func browserSession(id: String) async throws -> BrowserSession? {
        try readNow { db in
            try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM browser_sessions WHERE id = ?"), arguments: [id]).map { try Self.browserSession($0, db) }
        }
    }

    public func browserSessions(accountID: String, now: Date) async throws -> [BrowserSession] {
        try await readLater { db in
            try Row.fetchAll(
                try db.cachedStatement(
                    sql: "SELECT * FROM browser_sessions WHERE account_id = ? AND ended_at IS NULL AND expires_at > ? ORDER BY created_at DESC, id"
                ),
                arguments: [accountID, now.storeValue]
            ).map { try Self.browserSession($0, db) }
        }
    }

    public func updateBrowserSessionSignIn(
        id: String, providers: [String], factors: [String], methods: [String], authTime: Date?, cookieDigest: String?, now: Date
    ) async throws -> Bool {
        try await write { db in
            guard
                let row = try Row.fetchOne(
                    try db.cachedStatement(sql: "SELECT * FROM browser_sessions WHERE id = ? AND ended_at IS NULL AND expires_at > ?"), arguments: [id, now.storeValue]
                )
            else { return false }
            let session = try Self.browserSession(row, db)
            try db.executeCached(
                sql: """
                    UPDATE browser_sessions SET providers = ?, factors = ?, amr = ?, auth_time = ?, cookie_digest = ?, last_seen_at = ?
                    WHERE id = ? AND ended_at IS NULL
                    """,
                arguments: [
                    try StoreJSON.encode((session.providers + providers).uniqued()),
                    try StoreJSON.encode(authTime == nil ? (session.factors + factors).uniqued() : factors),
                    try StoreJSON.encode(methods), (authTime ?? session.authTime).storeValue, cookieDigest ?? session.cookieDigest, now.storeValue, id,
                ]
            )
            return db.changesCount == 1
        }
    }

    public func recordBrowserSessionUse(id: String, appID: String, now: Date) async throws {
        try await write { db in
            try db.cachedStatement(sql: "UPDATE browser_sessions SET last_seen_at = MAX(last_seen_at, ?) WHERE id = ?").execute(arguments: [now.storeValue, id])
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO browser_session_apps (session_id, app_id) VALUES (?, ?)").execute(arguments: [id, appID])
        }
    }

    public func endBrowserSession(id: String, now: Date, logoutApps: [String], payload: String) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: "UPDATE browser_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL").execute(arguments: [now.storeValue, id])
            guard db.changesCount == 1 else { return false }
            for appID in logoutApps {
                try db.executeCached(
                    sql: """
                        INSERT INTO event_outbox (app_id, subject, kind, payload, created_at, next_attempt_at, attempts, status)
                        VALUES (?, ?, 'backchannel_logout', ?, ?, ?, 0, 'pending')
                        """,
                    arguments: [appID, "session:" + id, payload, now.storeValue, now.storeValue]
                )
            }
            return true
        }
    }

    public func browserSessionTokenFamilies(sessionID: String) async throws -> [SessionTokenFamily] {
        try await readLater { db in
            try Row.fetchAll(
                try db.cachedStatement(sql: "SELECT family_id, MIN(scopes) AS scopes FROM refresh_tokens WHERE session_id = ? GROUP BY family_id ORDER BY family_id"),
                arguments: [sessionID]
            ).map { SessionTokenFamily(familyID: $0["family_id"], scopes: try StoreJSON.decode([String].self, $0["scopes"])) }
        }
    }

    public func deleteExpiredBrowserSessions(before: Date) async throws -> Int {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM browser_sessions WHERE expires_at <= ? OR ended_at <= ?").execute(arguments: [before.storeValue, before.storeValue])
            return db.changesCount
        }
    }

    static func browserSession(_ row: Row, _ db: Database) throws -> BrowserSession {
        let id: String = row["id"]
        let apps = try String.fetchAll(try db.cachedStatement(sql: "SELECT app_id FROM browser_session_apps WHERE session_id = ? ORDER BY app_id"), arguments: [id])
        return BrowserSession(
            id: id, cookieDigest: row["cookie_digest"], accountID: row["account_id"], providers: try StoreJSON.decode([String].self, row["providers"]),
            factors: try StoreJSON.decode([String].self, row["factors"]), methods: try StoreJSON.decode([String].self, row["amr"]), subject: row["subject"],
            username: row["username"], authTime: Date(storeValue: row["auth_time"]), createdAt: Date(storeValue: row["created_at"]),
            lastSeenAt: Date(storeValue: row["last_seen_at"]), expiresAt: Date(storeValue: row["expires_at"]),
            endedAt: (row["ended_at"] as Double?).map(Date.init(storeValue:)), appIDs: apps, clientIP: row["client_ip"], userAgent: row["user_agent"]
        )
    }
}
