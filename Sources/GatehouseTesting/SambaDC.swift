import Foundation

/// A throw-away Samba Active Directory domain controller (domain GATEHOUSE.TEST) for one test or a
/// whole suite, driven through Tests/samba/samba-dc.sh on a loopback address of its own (AD's ports
/// are fixed). Its people and groups are described in the script's header.
public final class SambaDC: SharedTestPeer {
    public static let suitePeer = TaskLocal<SambaDC?>(wrappedValue: nil)

    public let folder: URL
    /// The DC's own loopback address.
    public let address: String

    /// LDAPS (636).
    public var ldapsURL: String { "ldaps://\(address)" }
    /// Plain LDAP (389), for StartTLS: AD refuses a simple bind without encryption.
    public var ldapURL: String { "ldap://\(address)" }
    /// The test CA that signs the DC's certificate.
    public var caFile: String { folder.appendingPathComponent("ca.pem").path }

    static let script = SMTPTestServer.repository.appendingPathComponent("Tests/samba/samba-dc.sh").path

    private init(folder: URL, address: String) {
        self.folder = folder
        self.address = address
    }

    /// Provisions a new domain and starts its DC on a free loopback address.
    public static func start() async throws -> SambaDC {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-samba-\(UUID().uuidString.prefix(8))")
        var lastError = ""
        for _ in 0..<3 {
            let address = "127.77.\(Int.random(in: 0...255)).\(Int.random(in: 2...254))"
            let (status, output) = await ChildProcess.run(["/bin/bash", script, "start", folder.path, address])
            if status == 0 { return SambaDC(folder: folder, address: address) }
            lastError = output
            _ = await ChildProcess.run(["/bin/bash", script, "stop", folder.path])
            try? FileManager.default.removeItem(at: folder)
            // Another run's address, or a DC that quit silently while starting (seen once under the
            // unit stage's load): a new domain on a new address. Anything else is not retried.
            if !output.contains("in use") && !output.contains("exited during start") { break }
        }
        throw ChildProcessError(message: "could not start the Samba AD DC: \(lastError)")
    }

    /// Runs `samba-tool` on the running DC's database, e.g. `["user", "disable", "oscar"]`, and
    /// answers with what it printed.
    @discardableResult
    public func tool(_ arguments: [String]) async throws -> String {
        let (status, output) = await ChildProcess.run(["/bin/bash", Self.script, "tool", folder.path] + arguments)
        if status != 0 { throw ChildProcessError(message: "samba-tool \(arguments.joined(separator: " ")) failed: \(output)") }
        return output
    }

    public func remove() async {
        _ = await ChildProcess.run(["/bin/bash", Self.script, "stop", folder.path])
        try? FileManager.default.removeItem(at: folder)
    }
}
