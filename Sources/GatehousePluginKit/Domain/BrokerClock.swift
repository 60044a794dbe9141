import Foundation

/// Where the broker reads the time. Everything time-dependent (flow expiry, token lifetimes, lockouts)
/// reads it from here, so tests can move time instead of waiting.
public protocol BrokerClock: Sendable {
    /// The current time.
    var now: Date { get }
}
