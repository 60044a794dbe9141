import Foundation
import GatehouseCore
import Synchronization

/// A clock tests set and move by hand: expiry and lifetimes are tested without waiting.
public final class TestClock: BrokerClock {
    private let current: Mutex<Date>

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.current = Mutex(start)
    }

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
