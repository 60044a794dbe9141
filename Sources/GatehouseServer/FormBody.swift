import Foundation
import GatehouseCore
import Hummingbird
import NIOCore

/// Reads `application/x-www-form-urlencoded` bodies and query strings, refusing a parameter given
/// twice (RFC 6749 section 3.1: "parameters MUST NOT be included more than once"), except where a
/// later specification lets a parameter repeat (`repeatable`: RFC 8693's `audience` and RFC 8707's
/// `resource` at the token endpoint).
enum FormBody {
    /// The form in the body, read up to the route's `maxUploadSize`; a larger body is
    /// `BrokerError.bodyTooLarge` (413).
    static func parse(_ request: Request, context: GatehouseRequestContext) async throws -> [String: String] {
        try parse(try await text(request, context: context))
    }

    /// The form in the body with every value of each `repeatable` name (in order) beside it; the form
    /// holds the first of them. Any other name given twice is refused.
    static func parse(
        _ request: Request, context: GatehouseRequestContext, repeatable: Set<String>
    ) async throws -> (form: [String: String], repeated: [String: [String]]) {
        try parse(try await text(request, context: context), repeatable: repeatable)
    }

    private static func text(_ request: Request, context: GatehouseRequestContext) async throws -> String {
        guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/x-www-form-urlencoded") else {
            throw BrokerError(.invalidRequest, .badRequest, "The body must be application/x-www-form-urlencoded.")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: context.maxUploadSize)
        } catch is NIOTooManyBytesError {
            throw BrokerError.bodyTooLarge(limit: context.maxUploadSize)
        }
        return String(buffer: buffer)
    }

    static func parse(_ text: String) throws(BrokerError) -> [String: String] {
        try parse(text, repeatable: []).form
    }

    static func parse(_ text: String, repeatable: Set<String>) throws(BrokerError) -> (form: [String: String], repeated: [String: [String]]) {
        var result: [String: String] = [:]
        var repeated: [String: [String]] = [:]
        for pair in text.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = FormDecoding.decode(parts[0]), let value = parts.count > 1 ? FormDecoding.decode(parts[1]) : "" else {
                throw BrokerError(.invalidRequest, .badRequest, "The form is not validly percent-encoded.")
            }
            if repeatable.contains(name) {
                repeated[name, default: []].append(value)
                if result[name] == nil { result[name] = value }
                continue
            }
            guard result[name] == nil else {
                throw BrokerError(.invalidRequest, .badRequest, "The parameter '\(name)' appears more than once.")
            }
            result[name] = value
        }
        return (result, repeated)
    }

    /// The query string of a request as parameters.
    static func query(_ request: Request) throws(BrokerError) -> [String: String] {
        try parse(request.uri.query ?? "")
    }
}

/// `application/x-www-form-urlencoded` decoding of one name or value: `+` is a space, `%XX` a byte,
/// and the bytes must be UTF-8. Works on bytes: Foundation's string routines are slow on Linux and
/// this runs on every token request.
enum FormDecoding {
    static func decode(_ bytes: some Collection<UInt8>) -> String? {
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "+"):
                output.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                let first = bytes.index(after: index)
                guard first != bytes.endIndex else { return nil }
                let second = bytes.index(after: first)
                guard second != bytes.endIndex, let high = hexValue(bytes[first]), let low = hexValue(bytes[second]) else { return nil }
                output.append(high << 4 | low)
                index = second
            default:
                output.append(byte)
            }
            index = bytes.index(after: index)
        }
        return String(validating: output, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
