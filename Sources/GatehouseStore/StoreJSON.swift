import Foundation
import GatehouseCore

/// The JSON the stores keep in text columns (scopes, methods, claims, payloads). Lists of strings,
/// read and written on every token grant, skip Foundation's coders: for them those cost more than
/// the SQL statement around them.
enum StoreJSON {
    static func encode(_ value: some Encodable) throws -> String {
        if let strings = value as? [String] {
            return String(decoding: JSONValue.array(strings.map(JSONValue.string)).serialized(), as: UTF8.self)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        if T.self == [String].self, let strings = plainStringList(text) as? T { return strings }
        return try JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    /// Reads `["a", "b"]` when no string in it has an escape or a control character; nil for
    /// anything else, which then goes to `JSONDecoder` (so malformed text is still refused there).
    static func plainStringList(_ text: String) -> [String]? {
        let bytes = Array(text.utf8)
        var index = 0
        func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        var strings: [String] = []
        skipSpace()
        guard take(UInt8(ascii: "[")) else { return nil }
        skipSpace()
        if !take(UInt8(ascii: "]")) {
            while true {
                guard take(UInt8(ascii: "\"")) else { return nil }
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    // An escape or a raw control character: the full decoder decides.
                    if bytes[index] == UInt8(ascii: "\\") || bytes[index] < 0x20 { return nil }
                    index += 1
                }
                guard index < bytes.count else { return nil }
                strings.append(String(decoding: bytes[start..<index], as: UTF8.self))
                index += 1
                skipSpace()
                if take(UInt8(ascii: "]")) { break }
                guard take(UInt8(ascii: ",")) else { return nil }
                skipSpace()
            }
        }
        skipSpace()
        return index == bytes.count ? strings : nil
    }
}
