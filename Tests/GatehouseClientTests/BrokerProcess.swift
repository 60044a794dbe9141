import Foundation
import GatehouseClient
import GatehouseTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `gatehouse serve` process for the SDK's tests, on a free loopback port with its own
/// directory and SQLite database, stopped by `stop()`.
final class BrokerProcess: Sendable {
    static let adminToken = "sdk-admin-token-0123456789-abcdefghij"

    let folder: URL
    let port: Int
    let pid: pid_t
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(folder: URL, port: Int, pid: pid_t) {
        self.folder = folder
        self.port = port
        self.pid = pid
    }

    /// The repository's root, from this file's place in it.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The binary `swift build` made next to the test bundle (the same configuration).
    static func binary(_ name: String) -> String {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        let candidates = [
            runner.deletingLastPathComponent(), runner.deletingLastPathComponent().deletingLastPathComponent(), Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(), repository.appendingPathComponent(".build/debug"),
        ].map { $0.appendingPathComponent(name).path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }

    /// Free loopback ports from the test suites' shared picker (Tests/lib/free_port.py).
    static func freePorts(_ count: Int) async throws -> [Int] {
        let picked = await ChildProcess.run(["python3", repository.appendingPathComponent("Tests/lib/free_port.py").path, String(count)])
        let ports = picked.output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard picked.status == 0, ports.count == count else { throw ChildProcessError(message: "free_port.py: \(picked.output)") }
        return ports
    }

    /// Starts a broker with `config` (YAML without `server:`, which is added) on `port` (a free one
    /// when nil) and waits until it answers `/healthz`.
    static func start(_ config: String, port: Int? = nil, environment: [String: String] = [:]) async throws -> BrokerProcess {
        let port = try await { if let port { port } else { try await freePorts(1)[0] } }()
        return try await start(complete: "environment: development\nserver:\n  listen: 127.0.0.1:\(port)\n" + config, port: port, environment: environment)
    }

    /// Starts a broker with the repository's default config (what `make run` serves) on a free port.
    static func startDefault() async throws -> BrokerProcess {
        let port = try await freePorts(1)[0]
        let config = try String(contentsOf: repository.appendingPathComponent("config/gatehouse.yaml"), encoding: .utf8)
        return try await start(complete: config.replacingOccurrences(of: "listen: 127.0.0.1:8080", with: "listen: 127.0.0.1:\(port)"), port: port)
    }

    /// Starts a broker with `config` as it is (it must listen on `port`).
    static func start(complete config: String, port: Int, environment: [String: String] = [:]) async throws -> BrokerProcess {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-sdk-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try config.write(to: folder.appendingPathComponent("gatehouse.yaml"), atomically: true, encoding: .utf8)
        let exports = environment.map { "\($0.key)='\($0.value)'" }.joined(separator: " ")
        let pid = try ChildProcess.spawn(
            ["sh", "-c", "cd '\(folder.path)' && exec env \(exports) '\(binary("gatehouse"))' serve --config gatehouse.yaml"],
            log: folder.appendingPathComponent("serve.log").path
        )
        let broker = BrokerProcess(folder: folder, port: port, pid: pid)
        let transport = URLSessionTransport()
        for _ in 0..<300 {
            if let answer = try? await transport.send(HTTPRequest(method: "GET", url: broker.baseURL.appendingPathComponent("healthz"))), answer.status == 200 {
                return broker
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let log = (try? String(contentsOf: folder.appendingPathComponent("serve.log"), encoding: .utf8)) ?? ""
        await broker.stop()
        throw ChildProcessError(message: "gatehouse did not start: \(log.suffix(2000))")
    }

    func stop() async {
        await ChildProcess.terminate(pid)
        try? FileManager.default.removeItem(at: folder)
    }

    /// An admin API call; the answer's JSON.
    @discardableResult
    func admin(_ method: String, _ path: String, _ body: String? = nil) async throws -> (status: Int, json: JSON) {
        let answer = try await URLSessionTransport().send(
            HTTPRequest(
                method: method, url: URL(string: baseURL.absoluteString + path)!,
                headers: ["Authorization": "Bearer \(Self.adminToken)", "Content-Type": "application/json"], body: body.map { Data($0.utf8) }
            )
        )
        return (answer.status, (try? JSONDecoder().decode(JSON.self, from: answer.body)) ?? .null)
    }

    /// Runs the `gatehouse` CLI on this broker's config (the database is shared).
    func cli(_ arguments: String) async -> (status: Int32, output: String) {
        await ChildProcess.run(["sh", "-c", "cd '\(folder.path)' && '\(Self.binary("gatehouse"))' \(arguments) --config gatehouse.yaml"])
    }
}
