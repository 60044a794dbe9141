import Foundation
import GatehouseCore
import Logging
import PostgresNIO

extension PostgresStore: BrowserSessionStore {
    public func insertBrowserSession(_ session: BrowserSession) async throws {
        let providers = try StoreJSON.encode(session.providers)
        let factors = try StoreJSON.encode(session.factors)
        let methods = try StoreJSON.encode(session.methods)
        try await transaction { connection in
            try await connection.query(
                """
                INSERT INTO browser_sessions (id, cookie_digest, account_id, providers, factors, amr, subject, username, auth_time, created_at,
                    last_seen_at, expires_at, ended_at, client_ip, user_agent)
                VALUES (\(session.id), \(session.cookieDigest), \(session.accountID), \(providers), \(factors), \(methods), \(session.subject),
                        \(session.username), \(session.authTime.storeValue), \(session.createdAt.storeValue), \(session.lastSeenAt.storeValue),
                        \(session.expiresAt.storeValue), \(session.endedAt?.storeValue), \(session.clientIP), \(session.userAgent))
                """,
                logger: self.logger
            )
            for appID in session.appIDs {
                try await connection.query(
                    "INSERT INTO browser_session_apps (session_id, app_id) VALUES (\(session.id), \(appID)) ON CONFLICT DO NOTHING", logger: self.logger
                )
            }
        }
    }

    public func browserSession(cookieDigest: String) async throws -> BrowserSession? {
        try await withConnection { connection in
            guard let row = try await Self.rows("SELECT * FROM browser_sessions WHERE cookie_digest = \(cookieDigest)", on: connection, logger: self.logger).first
            else { return nil }
            return try await Self.browserSession(row, on: connection, logger: self.logger)
        }
    }

    public func browserSession(id: String) async throws -> BrowserSession? {
        try await withConnection { connection in
            guard let row = try await Self.rows("SELECT * FROM browser_sessions WHERE id = \(id)", on: connection, logger: self.logger).first else { return nil }
            return try await Self.browserSession(row, on: connection, logger: self.logger)
        }
    }

    public func browserSessions(accountID: String, now: Date) async throws -> [BrowserSession] {
        try await withConnection { connection in
            var sessions: [BrowserSession] = []
            for row in try await Self.rows(
                "SELECT * FROM browser_sessions WHERE account_id = \(accountID) AND ended_at IS NULL AND expires_at > \(now.storeValue) ORDER BY created_at DESC, id",
                on: connection, logger: self.logger
            ) {
                sessions.append(try await Self.browserSession(row, on: connection, logger: self.logger))
            }
            return sessions
        }
    }

    public func updateBrowserSessionSignIn(
        id: String, providers: [String], factors: [String], methods: [String], authTime: Date?, cookieDigest: String?, now: Date
    ) async throws -> Bool {
        let methodsJSON = try StoreJSON.encode(methods)
        return try await transaction { connection in
            // The row lock keeps two step-ups of one session from losing each other's factors.
            guard
                let row = try await Self.rows(
                    "SELECT * FROM browser_sessions WHERE id = \(id) AND ended_at IS NULL AND expires_at > \(now.storeValue) FOR UPDATE", on: connection,
                    logger: self.logger
                ).first
            else { return false }
            let session = try await Self.browserSession(row, on: connection, logger: self.logger)
            let mergedProviders = try StoreJSON.encode((session.providers + providers).uniqued())
            let mergedFactors = try StoreJSON.encode(authTime == nil ? (session.factors + factors).uniqued() : factors)
            let time = (authTime ?? session.authTime).storeValue
            let digest = cookieDigest ?? session.cookieDigest
            return try await Self.rows(
                """
                UPDATE browser_sessions SET providers = \(mergedProviders), factors = \(mergedFactors), amr = \(methodsJSON), auth_time = \(time),
                    cookie_digest = \(digest), last_seen_at = \(now.storeValue)
                WHERE id = \(id) AND ended_at IS NULL RETURNING 1
                """,
                on: connection, logger: self.logger
            ).count == 1
        }
    }

    public func recordBrowserSessionUse(id: String, appID: String, now: Date) async throws {
        try await transaction { connection in
            try await connection.query(
                "UPDATE browser_sessions SET last_seen_at = GREATEST(last_seen_at, \(now.storeValue)) WHERE id = \(id)", logger: self.logger
            )
            try await connection.query(
                "INSERT INTO browser_session_apps (session_id, app_id) VALUES (\(id), \(appID)) ON CONFLICT DO NOTHING", logger: self.logger
            )
        }
    }

    /// One statement: the session's end and its logout deliveries commit together, or not at all.
    public func endBrowserSession(id: String, now: Date, logoutApps: [String], payload: String) async throws -> Bool {
        guard !logoutApps.isEmpty else {
            return try await run("UPDATE browser_sessions SET ended_at = \(now.storeValue) WHERE id = \(id) AND ended_at IS NULL RETURNING 1") == 1
        }
        return try await run(
            """
            WITH ended AS (UPDATE browser_sessions SET ended_at = \(now.storeValue) WHERE id = \(id) AND ended_at IS NULL RETURNING id)
            INSERT INTO event_outbox (app_id, subject, kind, payload, created_at, next_attempt_at, attempts, status)
            SELECT app, 'session:' || ended.id, 'backchannel_logout', \(payload), \(now.storeValue), \(now.storeValue), 0, 'pending'
            FROM ended, unnest(\(logoutApps)::text[]) AS app
            RETURNING 1
            """
        ) > 0
    }

    public func browserSessionTokenFamilies(sessionID: String) async throws -> [SessionTokenFamily] {
        try await rows(
            "SELECT family_id, MIN(scopes) AS scopes FROM refresh_tokens WHERE session_id = \(sessionID) GROUP BY family_id ORDER BY family_id"
        ).map { SessionTokenFamily(familyID: try $0["family_id"].string(), scopes: try $0["scopes"].json([String].self)) }
    }

    public func deleteExpiredBrowserSessions(before: Date) async throws -> Int {
        try await run("DELETE FROM browser_sessions WHERE expires_at <= \(before.storeValue) OR ended_at <= \(before.storeValue) RETURNING 1")
    }

    static func browserSession(_ row: PostgresRandomAccessRow, on connection: PostgresConnection, logger: Logger) async throws -> BrowserSession {
        let id = try row["id"].string()
        let apps = try await rows("SELECT app_id FROM browser_session_apps WHERE session_id = \(id) ORDER BY app_id", on: connection, logger: logger)
            .map { try $0["app_id"].string() }
        return BrowserSession(
            id: id, cookieDigest: try row["cookie_digest"].string(), accountID: try row["account_id"].string(), providers: try row["providers"].json([String].self),
            factors: try row["factors"].json([String].self), methods: try row["amr"].json([String].self), subject: try row["subject"].string(),
            username: try row["username"].string(), authTime: try row["auth_time"].date(), createdAt: try row["created_at"].date(),
            lastSeenAt: try row["last_seen_at"].date(), expiresAt: try row["expires_at"].date(), endedAt: try row["ended_at"].optionalDate(), appIDs: apps,
            clientIP: try row["client_ip"].optionalString(), userAgent: try row["user_agent"].optionalString()
        )
    }
}
