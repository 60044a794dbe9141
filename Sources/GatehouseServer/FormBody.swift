import Foundation
import GatehouseCore
import Hummingbird

/// Reads `application/x-www-form-urlencoded` bodies and query strings, refusing a parameter given
/// twice (RFC 6749 section 3.1: "parameters MUST NOT be included more than once").
enum FormBody {
    static let maximumSize = 64 * 1024

    static func parse(_ request: Request) async throws -> [String: String] {
        guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/x-www-form-urlencoded") else {
            throw BrokerError(.invalidRequest, .badRequest, "The body must be application/x-www-form-urlencoded.")
        }
        let buffer = try await request.body.collect(upTo: maximumSize)
        return try parse(String(buffer: buffer))
    }

    static func parse(_ text: String) throws(BrokerError) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else {
                throw BrokerError(.invalidRequest, .badRequest, "The form is not validly percent-encoded.")
            }
            guard result[name] == nil else {
                throw BrokerError(.invalidRequest, .badRequest, "The parameter '\(name)' appears more than once.")
            }
            result[name] = value
        }
        return result
    }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// The query string of a request as parameters.
    static func query(_ request: Request) throws(BrokerError) -> [String: String] {
        try parse(request.uri.query ?? "")
    }
}
