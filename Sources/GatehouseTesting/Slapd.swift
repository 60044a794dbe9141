import Foundation

/// A throw-away OpenLDAP server for one test or a whole suite, driven through Tests/ldap/slapd.sh
/// (test CA, seed LDIF from Tests/ldap/seed.ldif, loopback port of its own). The seed's people and
/// the service account `cn=gatehouse,ou=services,dc=example,dc=org` (password `service-secret`) are
/// described in seed.ldif's header.
public final class Slapd: SharedTestPeer {
    public static let suitePeer = TaskLocal<Slapd?>(wrappedValue: nil)

    public let folder: URL
    public let port: Int

    public var url: String { "ldap://127.0.0.1:\(port)" }
    /// The test CA that signs the server's certificate (for StartTLS).
    public var caFile: String { folder.appendingPathComponent("ca.pem").path }

    static let script = SMTPTestServer.repository.appendingPathComponent("Tests/ldap/slapd.sh").path

    private init(folder: URL, port: Int) {
        self.folder = folder
        self.port = port
    }

    /// Starts a new directory on a free port.
    public static func start() async throws -> Slapd {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-slapd-\(UUID().uuidString.prefix(8))")
        var lastError = ""
        for _ in 0..<5 {
            let port = Int.random(in: 20000...45000)
            let (status, output) = await run(["start", folder.path, String(port)])
            if status == 0 { return Slapd(folder: folder, port: port) }
            lastError = output
            // slapd.sh says "in use" for a port taken before the probe or before slapd's bind.
            if !output.contains("in use") { break }
        }
        throw ChildProcessError(message: "could not start slapd: \(lastError)")
    }

    public func stop() async { await Self.run(["stop", folder.path]) }
    /// SIGSTOP: a directory that accepts connections but never answers.
    public func pause() async { await Self.run(["pause", folder.path]) }
    public func resume() async { await Self.run(["resume", folder.path]) }

    /// Starts the stopped directory again on the same port, with its data.
    public func restart() async throws {
        let (status, output) = await Self.run(["start", folder.path, String(port)])
        if status != 0 { throw ChildProcessError(message: "could not restart slapd: \(output)") }
    }

    public func remove() async {
        await stop()
        try? FileManager.default.removeItem(at: folder)
    }

    @discardableResult
    private static func run(_ arguments: [String]) async -> (Int32, String) {
        await ChildProcess.run(["/bin/bash", script] + arguments)
    }
}
