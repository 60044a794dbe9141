import Foundation

/// Where the broker reads the time. Everything time-dependent (flow expiry, token lifetimes, lockouts)
/// reads it from here, so tests can move time instead of waiting.
public protocol BrokerClock: Sendable {
    var now: Date { get }
}

/// The wall clock.
public struct SystemClock: BrokerClock {
    public init() {}
    public var now: Date { Date() }
}
