import Foundation
import GatehousePluginKit

/// The broker's lockout bookkeeping behind every `LockoutBook`: attempt counters in the store (so
/// they hold on every node), each lock audited and counted in the metrics.
struct CounterLockouts: LockoutBackend {
    /// The metrics scope of its locks: the plugin instance, or `account` for the engine's own.
    let scope: String
    let providerID: String?
    let store: any AttemptCounterStore
    let audit: any AuditStore
    let clock: any BrokerClock
    let metrics: BrokerMetrics

    func refuseIfLocked(_ key: String, what: String) async throws {
        let now = clock.now
        guard let until = try await store.attemptCounter(key: key)?.lockedUntil, until > now else { return }
        metrics.refused(reason: ErrorCode.lockedOut.rawValue)
        throw BrokerError.lockedOut(what, until: until, now: now)
    }

    func reserve(_ key: String, rule: LockoutRule, what: String, event: LockoutAudit) async throws {
        let now = clock.now
        switch try await store.reserveAttempt(
            key: key, now: now, window: rule.failureWindow.timeInterval, threshold: rule.maxFailures, lockDuration: rule.lockDuration(afterLockouts:)
        ) {
        case .allowed:
            return
        case .locked(let until):
            metrics.refused(reason: ErrorCode.lockedOut.rawValue)
            throw BrokerError.lockedOut(what, until: until, now: now)
        case .lockedNow(let until):
            try await locked(key, until: until, event: event)
            throw BrokerError.lockedOut(what, until: until, now: now)
        }
    }

    func recordFailure(_ key: String, rule: LockoutRule, what: String, event: LockoutAudit) async throws -> BrokerError? {
        let now = clock.now
        guard let until = try await store.lockIfDue(key: key, now: now, threshold: rule.maxFailures, lockDuration: rule.lockDuration(afterLockouts:)) else {
            return nil
        }
        try await locked(key, until: until, event: event)
        return BrokerError.lockedOut(what, until: until, now: now)
    }

    func recordSuccess(_ key: String) async throws { try await store.clearFailures(key: key) }

    func unlock(_ key: String) async throws -> Bool { try await store.unlock(key: key) }

    func release(_ key: String) async throws { try await store.releaseAttempt(key: key) }

    func limitRate(_ key: String, limit: Int, window: Seconds, message: String) async throws {
        let now = clock.now
        let (count, windowEnds) = try await store.countEvent(key: key, now: now, window: window.timeInterval)
        guard count > limit else { return }
        metrics.refused(reason: ErrorCode.rateLimited.rawValue)
        throw BrokerError(.rateLimited, .tooManyRequests, message, retryAfter: max(1, Int(windowEnds.timeIntervalSince(now).rounded(.up))))
    }

    private func locked(_ key: String, until: Date, event: LockoutAudit) async throws {
        metrics.lockout(scope: scope)
        var event = event
        event.details["key"] = key
        if until >= LockoutRule.permanentThreshold {
            event.details["permanent"] = "true"
        } else {
            event.details["until"] = ISO8601DateFormatter().string(from: until)
        }
        if let lockouts = try await store.attemptCounter(key: key)?.lockouts { event.details["lockouts"] = String(lockouts) }
        try await audit.appendAudit(
            AuditEvent(time: clock.now, type: event.type, appID: event.appID, providerID: event.providerID, outcome: ErrorCode.lockedOut.rawValue, details: event.details)
        )
    }
}

extension LockoutBook {
    /// A book keeping counters under `namespace` (a plugin instance's id; nil for the engine's own
    /// keys) in the broker's store.
    public init(namespace: String?, store: any AttemptCounterStore, audit: any AuditStore, clock: any BrokerClock, metrics: BrokerMetrics = BrokerMetrics()) {
        self.init(
            namespace: namespace,
            backend: CounterLockouts(scope: namespace ?? "account", providerID: namespace, store: store, audit: audit, clock: clock, metrics: metrics)
        )
    }
}
