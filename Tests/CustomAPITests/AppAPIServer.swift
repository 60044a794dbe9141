import Foundation
import GatehouseTesting
import Testing

/// The stand-in for an app's registration API (Tests/custom-api/app_api.py), started once for the
/// suite on a free loopback port. It records every call it receives in `log`.
final class AppAPIServer: TestPeer {
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
        let pid = try ChildProcess.spawn(
            ["python3", script, "--secret", secret, "--port-file", portFile, "--log", folder.appendingPathComponent("calls.jsonl").path],
            log: folder.appendingPathComponent("server.log").path
        )
        for _ in 0..<100 {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) {
                return AppAPIServer(folder: folder, port: port, pid: pid)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        await ChildProcess.terminate(pid)
        throw ChildProcessError(message: "the app API stand-in did not start: \((try? String(contentsOfFile: folder.appendingPathComponent("server.log").path, encoding: .utf8)) ?? "")")
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

    @TaskLocal static var shared: AppAPIServer?
}

/// Starts the stand-in once for the whole suite and stops it afterwards.
struct SharedAppAPI: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await AppAPIServer.withOwn { server in
            try await AppAPIServer.$shared.withValue(server) { try await function() }
        }
    }
}

extension Trait where Self == SharedAppAPI {
    static var sharedAppAPI: SharedAppAPI { SharedAppAPI() }
}
