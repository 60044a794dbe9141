import Foundation

/// Lockouts and rate limits, kept in the store so they hold on every node: wrong answers per account
/// (locked for a growing time), wrong answers per client IP, and flow starts per client IP.
public struct AttemptGuard: Sendable {
    public let store: any AttemptCounterStore
    public let audit: any AuditStore
    public let clock: any BrokerClock
    public let metrics: BrokerMetrics

    public init(store: any AttemptCounterStore, audit: any AuditStore, clock: any BrokerClock, metrics: BrokerMetrics) {
        self.store = store
        self.audit = audit
        self.clock = clock
        self.metrics = metrics
    }

    /// The counter key of an account at a provider, from the answer field the challenge names.
    public static func accountKey(providerID: String, challenge: Challenge, answer: ChallengeResponse) -> String? {
        guard let field = challenge.accountField, let value = answer.values[field]?.stringValue else { return nil }
        let normalized = value.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return normalized.isEmpty ? nil : "account:\(providerID):\(normalized)"
    }

    /// Refuses a flow start from an address that is blocked or starts too many flows.
    public func checkStart(clientIP: String?, policy: LockoutPolicy) async throws {
        guard let ip = clientIP else { return }
        try await refuseIfLocked(key: "ip:\(ip)", code: .rateLimited)
        let (count, windowEnds) = try await store.countEvent(key: "starts:\(ip)", now: clock.now, window: 60)
        if count > policy.maxFlowStartsPerIPPerMinute {
            metrics.refused(reason: "flow_start_rate")
            throw BrokerError(
                .rateLimited, .tooManyRequests, "Too many sign-ins started from this address; wait a moment.",
                retryAfter: max(1, Int(windowEnds.timeIntervalSince(clock.now).rounded(.up)))
            )
        }
    }

    /// Refuses an answer for a locked account or from a blocked address, before any plugin sees it.
    public func checkAnswer(clientIP: String?, accountKey: String?) async throws {
        if let ip = clientIP { try await refuseIfLocked(key: "ip:\(ip)", code: .rateLimited) }
        if let accountKey { try await refuseIfLocked(key: accountKey, code: .lockedOut) }
    }

    /// Counts a wrong answer. Returns the `locked_out` error when this one locked the account.
    public func recordFailure(clientIP: String?, accountKey: String?, policy: LockoutPolicy, appID: String, providerID: String) async throws -> BrokerError? {
        let now = clock.now
        let window = policy.failureWindow.timeInterval
        if let ip = clientIP {
            let counter = try await store.recordFailure(key: "ip:\(ip)", now: now, window: window, threshold: policy.maxFailedAttemptsPerIP) { _ in window }
            if counter.failures == 0, let until = counter.lockedUntil, until > now {
                metrics.lockout(scope: "ip")
                try await audit.appendAudit(
                    AuditEvent(time: now, type: "ip.blocked", appID: appID, providerID: providerID, outcome: ErrorCode.rateLimited.rawValue,
                               details: ["clientIP": ip, "until": ISO8601DateFormatter().string(from: until)])
                )
            }
        }
        guard let accountKey else { return nil }
        let counter = try await store.recordFailure(
            key: accountKey, now: now, window: window, threshold: policy.maxFailedAttemptsPerAccount, lockDuration: policy.lockDuration(afterLockouts:)
        )
        guard counter.failures == 0, let until = counter.lockedUntil, until > now else { return nil }
        metrics.lockout(scope: "account")
        try await audit.appendAudit(
            AuditEvent(
                time: now, type: "account.locked", appID: appID, providerID: providerID, outcome: ErrorCode.lockedOut.rawValue,
                details: ["account": String(accountKey.dropFirst("account:\(providerID):".count)), "until": ISO8601DateFormatter().string(from: until),
                          "lockouts": String(counter.lockouts)].merging(clientIP.map { ["clientIP": $0] } ?? [:]) { first, _ in first }
            )
        )
        return Self.lockedOut(until: until, now: now)
    }

    /// A right answer clears the account's failures.
    public func recordSuccess(accountKey: String?) async throws {
        if let accountKey { try await store.clearFailures(key: accountKey) }
    }

    private func refuseIfLocked(key: String, code: ErrorCode) async throws {
        let now = clock.now
        guard let counter = try await store.attemptCounter(key: key), let until = counter.lockedUntil, until > now else { return }
        metrics.refused(reason: code.rawValue)
        if code == .lockedOut { throw Self.lockedOut(until: until, now: now) }
        throw BrokerError(
            code, .tooManyRequests, "Too many failed attempts from this address; try again later.", lockedUntil: until,
            retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up)))
        )
    }

    static func lockedOut(until: Date, now: Date) -> BrokerError {
        BrokerError(
            .lockedOut, .tooManyRequests, "Too many failed attempts for this account; try again later.", lockedUntil: until,
            retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up)))
        )
    }
}
