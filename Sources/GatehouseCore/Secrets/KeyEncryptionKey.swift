import Crypto
import Foundation

/// A key-encryption key (KEK): 256 bits that never live in the database and encrypt every secret the
/// broker stores there. Its id (the first 8 bytes of SHA-256 of the key, hex) is written beside each
/// ciphertext, so a value names the key that opens it without revealing anything about that key.
public struct KeyEncryptionKey: Sendable {
    /// The key's id, written with what it seals (the first 8 hex digits of its SHA-256).
    public let id: String
    let key: SymmetricKey

    /// From 32 raw bytes.
    public init(bytes: Data) throws(KeyEncryptionKeyError) {
        guard bytes.count == 32 else { throw .wrongLength(bytes.count) }
        self.key = SymmetricKey(data: bytes)
        self.id = "kek-" + SecretDigest.hex(SHA256.hash(data: bytes).prefix(8))
    }

    /// From the text form operators handle: base64 (standard or URL-safe) of 32 bytes, surrounding
    /// whitespace ignored (a key file usually ends with a newline).
    public init(text: String) throws(KeyEncryptionKeyError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: trimmed) ?? Base64URL.decode(trimmed) else { throw .notBase64 }
        try self.init(bytes: bytes)
    }

    /// A new random key, in the text form (base64 of 32 bytes from the system CSPRNG).
    public static func generateText() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64EncodedString()
    }
}

/// Why a key-encryption key was not accepted.
public enum KeyEncryptionKeyError: Error, Sendable, CustomStringConvertible {
    /// Not base64.
    case notBase64
    /// Not 32 bytes (the length it had).
    case wrongLength(Int)

    /// The key's id only: never the key.
    public var description: String {
        switch self {
        case .notBase64: "is not base64 (make one with `openssl rand -base64 32`)"
        case .wrongLength(let count): "must be 32 bytes (256 bits) in base64, got \(count) bytes (make one with `openssl rand -base64 32`)"
        }
    }
}
