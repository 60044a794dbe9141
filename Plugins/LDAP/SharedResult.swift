import Foundation
import Synchronization

/// One result of an expensive check, computed by one caller at a time and shared by every caller for
/// `lifetime` seconds.
final class SharedResult<Value: Sendable>: Sendable {
    private let lifetime: TimeInterval
    private let current = Mutex<(made: Date, task: Task<Value, Never>)?>(nil)

    init(lifetime: TimeInterval) {
        self.lifetime = lifetime
    }

    func value(_ make: @escaping @Sendable () async -> Value) async -> Value {
        let task = current.withLock { current -> Task<Value, Never> in
            if let current, Date().timeIntervalSince(current.made) < lifetime { return current.task }
            let task = Task { await make() }
            current = (Date(), task)
            return task
        }
        return await task.value
    }
}
