import Foundation
import Synchronization
import GatehousePluginKit

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
    }

    /// How many may hold it at once.
    public let limit: Int
    private let state: Mutex<State>

    /// A limit of `limit` holders (at least one).
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

    /// Takes a free slot, or queues for the next one to be released; the deadline's timer starts only
    /// once the caller is queued, so a timer that finds no waiter means the slot was already granted.
    private func acquire(timeout: TimeInterval) async throws {
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let queued = state.withLock { state -> UInt64? in
                if state.available > 0 {
                    state.available -= 1
                    return nil
                }
                state.nextID += 1
                state.waiters.append(Waiter(id: state.nextID, continuation: continuation))
                return state.nextID
            }
            guard let id = queued else { return continuation.resume() }
            timer = Task { [weak self] in
                try? await Task.sleep(for: .seconds(timeout))
                if !Task.isCancelled { self?.abandon(id) }
            }
        }
    }

    private func abandon(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) }
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
