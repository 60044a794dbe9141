import Foundation
import GatehouseTesting
import Testing

/// A throw-away OpenLDAP server for one test or the whole suite, driven through Tests/ldap/slapd.sh
/// (test CA, seed LDIF from Tests/ldap/seed.ldif, loopback port of its own).
final class Slapd: SharedTestPeer {
    let folder: URL
    let port: Int

    var url: String { "ldap://127.0.0.1:\(port)" }
    var caFile: String { folder.appendingPathComponent("ca.pem").path }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("ldap/slapd.sh").path

    private init(folder: URL, port: Int) {
        self.folder = folder
        self.port = port
    }

    /// Starts a new directory on a free port.
    static func start() async throws -> Slapd {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-slapd-\(UUID().uuidString.prefix(8))")
        var lastError = ""
        for _ in 0..<5 {
            let port = Int.random(in: 20000...45000)
            let (status, output) = await run(["start", folder.path, String(port)])
            if status == 0 { return Slapd(folder: folder, port: port) }
            lastError = output
            if !output.contains("in use") { break }
        }
        throw ChildProcessError(message: "could not start slapd: \(lastError)")
    }

    func stop() async { await Self.run(["stop", folder.path]) }
    func pause() async { await Self.run(["pause", folder.path]) }
    func resume() async { await Self.run(["resume", folder.path]) }

    /// Starts the stopped directory again on the same port, with its data.
    func restart() async throws {
        let (status, output) = await Self.run(["start", folder.path, String(port)])
        if status != 0 { throw ChildProcessError(message: "could not restart slapd: \(output)") }
    }

    func remove() async {
        await stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs the script and waits for it. posix_spawn and waitpid directly: Foundation's `Process`
    /// sometimes never notices its child's exit on Linux and waits forever.
    @discardableResult
    private static func run(_ arguments: [String]) async -> (Int32, String) {
        await ChildProcess.run(["/bin/bash", script] + arguments)
    }

    static let suitePeer = TaskLocal<Slapd?>(wrappedValue: nil)
}
