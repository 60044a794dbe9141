import Crypto
import Foundation
import _CryptoExtras
import GatehousePluginKit

/// A private key the broker signs compact JWSs with when it speaks to another service: client
/// assertions (`private_key_jwt`, Sign in with Apple), Apple's developer tokens (DeviceCheck), a
/// Google service account's self-signed JWT. ES256 with a P-256 key, RS256 with an RSA key of at
/// least 2048 bits. (The broker's own tokens are signed by `SigningKeyring`.)
public enum JWSSigningKey: Sendable {
    /// A P-256 key (ES256).
    case p256(P256.Signing.PrivateKey)
    /// An RSA key (RS256).
    case rsa(_RSA.Signing.PrivateKey)

    /// Why a PEM was not a usable key.
    public enum Refusal: Error, Sendable, Equatable {
        /// The PEM holds no private key this type reads.
        case notAKey
        /// An RSA key shorter than 2048 bits.
        case rsaTooShort(bits: Int)
    }

    /// A P-256 or RSA private key from PEM (PKCS#8, SEC 1 or PKCS#1).
    public init(pem: String) throws(Refusal) {
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
            self = .p256(key)
        } else if let key = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) {
            guard key.keySizeInBits >= 2048 else { throw .rsaTooShort(bits: key.keySizeInBits) }
            self = .rsa(key)
        } else {
            throw .notAKey
        }
    }

    /// `ES256` or `RS256`.
    public var algorithm: String {
        switch self {
        case .p256: "ES256"
        case .rsa: "RS256"
        }
    }

    /// A compact JWS of `claims`; the header gets `alg` (and whatever `header` adds, such as `kid`).
    /// Members are written with sorted keys and unescaped slashes.
    public func sign(_ claims: [String: JSONValue], header: [String: JSONValue] = [:]) throws -> String {
        var header = header
        header["alg"] = .string(algorithm)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input = Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        return input + "." + Base64URL.encode(try signature(over: Data(input.utf8)))
    }

    /// The JWS signature of a signing input (`header.payload` as ASCII): ECDSA P-256 with SHA-256 as
    /// the 64 bytes `r || s`, or RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 section 3). Thread-safe:
    /// concurrent signatures with one key run in parallel.
    public func signature(over input: Data) throws -> Data {
        switch self {
        case .p256(let key): try key.signature(for: input).rawRepresentation
        case .rsa(let key): try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }
}
