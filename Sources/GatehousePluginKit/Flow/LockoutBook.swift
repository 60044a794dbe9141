import Foundation

/// How a plugin's own lockouts behave: so many failures within a window lock the key, each further
/// lockout lasts twice as long (capped), and, when `permanentAfterLockouts` is set, the lockout with
/// that number lasts until an administrator lifts it.
public struct LockoutRule: Sendable, Hashable {
    /// Failures within `failureWindow` that lock the key.
    public var maxFailures: Int
    /// The window failures are counted over.
    public var failureWindow: Seconds
    /// The first lockout; each further one doubles it.
    public var lockoutDuration: Seconds
    /// The cap of that doubling.
    public var maxLockoutDuration: Seconds
    /// The lockout (counting from 1) that no longer runs out; nil for never.
    public var permanentAfterLockouts: Int?

    /// A rule.
    public init(maxFailures: Int, failureWindow: Seconds, lockoutDuration: Seconds, maxLockoutDuration: Seconds, permanentAfterLockouts: Int?) {
        self.maxFailures = maxFailures
        self.failureWindow = failureWindow
        self.lockoutDuration = lockoutDuration
        self.maxLockoutDuration = maxLockoutDuration
        self.permanentAfterLockouts = permanentAfterLockouts
    }

    /// A permanent lock is stored as one that ends a thousand years from now; anything ending after
    /// `permanentThreshold` reads as permanent.
    static let permanentDuration: TimeInterval = 1000 * 365 * 86_400
    /// A lock ending after this is permanent.
    public static let permanentThreshold = Date(timeIntervalSince1970: 500 * 365 * 86_400)

    /// How long the lockout after `count` earlier ones lasts.
    public func lockDuration(afterLockouts count: Int) -> TimeInterval {
        if let permanent = permanentAfterLockouts, count + 1 >= permanent { return Self.permanentDuration }
        return min(lockoutDuration.timeInterval * pow(2, Double(min(count, 30))), maxLockoutDuration.timeInterval)
    }
}

/// What a lockout is audited as.
public struct LockoutAudit: Sendable {
    /// The audit event's type (`<plugin type>.locked`).
    public var type: String
    /// The app it happened at.
    public var appID: String?
    /// The provider instance whose lockout it is.
    public var providerID: String?
    /// What else the audit log keeps (never a secret).
    public var details: [String: String]

    /// An audit description.
    public init(type: String, appID: String? = nil, providerID: String? = nil, details: [String: String] = [:]) {
        self.type = type
        self.appID = appID
        self.providerID = providerID
        self.details = details
    }
}

/// The core's lockout and rate-limit bookkeeping on store counters, so they hold on every node and
/// across restarts: guesses counted before they are evaluated, locks that grow (and may become
/// permanent), every lock audited and counted in the metrics. The flow engine keeps accounts' locks
/// with it (`AttemptGuard`); a plugin gets one under its instance id (`PluginEnvironment.lockouts`,
/// keys like `email:address:alice@example.com`). Administrators see and lift both kinds with
/// `gatehouse lockouts` or `/admin/v1/lockouts`.
public struct LockoutBook: Sendable {
    /// The prefix of every key; nil for the engine's own keys.
    public let namespace: String?
    private let store: any AttemptCounterStore
    private let audit: any AuditStore
    private let clock: any BrokerClock
    private let metrics: BrokerMetrics

    /// A book keeping counters under `namespace` (the instance id), in the broker's store.
    public init(namespace: String?, store: any AttemptCounterStore, audit: any AuditStore, clock: any BrokerClock, metrics: BrokerMetrics = BrokerMetrics()) {
        self.namespace = namespace
        self.store = store
        self.audit = audit
        self.clock = clock
        self.metrics = metrics
    }

    /// The full counter key of a local key, as administrators see it.
    public func key(_ local: String) -> String { namespace.map { "\($0):\(local)" } ?? local }

    /// The audit event of this book's locks: `lockout.applied` of its namespace, with `details`.
    public func event(details: [String: String] = [:]) -> LockoutAudit {
        LockoutAudit(type: "lockout.applied", providerID: namespace, details: details)
    }

