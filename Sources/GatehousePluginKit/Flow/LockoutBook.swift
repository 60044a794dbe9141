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
package struct LockoutAudit: Sendable {
    /// The audit event's type (`<plugin type>.locked`).
    package var type: String
    /// The app it happened at.
    package var appID: String?
    /// The provider instance whose lockout it is.
    package var providerID: String?
    /// What else the audit log keeps (never a secret).
    package var details: [String: String]

    /// An audit description.
    package init(type: String, appID: String? = nil, providerID: String? = nil, details: [String: String] = [:]) {
        self.type = type
        self.appID = appID
        self.providerID = providerID
        self.details = details
    }
}

/// Lockouts and rate limits on counters the broker keeps, so they hold on every node and across
/// restarts: guesses counted before they are evaluated, locks that grow (and may become permanent),
/// every lock audited and counted in the metrics. A plugin gets one under its instance id
/// (`PluginEnvironment.lockouts`, keys like `email:address:alice@example.com`). Administrators see
/// and lift the locks with `gatehouse lockouts` or `/admin/v1/lockouts`. Most plugins need one call:
/// `guess`, which does a factor's whole bookkeeping around checking an answer.
public struct LockoutBook: Sendable {
    /// The prefix of every key; nil for the engine's own keys.
    public let namespace: String?
    private let backend: any LockoutBackend

    /// A book keeping counters under `namespace` (the instance id) with the broker's `backend`.
    package init(namespace: String?, backend: any LockoutBackend) {
        self.namespace = namespace
        self.backend = backend
    }

    /// The full counter key of a local key, as administrators see it.
    public func key(_ local: String) -> String { namespace.map { "\($0):\(local)" } ?? local }

    /// The audit event of this book's locks: `lockout.applied` of its namespace, with `details`.
    package func event(details: [String: String] = [:]) -> LockoutAudit {
        LockoutAudit(type: "lockout.applied", providerID: namespace, details: details)
    }

    /// Refuses with `locked_out` (`lockedUntil`, or `permanent`) when the key is locked.
    public func refuseIfLocked(_ local: String, what: String) async throws {
        try await backend.refuseIfLocked(key(local), what: what)
    }

    /// Before a guess is evaluated: refuses a locked key, and counts the guess as a failure in advance
    /// (so parallel guesses cannot slip past the limit). Follow with `recordFailure` or `recordSuccess`
    /// (or use `guess`, which does all of it). A lock made now is audited as `lockout.applied` of this
    /// namespace, with `auditDetails`.
    public func reserve(_ local: String, rule: LockoutRule, what: String, auditDetails: [String: String] = [:]) async throws {
        try await backend.reserve(key(local), rule: rule, what: what, event: event(details: auditDetails))
    }

    /// After a wrong guess (already counted by `reserve`): locks the key when it reached the limit and
    /// returns the `locked_out` error to answer with instead of the plain refusal.
    public func recordFailure(_ local: String, rule: LockoutRule, what: String, auditDetails: [String: String] = [:]) async throws -> BrokerError? {
        try await backend.recordFailure(key(local), rule: rule, what: what, event: event(details: auditDetails))
    }

    /// `reserve` and `recordFailure` with an audit event of the broker's own (an account's lock).
    package func reserve(_ local: String, rule: LockoutRule, what: String, event: LockoutAudit) async throws {
        try await backend.reserve(key(local), rule: rule, what: what, event: event)
    }

    package func recordFailure(_ local: String, rule: LockoutRule, what: String, event: LockoutAudit) async throws -> BrokerError? {
        try await backend.recordFailure(key(local), rule: rule, what: what, event: event)
    }

    /// A right answer: the key's failures are forgotten (its lockout history stays).
    public func recordSuccess(_ local: String) async throws {
        try await backend.recordSuccess(key(local))
    }

    /// Lifts the key's lock, and forgets its history, when an administrator resets what it guarded
    /// (a second factor set up anew); false when it was not locked. The caller audits the reset.
    @discardableResult
    public func unlock(_ local: String) async throws -> Bool {
        try await backend.unlock(key(local))
    }

    /// Gives back a reserved guess that was not evaluated.
    public func release(_ local: String) async throws {
        try await backend.release(key(local))
    }

    /// Counts one event (a code sent) in a fixed window; refuses with `rate_limited` and `retryAfter`
    /// once more than `limit` happened in it.
    public func limitRate(_ local: String, limit: Int, window: Seconds, message: String) async throws {
        try await backend.limitRate(key(local), limit: limit, window: window, message: message)
    }
}

/// The broker's side of a `LockoutBook`: counters in its store, audit and metrics. Package access:
/// the broker implements it; keys arrive in full (namespace included).
package protocol LockoutBackend: Sendable {
    func refuseIfLocked(_ key: String, what: String) async throws
    func reserve(_ key: String, rule: LockoutRule, what: String, event: LockoutAudit) async throws
    func recordFailure(_ key: String, rule: LockoutRule, what: String, event: LockoutAudit) async throws -> BrokerError?
    func recordSuccess(_ key: String) async throws
    func unlock(_ key: String) async throws -> Bool
    func release(_ key: String) async throws
    func limitRate(_ key: String, limit: Int, window: Seconds, message: String) async throws
}
