import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Failed authentications at the doors a guesser or a flooder would knock on: client secrets at the
/// token, introspection and revocation endpoints, the flow and provisional-identity APIs, refused JWT
/// bearer assertions (an RSA verification each), and admin bearer tokens. Each failure is counted in
/// the store (so the count holds on every node and across restarts) per client address (IPv6 by its
/// /64, which one host usually holds whole) and, where one is named, per client id, in a fixed window
/// (`lockout.failureWindow`).
///
/// An address over its limit is refused before anything is verified, with `429 rate_limited` and
/// `Retry-After`, until its window ends. A client id over its limit answers its *failures* with 429,
/// but a right secret still passes: client ids are public, and anyone could otherwise lock an app out.
/// The checks read before and count after, so a burst of parallel requests can exceed a limit by at
/// most the number of requests in flight.
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

    func addressKey(_ door: Door, _ clientIP: String?) -> String { "auth:\(door.rawValue):ip:\(clientIP.map(Self.addressBucket) ?? Self.unknownAddress)" }
    func clientKey(_ door: Door, _ clientID: String) -> String { "auth:\(door.rawValue):client:\(clientID)" }

    /// An IPv4 address as it is (an IPv4-mapped IPv6 address as its IPv4 address); an IPv6 address
    /// by its /64 prefix (`2001:db8:1:2::/64`), so that a host cannot start a fresh count from each of
    /// its addresses. Brackets and a port (`[::1]:443`, `203.0.113.9:80`, as some proxies write
    /// them) are dropped first.
    public static func addressBucket(_ ip: String) -> String {
        var address = ip.trimmingCharacters(in: .whitespaces)
        if address.hasPrefix("["), let end = address.firstIndex(of: "]") {
            address = String(address[address.index(after: address.startIndex)..<end])
        } else if address.filter({ $0 == ":" }).count == 1, let colon = address.firstIndex(of: ":") {
            address = String(address[..<colon])
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return address }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// Whether an error is a refused credential (what the limits count); anything else (a store
    /// that failed, a provider that is down, a cancelled request) passes through uncounted.
    static func isRefusedCredential(_ error: any Error) -> Bool {
        guard let error = error as? BrokerError else { return false }
        return [ErrorCode.invalidClient, .invalidGrant, .invalidToken].contains(error.code)
    }

    /// Runs `verify` (a credential check) under the limits; see the type's description.
    public func guarded<T>(_ door: Door, clientIP: String?, clientID: String?, policy: LockoutPolicy, _ verify: () async throws -> T) async throws -> T {
        let now = clock.now
        let window = policy.failureWindow.timeInterval
        if let refusal = try await overLimit(addressKey(door, clientIP), limit: policy.maxFailedAuthenticationsPerIP, window: window, now: now) {
            metrics.refused(reason: "\(door.rawValue)_authentication_rate")
            throw refusal
        }
        do {
            return try await verify()
        } catch  where Self.isRefusedCredential(error) {
            _ = try await store.countEvent(key: addressKey(door, clientIP), now: now, window: window)
            guard let clientID, !clientID.isEmpty else { throw error }
            let (count, windowEnds) = try await store.countEvent(key: clientKey(door, clientID), now: now, window: window)
            if count > policy.maxFailedAuthenticationsPerClient {
                metrics.refused(reason: "\(door.rawValue)_authentication_rate")
                throw Self.refusal(until: windowEnds, now: now)
            }
            throw error
        }
    }

    /// The refusal while `key` has `limit` failures in its current window; nil otherwise.
    func overLimit(_ key: String, limit: Int, window: TimeInterval, now: Date) async throws -> BrokerError? {
        guard let counter = try await store.attemptCounter(key: key), counter.failures >= limit else { return nil }
        let windowEnds = counter.windowStart.addingTimeInterval(window)
        return windowEnds > now ? Self.refusal(until: windowEnds, now: now) : nil
    }

    static func refusal(until windowEnds: Date, now: Date) -> BrokerError {
        BrokerError(
            .rateLimited, .tooManyRequests, "Too many failed authentications; try again later.", retryAfter: max(1, Int(windowEnds.timeIntervalSince(now).rounded(.up))))
    }
}
