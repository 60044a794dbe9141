import Foundation

extension AttemptCounterStore {
    /// Counts one request of `kind` from the address (IPv6 by its /64; requests without a known
    /// address share one bucket) in a fixed one-minute window, and answers the refusal — `429
    /// rate_limited` with `Retry-After` until the window ends — once the address passed `limit`
    /// in it; nil while it is within. Flow starts, device codes and pushed requests are limited so,
    /// each under its own `kind`.
    func perMinuteRefusal(_ kind: String, clientIP: String?, limit: Int, now: Date, message: String) async throws -> BrokerError? {
        let bucket = clientIP.map(FailedAuthenticationLimit.addressBucket) ?? FailedAuthenticationLimit.unknownAddress
        let (count, windowEnds) = try await countEvent(key: "\(kind):\(bucket)", now: now, window: 60)
        guard count > limit else { return nil }
        return BrokerError(.rateLimited, .tooManyRequests, message, retryAfter: max(1, Int(windowEnds.timeIntervalSince(now).rounded(.up))))
    }
}
