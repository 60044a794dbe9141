import CConcurrencyHook
import NIOCore
import NIOPosix

/// Runs Swift concurrency's tasks on the server's event loops instead of a thread pool of their own,
/// so a request's handler runs on the thread that read it, without two thread hand-overs per
/// request. SwiftNIO does this (`unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`)
/// when it can find the runtime's hook with dlsym; in the release build, whose Swift runtime is
/// linked in statically, it cannot, and the same hook is set here through its linked address, the
/// way NIO sets it (and with NIO's caveat: it relies on the runtime's hook signature).
enum ConcurrencyOnEventLoops {
    /// The runtime's hook: `(job, original) -> Void`, a thin function pointer.
    typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Whether tasks run on the event loops: set by `installOnce`, before the first task.
    nonisolated(unsafe) private(set) static var installed = false

    /// Installs the take-over, from `main` before any task runs (it is not thread-safe).
    static func installOnce() {
        installed = install()
    }

    /// Installs the take-over; false when it could not (another hook is set, or not on Linux).
    private static func install() -> Bool {
        #if os(Linux)
        if NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() { return true }
        let slot = gatehouse_concurrency_enqueue_global_hook()
        guard slot.pointee == nil else { return false }
        let hook: EnqueueGlobalHook = { job, _ in
            // `any()` is the calling thread's own loop when it is one of the group's: no hand-over.
            MultiThreadedEventLoopGroup.singleton.any().executor.enqueue(ExecutorJob(job))
        }
        slot.pointee = unsafeBitCast(hook, to: UnsafeMutableRawPointer.self)
        return true
        #else
        return false
        #endif
    }
}
