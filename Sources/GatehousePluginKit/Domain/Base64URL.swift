import Crypto
import Foundation

/// Unpadded base64url (RFC 4648 section 5), as JOSE uses it. Written out by table rather than
/// through Foundation's base64 and three `replacingOccurrences` (which go through `NSString` on
/// Linux): every token the broker issues has a random id, so this is on every token request.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The value of each base64url character; 0xFF for anything else.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        // Standard base64's two characters too, as the Foundation-based decoder before accepted them.
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// Base64url without padding (RFC 4648 section 5).
    public static func encode(_ data: Data) -> String { encode(bytes: data) }

    /// Base64url without padding (RFC 4648 section 5).
    public static func encode(bytes: some Collection<UInt8>) -> String {
        var output = [UInt8]()
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            if second != nil { output.append(alphabet[Int(group >> 6 & 0x3F)]) }
            if third != nil { output.append(alphabet[Int(group & 0x3F)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Base64url of the SHA-256 of the UTF-8 text (PKCE S256, JWK thumbprints).
    public static func sha256(_ text: String) -> String {
        encode(bytes: Array(SHA256.hash(data: Data(text.utf8))))
    }

    /// The bytes of base64url text (standard base64's `+` and `/` and up to two `=` of padding are
    /// accepted too); nil for any other character or a length no encoder writes.
    public static func decode(_ text: String) -> Data? {
        var characters = text.utf8[...]
        if characters.count % 4 == 0 {
            // Padding only where it completes the last group of four, as base64 writes it.
            for _ in 0..<2 where characters.last == UInt8(ascii: "=") { characters = characters.dropLast() }
        }
        var output = [UInt8]()
        output.reserveCapacity(characters.count * 3 / 4)
        var group: UInt32 = 0
        var count = 0
        for character in characters {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            group = group << 6 | UInt32(value)
            count += 1
            if count == 4 {
                output.append(UInt8(group >> 16 & 0xFF))
                output.append(UInt8(group >> 8 & 0xFF))
                output.append(UInt8(group & 0xFF))
                group = 0
                count = 0
            }
        }
        switch count {
        case 0: break
        case 2:
            // The bits past the last whole byte must be zero: one encoding per byte string.
            guard group & 0xF == 0 else { return nil }
            output.append(UInt8(group >> 4 & 0xFF))
        case 3:
            guard group & 0x3 == 0 else { return nil }
            output.append(UInt8(group >> 10 & 0xFF))
            output.append(UInt8(group >> 2 & 0xFF))
        default: return nil
        }
        return Data(output)
    }
}
