import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport
import Logging

/// Calls an app's registration API: one JSON POST per step, authenticated with a bearer secret or an
/// HMAC signature, answers checked and turned into `AppAPIAnswer` or a precise `BrokerError`.
struct AppAPIClient: Sendable {
    let providerID: String
    let config: CustomAPIPlugin.Config
    let http: any OutboundHTTP
    let logger: Logger
    /// The shared result of the health probe (`CustomAPIProvider.health`).
    let healthCheck = SharedResult<PluginHealth>(lifetime: 2)

    /// Sends one step and returns the app's answer.
    func call(_ body: [String: JSONValue]) async throws -> AppAPIAnswer {
        let payload = Data(JSONValue.object(body).serialized())
        let request = OutboundRequest(
            method: "POST", url: config.url, headers: headers(for: payload), body: payload, timeout: config.timeout.timeInterval,
            maxResponseBytes: config.maxResponseBytes
        )
        let response: OutboundResponse
        do {
            response = try await http.send(request)
        } catch {
            throw refusal(for: error)
        }
        guard (200..<300).contains(response.status) else {
            logger.warning("the app's API answered with an error status", metadata: ["provider": .string(providerID), "status": .stringConvertible(response.status)])
            throw BrokerError(Self.badStatus, .unavailable, "The app's service answered with HTTP \(response.status); try again later.").because(
                "status_\(response.status)")
        }
        switch AppAPIAnswer.parse(response.body) {
        case .success(let answer):
            return answer
        case .failure(let malformed):
            logger.warning("the app's API gave a malformed answer", metadata: ["provider": .string(providerID), "problem": .string(malformed.reason)])
            throw BrokerError(Self.malformedResponse, .unavailable, "The app's service gave an answer Gatehouse cannot read.").because("malformed_response")
        }
    }

    /// Authentication headers; the HMAC covers the timestamp and the exact body bytes.
    func headers(for payload: Data) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json"), ("Accept", "application/json"), ("User-Agent", "Gatehouse")]
        switch config.authentication {
        case .bearer:
            headers.append(("Authorization", "Bearer \(config.secret)"))
        case .hmac:
            // The wall clock, not the broker's: the app compares the timestamp with its own clock.
            let timestamp = String(Int(Date().timeIntervalSince1970))
            headers.append(("X-Gatehouse-Timestamp", timestamp))
            headers.append(("X-Gatehouse-Signature", "v1=\(Self.signature(secret: config.secret, timestamp: timestamp, body: payload))"))
        }
        return headers
    }

    /// Hex HMAC-SHA256 over `<timestamp>.<body>`.
    static func signature(secret: String, timestamp: String, body: Data) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return SecretDigest.hex(code)
    }

    private func refusal(for error: OutboundHTTPError) -> BrokerError {
        logger.warning("the app's API could not be called", metadata: ["provider": .string(providerID), "error": .string(error.description)])
        switch error {
        case .timeout:
            return BrokerError(Self.timeout, .unavailable, "The app's service did not answer in time; try again.", retryAfter: 1).because("timeout")
        case .responseTooLarge:
            return BrokerError(Self.malformedResponse, .unavailable, "The app's service gave an answer Gatehouse cannot read.").because("response_too_large")
        case .unreachable, .invalidURL:
            return BrokerError(Self.unreachable, .unavailable, "The app's service cannot be reached; try again later.", retryAfter: 1).because("unreachable")
        }
    }

    static let timeout = ErrorCode("custom_api_timeout")
    static let unreachable = ErrorCode("custom_api_unreachable")
    static let badStatus = ErrorCode("custom_api_bad_status")
    static let malformedResponse = ErrorCode("custom_api_malformed_response")
    static let refused = ErrorCode("registration_refused")
}
