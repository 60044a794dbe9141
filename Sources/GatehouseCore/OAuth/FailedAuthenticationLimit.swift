import Foundation

/// Failed authentications at the doors a guesser or a flooder would knock on: client secrets at the
/// token, introspection and revocation endpoints, refused JWT bearer assertions (an RSA verification
/// each), and admin bearer tokens. Each failure is counted in the store (so the count holds on every
/// node and across restarts) per client address and, where one is named, per client id, in a fixed
/// window (`lockout.failureWindow`). A key over its limit is refused before anything is verified,
/// with `429 rate_limited` and `Retry-After`, until its window ends.
public struct FailedAuthenticationLimit: Sendable {
    /// Which door: keys of different doors never share a count.
    public enum Door: String, Sendable {
        case client, admin
    }

    let store: any AttemptCounterStore
    let clock: any BrokerClock
    let metrics: BrokerMetrics

    public init(store: any AttemptCounterStore, clock: any BrokerClock, metrics: BrokerMetrics = BrokerMetrics()) {
        self.store = store
        self.clock = clock
        self.metrics = metrics
    }

    /// The bucket of requests without a known address: limited together, never skipped.
    static let unknownAddress = "unknown"

    /// The counter keys of a request, with the limit of each.
    func keys(_ door: Door, clientIP: String?, clientID: String?, policy: LockoutPolicy) -> [(key: String, limit: Int)] {
        var keys = [("auth:\(door.rawValue):ip:\(clientIP ?? Self.unknownAddress)", policy.maxFailedAuthenticationsPerIP)]
        if let clientID, !clientID.isEmpty { keys.append(("auth:\(door.rawValue):client:\(clientID)", policy.maxFailedAuthenticationsPerClient)) }
        return keys
    }

    /// Refuses with `rate_limited` while the address or the client id is over its limit.
    public func refuseIfOverLimit(_ door: Door, clientIP: String?, clientID: String?, policy: LockoutPolicy) async throws {
        let now = clock.now
        let window = policy.failureWindow.timeInterval
        for (key, limit) in keys(door, clientIP: clientIP, clientID: clientID, policy: policy) {
            guard let counter = try await store.attemptCounter(key: key), counter.failures >= limit else { continue }
            let windowEnds = counter.windowStart.addingTimeInterval(window)
            guard windowEnds > now else { continue }
            metrics.refused(reason: "\(door.rawValue)_authentication_rate")
            throw BrokerError(
                .rateLimited, .tooManyRequests, "Too many failed authentications; try again later.",
                retryAfter: max(1, Int(windowEnds.timeIntervalSince(now).rounded(.up)))
            )
        }
    }

    /// Counts one failure against the address and the client id.
    public func recordFailure(_ door: Door, clientIP: String?, clientID: String?, policy: LockoutPolicy) async throws {
        for (key, _) in keys(door, clientIP: clientIP, clientID: clientID, policy: policy) {
            _ = try await store.countEvent(key: key, now: clock.now, window: policy.failureWindow.timeInterval)
        }
    }
}
