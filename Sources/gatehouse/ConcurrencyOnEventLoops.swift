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
        #if os(Linux) && compiler(<6.6)
        // Below 6.6 NIO trusts the hook's signature; from 6.6 on it refuses the take-over, and so
        // does this (the #if), as the runtime's hook may differ there.
        if NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() { return true }
        let hook: EnqueueGlobalHook = { job, _ in
            // `any()` is the calling thread's own loop when it is one of the group's: no hand-over.
            MultiThreadedEventLoopGroup.singleton.any().executor.enqueue(ExecutorJob(job))
        }
        return gatehouse_concurrency_install_enqueue_global_hook(unsafeBitCast(hook, to: UnsafeMutableRawPointer.self))
        #else
        return false
        #endif
    }
}