    /// Refuses with `locked_out` (`lockedUntil`, or `permanent`) when the key is locked.
    public func refuseIfLocked(_ local: String, what: String) async throws {
        let now = clock.now
        guard let until = try await store.attemptCounter(key: key(local))?.lockedUntil, until > now else { return }
        metrics.refused(reason: ErrorCode.lockedOut.rawValue)
        throw BrokerError.lockedOut(what, until: until, now: now)
    }

    /// Before a guess is evaluated: refuses a locked key, and counts the guess as a failure in advance
    /// (so parallel guesses cannot slip past the limit). Follow with `recordFailure` or `recordSuccess`.
    /// A lock made now is audited as `event` (by default `lockout.applied` of this namespace).
    public func reserve(_ local: String, rule: LockoutRule, what: String, event: LockoutAudit? = nil) async throws {
        let now = clock.now
        switch try await store.reserveAttempt(
            key: key(local), now: now, window: rule.failureWindow.timeInterval, threshold: rule.maxFailures, lockDuration: rule.lockDuration(afterLockouts:)
        ) {
        case .allowed:
            return
        case .locked(let until):
            metrics.refused(reason: ErrorCode.lockedOut.rawValue)
            throw BrokerError.lockedOut(what, until: until, now: now)
        case .lockedNow(let until):
            try await locked(local, until: until, event: event)
            throw BrokerError.lockedOut(what, until: until, now: now)
        }
    }

    /// After a wrong guess (already counted by `reserve`): locks the key when it reached the limit and
    /// returns the `locked_out` error to answer with instead of the plain refusal.
    public func recordFailure(_ local: String, rule: LockoutRule, what: String, event: LockoutAudit? = nil) async throws -> BrokerError? {
        let now = clock.now
        guard let until = try await store.lockIfDue(key: key(local), now: now, threshold: rule.maxFailures, lockDuration: rule.lockDuration(afterLockouts:)) else {
            return nil
        }
        try await locked(local, until: until, event: event)
        return BrokerError.lockedOut(what, until: until, now: now)
    }

    /// A right answer: the key's failures are forgotten (its lockout history stays).
    public func recordSuccess(_ local: String) async throws {
        try await store.clearFailures(key: key(local))
    }

    /// Lifts the key's lock, and forgets its history, when an administrator resets what it guarded
    /// (a second factor set up anew); false when it was not locked. The caller audits the reset.
    @discardableResult
    public func unlock(_ local: String) async throws -> Bool {
        try await store.unlock(key: key(local))
    }

    /// Gives back a reserved guess that was not evaluated.
    public func release(_ local: String) async throws {
        try await store.releaseAttempt(key: key(local))
    }

    /// Counts one event (a code sent) in a fixed window; refuses with `rate_limited` and `retryAfter`
    /// once more than `limit` happened in it.
    public func limitRate(_ local: String, limit: Int, window: Seconds, message: String) async throws {
        let now = clock.now
        let (count, windowEnds) = try await store.countEvent(key: key(local), now: now, window: window.timeInterval)
        guard count > limit else { return }
        metrics.refused(reason: ErrorCode.rateLimited.rawValue)
        throw BrokerError(.rateLimited, .tooManyRequests, message, retryAfter: max(1, Int(windowEnds.timeIntervalSince(now).rounded(.up))))
    }

    private func locked(_ local: String, until: Date, event: LockoutAudit?) async throws {
        metrics.lockout(scope: namespace ?? "account")
        var event = event ?? self.event()
        event.details["key"] = key(local)
        if until >= LockoutRule.permanentThreshold {
            event.details["permanent"] = "true"
        } else {
            event.details["until"] = ISO8601DateFormatter().string(from: until)
        }
        if let lockouts = try await store.attemptCounter(key: key(local))?.lockouts { event.details["lockouts"] = String(lockouts) }
        try await audit.appendAudit(
            AuditEvent(time: clock.now, type: event.type, appID: event.appID, providerID: event.providerID, outcome: ErrorCode.lockedOut.rawValue, details: event.details)
        )
    }
}
