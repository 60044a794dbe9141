import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: AttemptCounterStore {
    public func attemptCounter(key: String) async throws -> AttemptCounter? {
        try readOneStatement { db in try Self.counter(key, db) }
    }

    public func reserveAttempt(
        key: String, now: Date, window: TimeInterval, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval
    ) async throws -> AttemptReservation {
        try await write { db in
            var counter = try Self.counter(key, db) ?? AttemptCounter(key: key, failures: 0, windowStart: now, lockedUntil: nil, lockouts: 0)
            let result = counter.reserve(now: now, window: window, threshold: threshold, lockDuration: lockDuration)
            if case .locked = result { return result }
            try Self.save(counter, now: now, db)
            return result
        }
    }

    public func lockIfDue(key: String, now: Date, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval) async throws -> Date? {
        try await write { db in
            guard var counter = try Self.counter(key, db), counter.isDueForLock(now: now, threshold: threshold) else { return nil }
            let until = counter.lock(now: now, lockDuration: lockDuration)
            try Self.save(counter, now: now, db)
            return until
        }
    }

    static func save(_ counter: AttemptCounter, now: Date, _ db: Database) throws {
        try db.executeCached(
            sql: """
                INSERT INTO attempt_counters (key, failures, window_start, locked_until, lockouts, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, window_start = excluded.window_start,
                    locked_until = excluded.locked_until, lockouts = excluded.lockouts, updated_at = excluded.updated_at
                """,
            arguments: [counter.key, counter.failures, counter.windowStart.storeValue, counter.lockedUntil?.storeValue, counter.lockouts, now.storeValue]
        )
    }

    public func releaseAttempt(key: String) async throws {
        try await write { db in
            try db.cachedStatement(sql: "UPDATE attempt_counters SET failures = failures - 1 WHERE key = ? AND failures > 0").execute(arguments: [key])
        }
    }

    public func clearFailures(key: String) async throws {
        try await write { db in
            try db.cachedStatement(sql: "UPDATE attempt_counters SET failures = 0 WHERE key = ? AND failures > 0").execute(arguments: [key])
        }
    }

    public func countEvent(key: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowEnds: Date) {
        try await write { db in
            var counter = try Self.counter(key, db) ?? AttemptCounter(key: key, failures: 0, windowStart: now, lockedUntil: nil, lockouts: 0)
            if now.timeIntervalSince(counter.windowStart) >= window {
                counter.failures = 0
                counter.windowStart = now
            }
            counter.failures += 1
            try db.executeCached(
                sql: """
                    INSERT INTO attempt_counters (key, failures, window_start, locked_until, lockouts, updated_at) VALUES (?, ?, ?, NULL, 0, ?)
                    ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, window_start = excluded.window_start, updated_at = excluded.updated_at
                    """,
                arguments: [key, counter.failures, counter.windowStart.storeValue, now.storeValue]
            )
            return (counter.failures, counter.windowStart.addingTimeInterval(window))
        }
    }

    public func unlock(key: String) async throws -> Bool {
        try await write { db in
            try db.cachedStatement(sql: "UPDATE attempt_counters SET locked_until = NULL, failures = 0, lockouts = 0 WHERE key = ? AND locked_until IS NOT NULL").execute(
                arguments: [key])
            return db.changesCount == 1
        }
    }

    public func lockedCounters(now: Date) async throws -> [AttemptCounter] {
        try await readLater { db in
            try String.fetchAll(
                try db.cachedStatement(sql: "SELECT key FROM attempt_counters WHERE locked_until > ? ORDER BY locked_until DESC"), arguments: [now.storeValue]
            )
            .compactMap { try Self.counter($0, db) }
        }
    }

    public func deleteStaleCounters(before: Date) async throws -> Int {
        try await write { db in
            try db.executeCached(
                sql: "DELETE FROM attempt_counters WHERE updated_at < ? AND (locked_until IS NULL OR locked_until < ?)",
                arguments: [before.storeValue, before.storeValue]
            )
            return db.changesCount
        }
    }

    static func counter(_ key: String, _ db: Database) throws -> AttemptCounter? {
        try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM attempt_counters WHERE key = ?"), arguments: [key]).map { row in
            AttemptCounter(
                key: row["key"], failures: row["failures"], windowStart: Date(storeValue: row["window_start"]),
                lockedUntil: (row["locked_until"] as Double?).map(Date.init(storeValue:)), lockouts: row["lockouts"]
            )
        }
    }
}
