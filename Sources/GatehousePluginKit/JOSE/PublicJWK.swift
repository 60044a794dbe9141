import Crypto
import Foundation
import _CryptoExtras

/// A public signing key as a JSON Web Key (RFC 7517) that a device or client sent: an EC P-256, an
/// Ed25519 (OKP) or an RSA (at least 2048 bits) key. A key with private members, or of any other
/// type (symmetric keys above all), is refused. Carries its RFC 7638 thumbprint, which DPoP binds
/// tokens to (`cnf.jkt`) and which names a registered device key.
public struct PublicJWK: Sendable, Hashable {
    enum Material: Sendable, Hashable {
        /// A P-256 key (ES256).
        case p256(x: Data, y: Data)
        /// An Ed25519 key (EdDSA).
        case ed25519(x: Data)
        /// An RSA key (RS256).
        case rsa(n: Data, e: Data)
    }

    let material: Material
    /// The required public members only, as RFC 7638 lists them (what is stored and shown).
    public let members: [String: JSONValue]
    /// The RFC 7638 SHA-256 thumbprint, base64url.
    public let thumbprint: String

    /// Why a JWK was refused; the message names the member at fault.
    public struct Refusal: Error, Sendable, Equatable {
        /// What is wrong with the key, for a person.
        public var message: String
    }

    /// Reads a public JWK, refusing private parts, unknown key types and curves.
    public init(_ value: JSONValue) throws(Refusal) {
        guard case .object(let jwk) = value else { throw Refusal(message: "the key is not a JSON object") }
        for secret in ["d", "p", "q", "dp", "dq", "qi", "k", "oth"] where jwk[secret] != nil {
            throw Refusal(message: "the key has the private member '\(secret)'; send the public key only")
        }
        func bytes(_ name: String) throws(Refusal) -> Data {
            guard let text = jwk[name]?.stringValue, let data = Base64URL.decode(text), !data.isEmpty else {
                throw Refusal(message: "the key's '\(name)' is missing or not base64url")
            }
            return data
        }
        switch jwk["kty"]?.stringValue {
        case "EC":
            guard jwk["crv"]?.stringValue == "P-256" else { throw Refusal(message: "only the EC curve P-256 is accepted") }
            let x = try bytes("x"), y = try bytes("y")
            guard x.count == 32, y.count == 32, (try? P256.Signing.PublicKey(x963Representation: Data([0x04]) + x + y)) != nil else {
                throw Refusal(message: "the key's x and y are not a point on P-256")
            }
            material = .p256(x: x, y: y)
            members = ["crv": "P-256", "kty": "EC", "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y))]
        case "OKP":
            guard jwk["crv"]?.stringValue == "Ed25519" else { throw Refusal(message: "only the OKP curve Ed25519 is accepted") }
            let x = try bytes("x")
            guard x.count == 32 else { throw Refusal(message: "the key's x is not an Ed25519 public key") }
            material = .ed25519(x: x)
            members = ["crv": "Ed25519", "kty": "OKP", "x": .string(Base64URL.encode(x))]
        case "RSA":
            let n = Data(try bytes("n").drop { $0 == 0 }), e = Data(try bytes("e").drop { $0 == 0 })
            guard let key = try? _RSA.Signing.PublicKey(n: n, e: e), key.keySizeInBits >= 2048 else {
                throw Refusal(message: "the RSA key is not valid or shorter than 2048 bits")
            }
            material = .rsa(n: n, e: e)
            members = ["e": .string(Base64URL.encode(e)), "kty": "RSA", "n": .string(Base64URL.encode(n))]
        case let other:
            throw Refusal(message: "the key type '\(other ?? "")' is not accepted (use EC P-256, OKP Ed25519 or RSA)")
        }
        thumbprint = Self.thumbprint(of: members)
    }

    /// RFC 7638: SHA-256 over the required members in lexicographic order, without whitespace.
    static func thumbprint(of members: [String: JSONValue]) -> String {
        let canonical = "{" + members.keys.sorted().map { "\"\($0)\":\"\(members[$0]!.stringValue!)\"" }.joined(separator: ",") + "}"
        return Base64URL.sha256(canonical)
    }

    /// The JWS algorithms (RFC 7518) this key can verify.
    public var algorithms: [String] {
        switch material {
        case .p256: ["ES256"]
        case .ed25519: ["EdDSA"]
        case .rsa: ["RS256", "PS256"]
        }
    }

    /// The JSON form of the key (its required members).
    public var json: JSONValue { .object(members) }

    /// Whether `signature` over `input` is valid for `algorithm`; false for an algorithm of another key type.
    public func verifies(_ signature: Data, over input: Data, algorithm: String) -> Bool {
        switch (material, algorithm) {
        case (.p256(let x, let y), "ES256"):
            guard signature.count == 64, let key = try? P256.Signing.PublicKey(x963Representation: Data([0x04]) + x + y),
                let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(parsed, for: SHA256.hash(data: input))
        case (.ed25519(let x), "EdDSA"):
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else { return false }
            return key.isValidSignature(signature, for: input)
        case (.rsa(let n, let e), "RS256"), (.rsa(let n, let e), "PS256"):
            guard let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { return false }
            let padding: _RSA.Signing.Padding = algorithm == "RS256" ? .insecurePKCS1v1_5 : .PSS
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input), padding: padding)
        default:
            return false
        }
    }
}
