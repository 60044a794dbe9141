import Crypto
import Foundation
import GatehousePluginKit

/// Digests and comparisons for high-entropy secrets (client secrets, refresh tokens, flow ids). A fast
/// hash is right for these: they are random with 256 bits of entropy, so there is nothing to
/// brute-force, and a slow hash would only cap throughput. User passwords use bcrypt instead.
public enum SecretDigest {
    /// Lower-case hex SHA-256 of the UTF-8 text.
    public static func sha256Hex(_ text: String) -> String {
        hex(SHA256.hash(data: Data(text.utf8)))
    }

    /// Lower-case hex of bytes.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(64)
        for byte in bytes {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// Compares two strings in time that depends only on their lengths, not on where they differ.
    public static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        constantTimeEquals(Array(lhs.utf8), Array(rhs.utf8))
    }

    /// Compares two byte strings in time that depends only on their lengths.
    public static func constantTimeEquals(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    /// Whether `secret` digests to `digest`, compared in constant time.
    public static func matches(_ secret: String, digest: String) -> Bool {
        constantTimeEquals(sha256Hex(secret), digest)
    }
}

/// Unguessable identifiers and secrets from the system CSPRNG.
public enum RandomToken {
    /// `byteCount` random bytes as unpadded base64url (32 bytes → 43 characters, 256 bits), from
    /// BoringSSL's CSPRNG (seeded by the kernel; one call, not a system call per byte).
    public static func make(byteCount: Int = 32) -> String {
        let key = SymmetricKey(size: SymmetricKeySize(bitCount: byteCount * 8))
        return key.withUnsafeBytes { Base64URL.encode(Data($0)) }
    }
}
