import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: AttemptCounterStore {
    public func attemptCounter(key: String) async throws -> AttemptCounter? {
        try await rows(PreparedStatements.AttemptCounterByKey.self) { $0.append(key) }.first.map(Self.counter)
    }

    /// The common case, an attempt that is allowed, is one upsert whose `WHERE` lets it count only
    /// while the key is not locked and below the limit: the row lock it takes orders parallel guesses
    /// from several nodes. Anything else (locked, or the limit reached, which locks) is decided in a
    /// transaction that locks the row (`FOR UPDATE`) first, so they cannot all slip past the limit.
    public func reserveAttempt(
        key: String, now: Date, window: TimeInterval, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval
    ) async throws -> AttemptReservation {
        if threshold >= 1, try await countInWindow(key: key, now: now, window: window, below: threshold, unlockedOnly: true) != nil {
            return .allowed
        }
        // The transaction's closure runs and ends before this returns, so the rule never escapes.
        return try await withoutActuallyEscaping(lockDuration) { lockDuration in
            try await reserve(key: key, now: now, window: window, threshold: threshold, lockDuration: lockDuration)
        }
    }

    private func reserve(
        key: String, now: Date, window: TimeInterval, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval
    ) async throws -> AttemptReservation {
        try await transaction { connection in
            var counter = try await Self.lockedCounter(key, now: now, connection, self.logger)
            let result = counter.reserve(now: now, window: window, threshold: threshold, lockDuration: lockDuration)
            if case .locked = result { return result }
            try await Self.save(counter, now: now, connection, self.logger)
            return result
        }
    }

    public func lockIfDue(key: String, now: Date, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval) async throws -> Date? {
        try await withoutActuallyEscaping(lockDuration) { lockDuration in try await lock(key: key, now: now, threshold: threshold, lockDuration: lockDuration) }
    }

    private func lock(key: String, now: Date, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval) async throws -> Date? {
        try await transaction { connection in
            guard
                var counter = try await Self.rows("SELECT * FROM attempt_counters WHERE key = \(key) FOR UPDATE", on: connection, logger: self.logger)
                    .first.map(Self.counter),
                counter.isDueForLock(now: now, threshold: threshold)
            else { return nil }
            let until = counter.lock(now: now, lockDuration: lockDuration)
            try await Self.save(counter, now: now, connection, self.logger)
            return until
        }
    }

    /// The key's row, made when missing, locked until the transaction ends. (The purge may delete a
    /// stale row between the insert and the lock: then it is made again.)
    static func lockedCounter(_ key: String, now: Date, _ connection: PostgresConnection, _ logger: Logger) async throws -> AttemptCounter {
        for _ in 0..<3 {
            try await connection.query(
                """
                INSERT INTO attempt_counters (key, failures, window_start, locked_until, lockouts, updated_at)
                VALUES (\(key), 0, \(now.storeValue), NULL, 0, \(now.storeValue)) ON CONFLICT (key) DO NOTHING
                """, logger: logger
            )
            if let counter = try await rows("SELECT * FROM attempt_counters WHERE key = \(key) FOR UPDATE", on: connection, logger: logger).first.map(Self.counter) {
                return counter
            }
        }
        throw BrokerError(.conflict, .conflict, "The attempt counter changed concurrently; try again.")
    }

    static func save(_ counter: AttemptCounter, now: Date, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE attempt_counters SET failures = \(counter.failures), window_start = \(counter.windowStart.storeValue),
                locked_until = \(counter.lockedUntil?.storeValue), lockouts = \(counter.lockouts), updated_at = \(now.storeValue)
            WHERE key = \(counter.key)
            """, logger: logger
        )
    }

    public func releaseAttempt(key: String) async throws {
        try await run("UPDATE attempt_counters SET failures = failures - 1 WHERE key = \(key) AND failures > 0")
    }

    public func clearFailures(key: String) async throws {
        try await run("UPDATE attempt_counters SET failures = 0 WHERE key = \(key) AND failures > 0")
    }

    /// One statement: the upsert takes the row lock, and the window arithmetic happens under it.
    public func countEvent(key: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowEnds: Date) {
        guard let counted = try await countInWindow(key: key, now: now, window: window, below: Int.max, unlockedOnly: false) else {
            throw BrokerError.internalFailure("the rate counter returned nothing")
        }
        return counted
    }

    /// One upsert that counts an event in the key's fixed window (a new window when the old one is
    /// over), under the row lock the upsert takes. It counts only while the count is below `limit`
    /// (or the window is over) and, with `unlockedOnly`, the key is not locked; nil when it did not.
    private func countInWindow(key: String, now: Date, window: TimeInterval, below limit: Int, unlockedOnly: Bool) async throws -> (count: Int, windowEnds: Date)? {
        let t = now.storeValue
        let row = try await rows(
            """
            INSERT INTO attempt_counters (key, failures, window_start, locked_until, lockouts, updated_at) VALUES (\(key), 1, \(t), NULL, 0, \(t))
            ON CONFLICT (key) DO UPDATE SET
                failures = CASE WHEN \(t) - attempt_counters.window_start >= \(window) THEN 1 ELSE attempt_counters.failures + 1 END,
                window_start = CASE WHEN \(t) - attempt_counters.window_start >= \(window) THEN \(t) ELSE attempt_counters.window_start END,
                updated_at = \(t)
            WHERE (NOT \(unlockedOnly) OR attempt_counters.locked_until IS NULL OR attempt_counters.locked_until <= \(t))
                AND (\(t) - attempt_counters.window_start >= \(window) OR attempt_counters.failures < \(limit))
            RETURNING failures, window_start
            """
        ).first
        return try row.map { (try $0["failures"].int(), try $0["window_start"].date().addingTimeInterval(window)) }
    }

    public func unlock(key: String) async throws -> Bool {
        try await run("UPDATE attempt_counters SET locked_until = NULL, failures = 0, lockouts = 0 WHERE key = \(key) AND locked_until IS NOT NULL RETURNING 1") == 1
    }

    public func lockedCounters(now: Date) async throws -> [AttemptCounter] {
        try await rows("SELECT * FROM attempt_counters WHERE locked_until > \(now.storeValue) ORDER BY locked_until DESC").map(Self.counter)
    }

    public func deleteStaleCounters(before: Date) async throws -> Int {
        try await run(
            "DELETE FROM attempt_counters WHERE updated_at < \(before.storeValue) AND (locked_until IS NULL OR locked_until < \(before.storeValue)) RETURNING 1"
        )
    }

    static func counter(_ row: PostgresRandomAccessRow) throws -> AttemptCounter {
        AttemptCounter(
            key: try row["key"].string(), failures: try row["failures"].int(), windowStart: try row["window_start"].date(),
            lockedUntil: try row["locked_until"].optionalDate(), lockouts: try row["lockouts"].int()
        )
    }
}
