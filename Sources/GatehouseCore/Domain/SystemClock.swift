import Foundation

/// The wall clock.
public struct SystemClock: BrokerClock {
    /// The system's clock.
    public init() {}
    /// The system's time.
    public var now: Date { Date() }
}
