import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseHTTP

/// `gatehouse healthcheck`: asks a running broker's `/healthz` (or another URL) and exits 0 when it
/// answers 2xx. A container image's HEALTHCHECK uses it, so the image needs no curl.
struct HealthcheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck", abstract: "Exit 0 if the broker at --url answers 2xx within --timeout seconds, else 1 (for container health checks)."
    )

    @Option(name: .long, help: "The URL to ask (default: /healthz on $GATEHOUSE_LISTEN's port, else http://127.0.0.1:8080/healthz).")
    var url: String?

    @Option(name: .long, help: "Seconds to wait for the answer.")
    var timeout: Double = 3

    /// `/healthz` where the container's broker listens: `GATEHOUSE_LISTEN` (the image's config reads
    /// it), asked on loopback when it names every address.
    static func defaultURL(environment: [String: String]) -> String {
        guard let listen = environment["GATEHOUSE_LISTEN"].flatMap(ListenAddress.init(parsing:)) else { return "http://127.0.0.1:8080/healthz" }
        let host = ["0.0.0.0", "::", "[::]", ""].contains(listen.host) ? "127.0.0.1" : listen.host
        return "http://\(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host):\(listen.port)/healthz"
    }

    func run() async throws {
        let url = url ?? Self.defaultURL(environment: ProcessInfo.processInfo.environment)
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw ValidationError("--url must be an http:// or https:// URL, e.g. http://127.0.0.1:8080/healthz")
        }
        guard timeout > 0, timeout <= 60 else { throw ValidationError("--timeout must be between 0 and 60 seconds") }
        var standardError = FileHandle.standardError
        do {
            let response = try await AsyncHTTPOutbound().send(OutboundRequest(method: "GET", url: url, timeout: timeout, maxResponseBytes: 64 * 1024))
            guard (200..<300).contains(response.status) else {
                print("unhealthy: \(url) answered \(response.status)", to: &standardError)
                throw ExitCode(1)
            }
            print("healthy: \(url) answered \(response.status)")
        } catch let error as OutboundHTTPError {
            print("unhealthy: \(url): \(error)", to: &standardError)
            throw ExitCode(1)
        }
    }
}
