import Foundation
import Synchronization
import GatehousePluginKit

/// One result of an expensive check, computed by one caller at a time and shared by every caller: a
/// check in progress is joined, not started again, and a finished one is reused for `lifetime`
/// seconds after it finished (so a check that stalls never has a second one started beside it).
/// Plugins use it for the health checks `/readyz` polls.
public final class SharedResult<Value: Sendable>: Sendable {
    private enum State {
        case running(Task<Value, Never>)
        case done(Value, at: Date)
    }

    private enum Next {
        case ready(Value)
        case join(Task<Value, Never>)
    }

    private let lifetime: TimeInterval
    private let state = Mutex<State?>(nil)

    /// Results are shared for `lifetime` seconds after they were made.
    public init(lifetime: TimeInterval) {
        self.lifetime = lifetime
    }

    /// The shared result, or a new one made with `make` (callers meanwhile wait for it).
    public func value(_ make: @escaping @Sendable () async -> Value) async -> Value {
        let next = state.withLock { state -> Next in
            switch state {
            case .running(let task)?:
                return .join(task)
            case .done(let value, let at)? where Date().timeIntervalSince(at) < lifetime:
                return .ready(value)
            default:
                let task = Task {
                    let value = await make()
                    self.state.withLock { $0 = .done(value, at: Date()) }
                    return value
                }
                state = .running(task)
                return .join(task)
            }
        }
        switch next {
        case .ready(let value): return value
        case .join(let task): return await task.value
        }
    }
}
