import Foundation
import GatehouseTesting
import Testing

/// The stand-in for an app's registration API (Tests/custom-api/app_api.py), started once for the
/// suite on a free loopback port. It records every call it receives in `log`.
final class AppAPIServer: SharedTestPeer {
    static let secret = "app-api-secret-0123456789-abcdefghij"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("custom-api/app_api.py").path

    let folder: URL
    let port: Int
    let pid: pid_t

    var url: String { "http://127.0.0.1:\(port)/gatehouse/register" }
    var log: String { folder.appendingPathComponent("calls.jsonl").path }

    private init(folder: URL, port: Int, pid: pid_t) {
        self.folder = folder
        self.port = port
        self.pid = pid
    }

    static func start() async throws -> AppAPIServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-app-api-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let portFile = folder.appendingPathComponent("port").path
        let (pid, port) = try await ChildProcess.spawnServer(
            ["python3", script, "--secret", secret, "--port-file", portFile, "--log", folder.appendingPathComponent("calls.jsonl").path],
            portFile: portFile, log: folder.appendingPathComponent("server.log").path
        )
        return AppAPIServer(folder: folder, port: port, pid: pid)
    }

    func remove() async {
        await ChildProcess.terminate(pid)
        try? FileManager.default.removeItem(at: folder)
    }

    /// The calls received so far: headers and the raw body.
    func calls() throws -> [(headers: [String: String], body: String, problem: String?)] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            return (object["headers"] as? [String: String] ?? [:], object["body"] as? String ?? "", object["problem"] as? String)
        }
    }

    static let suitePeer = TaskLocal<AppAPIServer?>(wrappedValue: nil)
}
