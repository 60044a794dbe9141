import GRDB

extension SQLiteStore {
    /// The tables whose rows say something about people or sessions.
    public static let countedTables = ["accounts", "identity_links", "flows", "refresh_tokens", "authorization_codes", "plugin_data", "revocations"]

    /// Rows per table, for tests that prove an operation persisted nothing (stateless sign-in).
    public func rowCounts(_ tables: [String] = SQLiteStore.countedTables) async throws -> [String: Int] {
        try await pool.read { db in
            var counts: [String: Int] = [:]
            for table in tables {
                counts[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.quotedDatabaseIdentifier)") ?? 0
            }
            return counts
        }
    }
}
