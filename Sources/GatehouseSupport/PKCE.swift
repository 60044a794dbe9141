import Crypto
import Foundation
import GatehousePluginKit

/// Proof Key for Code Exchange (RFC 7636), S256 only: `plain` gives no protection against a stolen
/// code and is refused (OAuth 2.0 Security BCP, RFC 9700 section 2.1.1).
public enum PKCE {
    static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A verifier is 43-128 characters of `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`.
    public static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.count) && verifier.allSatisfy { unreserved.contains($0) }
    }

    /// An S256 challenge is the unpadded base64url of a SHA-256 digest: 43 characters.
    public static func isValidChallenge(_ challenge: String) -> Bool {
        challenge.count == 43 && Base64URL.decode(challenge)?.count == 32
    }

    /// The S256 challenge of `verifier` (RFC 7636 section 4.2).
    public static func challenge(for verifier: String) -> String {
        Base64URL.sha256(verifier)
    }

    /// Whether the verifier answers the challenge, compared in constant time.
    public static func verify(_ verifier: String, against challenge: String) -> Bool {
        isValidVerifier(verifier) && SecretDigest.constantTimeEquals(self.challenge(for: verifier), challenge)
    }
}
