import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport

/// Single-use recovery codes: ten characters from an alphabet of 30 without look-alikes (no 0/O,
/// 1/I/L, U), 49 bits each, shown as `xxxxx-xxxxx`. Only an HMAC-SHA256 of each, under a key of the
/// instance, is stored: the codes are random enough that a keyed hash is as strong as a slow one, and
/// a database copy alone is not enough to test guesses offline.
enum RecoveryCodes {
    static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    static let length = 10

    /// `count` new codes, as the person sees them.
    static func make(_ count: Int) -> [String] {
        (0..<count).map { _ in
            var generator = SystemRandomNumberGenerator()
            let characters = (0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
            let text = String(decoding: characters, as: UTF8.self)
            return text.prefix(length / 2) + "-" + text.suffix(length / 2)
        }
    }

    /// A code as typed: letter case, spaces and dashes do not matter; nil when it cannot be a code.
    static func normalized(_ typed: String) -> String? {
        let kept = typed.uppercased().filter { $0 != "-" && $0 != " " }
        guard kept.utf8.count == length, kept.utf8.allSatisfy(alphabet.contains) else { return nil }
        return kept
    }

    /// The stored form of a normalized code.
    static func digest(_ normalized: String, key: SymmetricKey) -> String {
        SecretDigest.hex(HMAC<SHA256>.authenticationCode(for: Data(normalized.utf8), using: key))
    }

    /// The index of the stored digest `digest` equals, comparing with every one in constant time.
    static func index(of digest: String, in stored: [String]) -> Int? {
        var found: Int?
        for (index, candidate) in stored.enumerated() where SecretDigest.constantTimeEquals(candidate, digest) && found == nil { found = index }
        return found
    }
}
