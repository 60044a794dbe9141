import Foundation
import Synchronization

/// At most `limit` holders at once; further callers wait in order, each no longer than its deadline.
/// Plugins that drive a blocking C library (libldap) put it in front of `BlockingWork`, so that the
/// number of threads blocked on an upstream is bounded however many sign-ins arrive.
public final class ConcurrencyLimit: Sendable {
    /// Thrown when a caller's deadline passes before a slot is free.
    public struct Timeout: Error, Sendable {}

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        /// Waiters whose deadline passed before they were queued.
        var expired: Set<UInt64> = []
    }

    public let limit: Int
    private let state: Mutex<State>

    public init(limit: Int) {
        precondition(limit > 0, "a concurrency limit must allow at least one holder")
        self.limit = limit
        self.state = Mutex(State(available: limit))
    }

    /// Runs `body` while holding a slot; waits at most `timeout` seconds for one.
    public func run<T: Sendable>(waitingAtMost timeout: TimeInterval, _ body: () async throws -> T) async throws -> T {
        try await acquire(timeout: timeout)
        defer { release() }
        return try await body()
    }

    private func acquire(timeout: TimeInterval) async throws {
        let immediate = state.withLock { state -> Bool in
            guard state.available > 0 else { return false }
            state.available -= 1
            return true
        }
        if immediate { return }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [weak self] in
            try await Task.sleep(for: .seconds(timeout))
            self?.abandon(id)
        }
        defer {
            timer.cancel()
            // The timer may have fired just after the slot was granted.
            _ = state.withLock { $0.expired.remove(id) }
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Bool, Timeout> in
                if state.expired.remove(id) != nil { return .failure(Timeout()) }
                // A slot may have been freed between the first look and now.
                if state.available > 0 {
                    state.available -= 1
                    return .success(true)
                }
                state.waiters.append(Waiter(id: id, continuation: continuation))
                return .success(false)
            }
            switch outcome {
            case .success(true): continuation.resume()
            case .success(false): break
            case .failure(let timeout): continuation.resume(throwing: timeout)
            }
        }
    }

    private func abandon(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                state.expired.insert(id)
                return nil
            }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: Timeout())
    }

    private func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            // The slot passes straight to the longest waiter.
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }
}
