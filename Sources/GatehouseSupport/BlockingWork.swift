import Dispatch
import GatehousePluginKit

/// Runs CPU-heavy or blocking calls (password hashing, blocking C libraries) on dispatch threads, so
/// that they never hold up Swift concurrency's cooperative pool or the server's event loops.
public enum BlockingWork {
    private static let queue = DispatchQueue(label: "gatehouse.blocking-work", qos: .userInitiated, attributes: .concurrent)

    /// Runs `body` on a thread of its own, so that a blocking call does not hold up the server's.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
