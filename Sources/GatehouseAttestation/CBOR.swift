import Foundation

/// A CBOR (RFC 8949) data item, as App Attest's attestation objects and assertions use them. No
/// CBOR library resolves here, so this is a small decoder of the definite-length subset WebAuthn
/// requires (RFC 8949 section 4.2 "core deterministic" encoders never emit indefinite lengths);
/// anything else is refused rather than guessed at.
public indirect enum CBOR: Sendable, Hashable {
    case unsigned(UInt64)
    case negative(UInt64)  // the value is -1 - n
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([CBOR: CBOR])
    case tagged(UInt64, CBOR)
    case bool(Bool)
    case null
    case undefined
    case float(Double)

    public struct Malformed: Error, CustomStringConvertible {
        public var description: String
    }

    /// Decodes exactly one item; trailing bytes are an error. Nesting deeper than `maxDepth` is refused.
    public static func decode(_ data: [UInt8], maxDepth: Int = 16) throws -> CBOR {
        var reader = Reader(bytes: data[...], maxDepth: maxDepth)
        let item = try reader.item(depth: 0)
        guard reader.bytes.isEmpty else { throw Malformed(description: "\(reader.bytes.count) bytes after the CBOR item") }
        return item
    }

    /// Decodes one item at the start of `data` and says how many bytes it took (authenticator data
    /// carries a COSE key followed by more bytes).
    public static func decodePrefix(_ data: ArraySlice<UInt8>, maxDepth: Int = 16) throws -> (item: CBOR, length: Int) {
        var reader = Reader(bytes: data, maxDepth: maxDepth)
        let item = try reader.item(depth: 0)
        return (item, data.count - reader.bytes.count)
    }

    public subscript(key: String) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries[.text(key)]
    }

    public subscript(key: Int) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries[key >= 0 ? .unsigned(UInt64(key)) : .negative(UInt64(-1 - key))]
    }

    public var bytesValue: [UInt8]? { if case .bytes(let value) = self { value } else { nil } }
    public var textValue: String? { if case .text(let value) = self { value } else { nil } }
    public var arrayValue: [CBOR]? { if case .array(let value) = self { value } else { nil } }
    public var intValue: Int? {
        switch self {
        case .unsigned(let value) where value <= UInt64(Int.max): Int(value)
        case .negative(let value) where value < UInt64(Int.max): -1 - Int(value)
        default: nil
        }
    }

    private struct Reader {
        public var bytes: ArraySlice<UInt8>
        public let maxDepth: Int

        public mutating func byte() throws -> UInt8 {
            guard let first = bytes.first else { throw Malformed(description: "the CBOR ends early") }
            bytes = bytes.dropFirst()
            return first
        }

        public mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
            guard count <= UInt64(bytes.count) else { throw Malformed(description: "a CBOR length runs past the end") }
            let taken = bytes.prefix(Int(count))
            bytes = bytes.dropFirst(Int(count))
            return taken
        }

        public mutating func argument(_ info: UInt8) throws -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                return try take(1 << UInt64(info - 24)).reduce(0) { $0 << 8 | UInt64($1) }
            case 31: throw Malformed(description: "indefinite-length CBOR items are not accepted")
            default: throw Malformed(description: "reserved CBOR additional information \(info)")
            }
        }

        public mutating func item(depth: Int) throws -> CBOR {
            guard depth <= maxDepth else { throw Malformed(description: "CBOR nested too deeply") }
            let initial = try byte()
            let major = initial >> 5, info = initial & 0x1f
            if major == 7 {
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                case 23: return .undefined
                case 25: return .float(Double(Float16Bits.decode(UInt16(try argument(info)))))
                case 26: return .float(Double(Float(bitPattern: UInt32(try argument(info)))))
                case 27: return .float(Double(bitPattern: try argument(info)))
                default: throw Malformed(description: "unsupported CBOR simple value \(info)")
                }
            }
            let argument = try argument(info)
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2: return .bytes(Array(try take(argument)))
            case 3:
                guard let text = String(bytes: try take(argument), encoding: .utf8) else { throw Malformed(description: "a CBOR text string is not UTF-8") }
                return .text(text)
            case 4:
                guard argument <= UInt64(bytes.count) else { throw Malformed(description: "a CBOR array is longer than its input") }
                return .array(try (0..<argument).map { _ in try item(depth: depth + 1) })
            case 5:
                guard argument <= UInt64(bytes.count) else { throw Malformed(description: "a CBOR map is longer than its input") }
                var entries: [CBOR: CBOR] = [:]
                for _ in 0..<argument {
                    let key = try item(depth: depth + 1)
                    guard entries[key] == nil else { throw Malformed(description: "a CBOR map repeats a key") }
                    entries[key] = try item(depth: depth + 1)
                }
                return .map(entries)
            default: return .tagged(argument, try item(depth: depth + 1))
            }
        }
    }
}

/// IEEE 754 half precision, which Foundation on Linux has no portable type for.
public enum Float16Bits {
    public static func decode(_ bits: UInt16) -> Float {
        let sign: Float = bits & 0x8000 == 0 ? 1 : -1
        let exponent = Int((bits >> 10) & 0x1f), fraction = Float(bits & 0x3ff)
        switch exponent {
        case 0: return sign * fraction * powf(2, -24)
        case 31: return fraction == 0 ? sign * .infinity : .nan
        default: return sign * (1 + fraction / 1024) * powf(2, Float(exponent - 15))
        }
    }
}
