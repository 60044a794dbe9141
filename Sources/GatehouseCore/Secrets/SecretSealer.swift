import Crypto
import Foundation

/// Encrypts the secrets the broker keeps in its database (signing keys, plugins' secrets) under the
/// key-encryption key, AES-256-GCM: `gh-kek1:<key id>:<base64url(nonce ‖ ciphertext ‖ tag)>`. The
/// row the value belongs to is the additional authenticated data, so a ciphertext moved to another
/// row (or another key's row) does not open. Older keys are kept for reading until `keys rewrap`
/// has re-encrypted everything under the current one.
public struct SecretSealer: Sendable {
    /// The key new secrets are sealed with.
    public let current: KeyEncryptionKey
    /// Older keys, for opening what was sealed before a rotation.
    public let previous: [KeyEncryptionKey]

    /// A sealer.
    public init(current: KeyEncryptionKey, previous: [KeyEncryptionKey] = []) {
        self.current = current
        self.previous = previous.filter { $0.id != current.id }
    }

    public static let prefix = "gh-kek1:"

    /// Whether a stored value is sealed (anything else was stored in clear by an older version).
    public static func isSealed(_ stored: String) -> Bool { stored.hasPrefix(prefix) }
    /// Whether a stored value is sealed (not a value kept in clear by an older version).
    public static func isSealed(_ stored: Data) -> Bool { stored.starts(with: Data(prefix.utf8)) }

    /// The id of the key a sealed value names; nil for a value in clear.
    public static func keyID(of stored: String) -> String? {
        guard isSealed(stored) else { return nil }
        return stored.dropFirst(prefix.count).split(separator: ":", maxSplits: 1).first.map(String.init)
    }

    /// Whether `keys rewrap` has work on this value: in clear, or sealed under another key.
    public func needsRewrap(_ stored: String) -> Bool { Self.keyID(of: stored) != current.id }

    /// Seals bytes for the row `context` names.
    public func seal(_ plaintext: Data, context: String) throws -> String {
        let box = try AES.GCM.seal(plaintext, using: current.key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw BrokerError.internalFailure("AES-GCM gave no combined form.") }
        return "\(Self.prefix)\(current.id):\(Base64URL.encode(combined))"
    }

    /// Seals text for the row `context` names.
    public func seal(_ text: String, context: String) throws -> String { try seal(Data(text.utf8), context: context) }

    /// Opens a sealed value. A value whose key is not configured (or that does not open: wrong row,
    /// altered bytes) is an error that says which key id it needs, never a silent fallback.
    public func open(_ stored: String, context: String) throws -> Data {
        guard let keyID = Self.keyID(of: stored) else { throw SecretSealerError.notSealed }
        guard let kek = ([current] + previous).first(where: { $0.id == keyID }) else { throw SecretSealerError.unknownKey(keyID) }
        let body = stored.dropFirst(Self.prefix.count + keyID.count + 1)
        guard let combined = Base64URL.decode(String(body)), let box = try? AES.GCM.SealedBox(combined: combined),
            let plaintext = try? AES.GCM.open(box, using: kek.key, authenticating: Data(context.utf8))
        else { throw SecretSealerError.doesNotOpen(keyID) }
        return plaintext
    }

    /// Opens text sealed for `context`.
    public func openText(_ stored: String, context: String) throws -> String { String(decoding: try open(stored, context: context), as: UTF8.self) }
}
