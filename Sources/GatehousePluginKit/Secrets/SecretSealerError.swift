import Foundation

/// Why a stored secret could not be opened.
public enum SecretSealerError: Error, Sendable, CustomStringConvertible {
    /// The value is not a sealed secret.
    case notSealed
    /// Sealed with a key this broker does not have (its id).
    case unknownKey(String)
    /// The key is known but the value does not open (tampered, or moved to another row).
    case doesNotOpen(String)

    /// Why, for logs.
    public var description: String {
        switch self {
        case .notSealed: "the value is not encrypted"
        case .unknownKey(let id):
            "the value is encrypted under key-encryption key \(id), which is not configured (add it to keys.previousEncryptionKeys until `gatehouse keys rewrap` has run)"
        case .doesNotOpen(let id): "the value does not decrypt under key-encryption key \(id): it was altered or belongs to another row"
        }
    }
}
