import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GatehouseCore

/// Runs the helper programs tests need (slapd's script, an app's stand-in API) with posix_spawn and
/// waitpid: Foundation's `Process` sometimes never noticed its child's exit here and waited forever.
/// Blocking calls run through `BlockingWork`, so the tests' own threads keep going.
public enum ChildProcess {
    /// Runs a program to its end; answers its exit status and its output (stdout and stderr).
    public static func run(_ arguments: [String]) async -> (status: Int32, output: String) {
        (try? await BlockingWork.run { runBlocking(arguments) }) ?? (127, "")
    }

    /// Starts a program that keeps running; its output goes to `log`. Stop it with `terminate`.
    public static func spawn(_ arguments: [String], log: String) throws -> pid_t {
        var pid = pid_t()
        let status = withSpawnArguments(arguments, output: log) { path, actions, argv in
            withDefaultSignals { posix_spawnp(&pid, path, &actions, &$0, argv, environ) }
        }
        guard status == 0 else { throw ChildProcessError(message: "cannot start \(arguments.first ?? ""): error \(status)") }
        return pid
    }

    /// Starts a server that writes the port it listens on to `portFile` once it accepts connections,
    /// and waits (up to 10 s) for that. A server that does not get there is stopped; the error carries
    /// its log.
    public static func spawnServer(_ arguments: [String], portFile: String, log: String) async throws -> (pid: pid_t, port: Int) {
        let pid = try spawn(arguments, log: log)
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) { return (pid, port) }
            try await Task.sleep(for: .milliseconds(50))
        }
        await terminate(pid)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        throw ChildProcessError(message: "\(arguments.dropFirst().first ?? arguments.first ?? "the server") did not start: \(output)")
    }

    /// SIGTERM, then SIGKILL if the process is still there after two seconds; waits for its end.
    public static func terminate(_ pid: pid_t) async {
        kill(pid, SIGTERM)
        _ = try? await BlockingWork.run {
            var status: Int32 = 0
            for _ in 0..<40 {
                if waitpid(pid, &status, WNOHANG) != 0 { return }
                usleep(50_000)
            }
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
    }

    private static func runBlocking(_ arguments: [String]) -> (Int32, String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-child-\(UUID().uuidString).log").path
        defer { unlink(output) }
        var pid = pid_t()
        let spawned = withSpawnArguments(arguments, output: output) { path, actions, argv in
            withDefaultSignals { posix_spawnp(&pid, path, &actions, &$0, argv, environ) }
        }
        guard spawned == 0 else { return (127, "cannot run \(arguments.first ?? ""): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        // WIFEXITED / WEXITSTATUS are macros Swift does not import.
        let exitCode = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exitCode, text)
    }

    private static func withSpawnArguments(
        _ arguments: [String], output: String, _ body: (String, inout posix_spawn_file_actions_t, [UnsafeMutablePointer<CChar>?]) -> Int32
    ) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        return body(arguments[0], &actions, argv)
    }

    /// The child starts with no blocked signals and default handlers: it inherits the spawning
    /// thread's mask otherwise (dispatch threads block some), and SIGTERM would never reach it.
    private static func withDefaultSignals(_ body: (inout posix_spawnattr_t) -> Int32) -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return body(&attributes)
    }
}

/// A helper program could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}
