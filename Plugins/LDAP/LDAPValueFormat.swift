import Foundation
import GatehousePluginKit
import GatehouseSupport

/// How an attribute's bytes become the text the plugin works with, and back into bytes for a filter.
enum LDAPValueFormat: Sendable {
    /// UTF-8 text (bytes that are no UTF-8 become base64url, so nothing is lost).
    case text
    /// Bytes, always as base64url (`binaryAttributes`).
    case binary
    /// Active Directory's `objectGUID`: 16 bytes shown as the GUID Windows shows
    /// (`6ee5ae29-8918-4171-8214-ed22b2af1a98`), its first three fields little-endian.
    case guid

    /// The text of one value.
    func text(_ bytes: Data) -> String {
        switch self {
        case .text: String(data: bytes, encoding: .utf8) ?? Base64URL.encode(bytes)
        case .binary: Base64URL.encode(bytes)
        case .guid: bytes.count == 16 ? Self.guidText(bytes) : Base64URL.encode(bytes)
        }
    }

    /// The bytes a value's text stands for; nil for text that no value of this format has.
    func bytes(_ text: String) -> Data? {
        switch self {
        case .text: Data(text.utf8)
        case .binary: Base64URL.decode(text).flatMap { $0.isEmpty ? nil : $0 }
        case .guid: Self.guidBytes(text)
        }
    }

    /// The byte order of the GUID's text: Data1 (4 bytes), Data2 and Data3 (2 each) are stored
    /// little-endian, the last 8 bytes in order.
    private static let textOrder = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15]
    private static let dashesAfter: Set<Int> = [3, 5, 7, 9]

    static func guidText(_ bytes: Data) -> String {
        let raw = [UInt8](bytes)
        var text = ""
        for (position, index) in textOrder.enumerated() {
            text += SecretDigest.hex([raw[index]])
            if dashesAfter.contains(position) { text += "-" }
        }
        return text
    }

    static func guidBytes(_ text: String) -> Data? {
        // 8-4-4-4-12 ASCII hex digits (Character.isHexDigit would also take full-width ones).
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == 36 else { return nil }
        var digits: [UInt8] = []
        for (offset, scalar) in scalars.enumerated() {
            if [8, 13, 18, 23].contains(offset) {
                guard scalar == "-" else { return nil }
                continue
            }
            guard scalar.isASCII, let value = UInt8(String(scalar), radix: 16) else { return nil }
            digits.append(value)
        }
        let ordered = stride(from: 0, to: 32, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
        var raw = [UInt8](repeating: 0, count: 16)
        for (position, index) in textOrder.enumerated() { raw[index] = ordered[position] }
        return Data(raw)
    }
}
