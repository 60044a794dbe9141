import Foundation

/// Lockouts and rate limits, kept in the store so they hold on every node: wrong answers per account
/// (locked for a growing time), wrong answers per client IP, and flow starts per client IP.
public struct AttemptGuard: Sendable {
    public let store: any AttemptCounterStore
    public let audit: any AuditStore
    public let clock: any BrokerClock
    public let metrics: BrokerMetrics
    /// The locks of accounts (keys `account:...`, `factor:...`), kept like plugins' locks.
    let accounts: LockoutBook

    public init(store: any AttemptCounterStore, audit: any AuditStore, clock: any BrokerClock, metrics: BrokerMetrics) {
        self.store = store
        self.audit = audit
        self.clock = clock
        self.metrics = metrics
        self.accounts = LockoutBook(namespace: nil, store: store, audit: audit, clock: clock, metrics: metrics)
    }

    /// The counter key of the account an answer tries: while identifying, the answer field the
    /// challenge names at that provider; for a second factor, the flow's account at that authenticator.
    public static func accountKey(flow: FlowRecord, answer: ChallengeResponse) -> String? {
        switch flow.phase {
        case .identify:
            guard let field = flow.challenge.accountField, let value = answer.values[field]?.stringValue else { return nil }
            let normalized = value.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            return normalized.isEmpty ? nil : "account:\(flow.providerID):\(normalized)"
        case .factor(let authenticatorID, _):
            return flow.accountID.map { "factor:\(authenticatorID):\($0)" }
        case .chooseProvider, .confirmProfile, .consent, .recovery:
            return nil
        }
    }

    /// Refuses a flow start from an address that is blocked or starts too many flows. Starts without
    /// a known address (a caller that hides it, or a transport without one) share one bucket: they
    /// are limited together, never skipped.
    public func checkStart(clientIP: String?, policy: LockoutPolicy) async throws {
        if let ip = clientIP { try await refuseIfBlocked(ip: ip) }
        if let refusal = try await store.perMinuteRefusal(
            "starts", clientIP: clientIP, limit: policy.maxFlowStartsPerIPPerMinute, now: clock.now,
            message: "Too many sign-ins started from this address; wait a moment."
        ) {
            metrics.refused(reason: "flow_start_rate")
            throw refusal
        }
    }

    /// Before any plugin sees an answer: reserves an attempt on the client address and on the account
    /// (refusing a blocked address or a locked account). A reservation counts as a failure until
    /// `recordSuccess` or `release` gives it back, so parallel guesses cannot slip past a limit.
    public func reserve(clientIP: String?, accountKey: String?, policy: LockoutPolicy, appID: String, providerID: String) async throws {
        let now = clock.now
        let window = policy.failureWindow.timeInterval
        if let ip = clientIP.map(FailedAuthenticationLimit.addressBucket) {
            switch try await store.reserveAttempt(key: "ip:\(ip)", now: now, window: window, threshold: policy.maxFailedAttemptsPerIP, lockDuration: { _ in window }) {
            case .allowed:
                break
            case .locked(let until):
                metrics.refused(reason: ErrorCode.rateLimited.rawValue)
                throw Self.addressBlocked(until: until, now: now)
            case .lockedNow(let until):
                metrics.lockout(scope: "ip")
                try await audit.appendAudit(
                    AuditEvent(
                        time: now, type: "ip.blocked", appID: appID, providerID: providerID, outcome: ErrorCode.rateLimited.rawValue,
                        details: ["clientIP": ip, "until": ISO8601DateFormatter().string(from: until)])
                )
                throw Self.addressBlocked(until: until, now: now)
            }
        }
        guard let accountKey else { return }
        do {
            try await accounts.reserve(
                accountKey, rule: policy.accountRule, what: "This account",
                event: Self.accountLocked(accountKey, clientIP: clientIP, appID: appID, providerID: providerID)
            )
        } catch {
            // A locked account (or a store that failed) gives the address its reservation back.
            try? await release(clientIP: clientIP, accountKey: nil)
            throw error
        }
    }

    /// After a wrong answer (already counted by `reserve`): locks the account when it reached its
    /// limit. Returns the `locked_out` error when it did.
    public func recordFailure(clientIP: String?, accountKey: String?, policy: LockoutPolicy, appID: String, providerID: String) async throws -> BrokerError? {
        guard let accountKey else { return nil }
        return try await accounts.recordFailure(
            accountKey, rule: policy.accountRule, what: "This account", event: Self.accountLocked(accountKey, clientIP: clientIP, appID: appID, providerID: providerID)
        )
    }

    /// Gives back the reservations of an answer that was not a wrong answer (malformed, or the
    /// provider was down).
    public func release(clientIP: String?, accountKey: String?) async throws {
        try await SideBySide.run({ if let accountKey { try await store.releaseAttempt(key: accountKey) } }, beside: { try await releaseAddress(clientIP) })
    }

    /// Gives the address back its reserved attempt.
    private func releaseAddress(_ clientIP: String?) async throws {
        if let ip = clientIP.map(FailedAuthenticationLimit.addressBucket) { try await store.releaseAttempt(key: "ip:\(ip)") }
    }

    /// How an account's lock is audited.
    private static func accountLocked(_ accountKey: String, clientIP: String?, appID: String, providerID: String) -> LockoutAudit {
        var details = ["account": String(accountKey.split(separator: ":", maxSplits: 2).last ?? "")]
        if let clientIP { details["clientIP"] = clientIP }
        return LockoutAudit(type: "account.locked", appID: appID, providerID: providerID, details: details)
    }

    /// A right answer clears the account's failures (the reserved attempt included) and gives the
    /// address back its reserved attempt (only that one: signing in to one's own account must not wipe
    /// an address's record of failures against others).
    public func recordSuccess(clientIP: String?, accountKey: String?) async throws {
        try await SideBySide.run({ if let accountKey { try await store.clearFailures(key: accountKey) } }, beside: { try await releaseAddress(clientIP) })
    }

    static func addressBlocked(until: Date, now: Date) -> BrokerError {
        BrokerError(
            .rateLimited, .tooManyRequests, "Too many failed attempts from this address; try again later.", lockedUntil: until,
            retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up)))
        )
    }

    /// Refuses a flow start from an address that is blocked for too many wrong answers.
    private func refuseIfBlocked(ip: String) async throws {
        let now = clock.now
        guard let counter = try await store.attemptCounter(key: "ip:\(FailedAuthenticationLimit.addressBucket(ip))"), let until = counter.lockedUntil, until > now else {
            return
        }
        metrics.refused(reason: ErrorCode.rateLimited.rawValue)
        throw Self.addressBlocked(until: until, now: now)
    }
}
