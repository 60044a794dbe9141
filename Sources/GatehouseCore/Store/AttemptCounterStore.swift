import Foundation

/// A failure counter and lock for one key (an account at a provider, a client IP, a rate bucket).
public struct AttemptCounter: Sendable, Hashable {
    /// The counter's key (`<namespace>:<key>`).
    public var key: String
    /// Failures in the current window.
    public var failures: Int
    /// When the window started.
    public var windowStart: Date
    /// Until when the key is locked, if it is.
    public var lockedUntil: Date?
    /// How many times the key was locked; lockouts grow with it.
    public var lockouts: Int

    /// A counter.
    public init(key: String, failures: Int, windowStart: Date, lockedUntil: Date?, lockouts: Int) {
        self.key = key
        self.failures = failures
        self.windowStart = windowStart
        self.lockedUntil = lockedUntil
        self.lockouts = lockouts
    }
}

extension AttemptCounter {
    /// The rule of `AttemptCounterStore.reserveAttempt`, applied to the counter as read under the
    /// store's lock (each store writes the result back in the same transaction).
    public mutating func reserve(now: Date, window: TimeInterval, threshold: Int, lockDuration: (Int) -> TimeInterval) -> AttemptReservation {
        if let until = lockedUntil, until > now { return .locked(until: until) }
        if now.timeIntervalSince(windowStart) >= window {
            failures = 0
            windowStart = now
        }
        guard failures < threshold else { return .lockedNow(until: lock(now: now, lockDuration: lockDuration)) }
        failures += 1
        return .allowed
    }

    /// Locks the key from `now` for the duration its lockout history calls for; returns the end.
    public mutating func lock(now: Date, lockDuration: (Int) -> TimeInterval) -> Date {
        let until = now.addingTimeInterval(lockDuration(lockouts))
        lockedUntil = until
        lockouts += 1
        failures = 0
        windowStart = now
        return until
    }

    /// Whether `lockIfDue` locks it now: enough failures, and not locked already.
    public func isDueForLock(now: Date, threshold: Int) -> Bool {
        failures >= threshold && (lockedUntil ?? .distantPast) <= now
    }
}

/// The answer to `reserveAttempt`.
public enum AttemptReservation: Sendable, Equatable {
    /// Counted; go ahead.
    case allowed
    /// Locked already, until then.
    case locked(until: Date)
    /// Locked by this very reservation (the limit was reached), until then.
    case lockedNow(until: Date)
}

/// Failure counters, locks and rate buckets shared by every node.
public protocol AttemptCounterStore: Sendable {
    /// The counter under `key`, if any.
    func attemptCounter(key: String) async throws -> AttemptCounter?
    /// In one transaction, before an answer is evaluated: refuses if the key is locked; locks it when
    /// it already has `threshold` failures in the window; otherwise counts this attempt as a failure
    /// in advance (a right answer clears it). Parallel guesses therefore cannot all slip past the limit.
    func reserveAttempt(key: String, now: Date, window: TimeInterval, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval) async throws
        -> AttemptReservation
    /// After a wrong answer: locks the key if it has reached `threshold` failures. Returns the end of
    /// a lock made now, or nil.
    func lockIfDue(key: String, now: Date, threshold: Int, lockDuration: @escaping @Sendable (Int) -> TimeInterval) async throws -> Date?
    /// Forgets the failures of a key (after a success); its lockout history stays.
    func clearFailures(key: String) async throws
    /// Gives back one reserved attempt (an answer that turned out right, or was not an answer at all).
    func releaseAttempt(key: String) async throws
    /// Counts one event in a fixed window of `window` seconds; returns the count including this one
    /// and when the window ends.
    func countEvent(key: String, now: Date, window: TimeInterval) async throws -> (count: Int, windowEnds: Date)
    /// Lifts a lock and forgets the key's lockout history (admin unlock: a fresh start, so a
    /// permanent lock does not come back at the next failure); false when the key was not locked.
    func unlock(key: String) async throws -> Bool
    /// Every key locked at `now`.
    func lockedCounters(now: Date) async throws -> [AttemptCounter]
    /// Forgets counters untouched since `before`; answers how many.
    func deleteStaleCounters(before: Date) async throws -> Int
}
