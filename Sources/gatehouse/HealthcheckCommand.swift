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

    @Option(name: .long, help: "The URL to ask.")
    var url: String = "http://127.0.0.1:8080/healthz"

    @Option(name: .long, help: "Seconds to wait for the answer.")
    var timeout: Double = 3

    func run() async throws {
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else { throw ValidationError("--url must be an http:// or https:// URL, e.g. http://127.0.0.1:8080/healthz") }
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
