import Crypto
import Foundation
import GatehouseCore
import _CryptoExtras

/// One signing key from the upstream's JWKS (RFC 7517), read into the key type it names. Keys of a
/// type the plugin cannot check, encryption keys, RSA keys under 2048 bits and symmetric keys are
/// left out: a JWKS never makes an HMAC secret out of anything.
struct UpstreamKey: Sendable {
    enum Material: Sendable {
        case rsa(_RSA.Signing.PublicKey)
        case p256(P256.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
    }

    var kid: String?
    /// The key's own `alg`, when the JWKS names one: then only that algorithm may use it.
    var algorithm: String?
    var material: Material

    /// Reads one JWK; nil for a key that cannot sign ID tokens here.
    init?(jwk: [String: JSONValue]) {
        if let use = jwk["use"]?.stringValue, use != "sig" { return nil }
        if case .array(let operations)? = jwk["key_ops"], !operations.contains(.string("verify")) { return nil }
        kid = jwk["kid"]?.stringValue
        algorithm = jwk["alg"]?.stringValue
        func bytes(_ name: String) -> Data? { jwk[name]?.stringValue.flatMap(Base64URL.decode) }
        switch jwk["kty"]?.stringValue {
        case "RSA":
            guard let n = bytes("n"), let e = bytes("e"), let key = try? _RSA.Signing.PublicKey(n: n, e: e), key.keySizeInBits >= 2048 else { return nil }
            material = .rsa(key)
        case "EC":
            guard jwk["crv"]?.stringValue == "P-256", let x = bytes("x"), let y = bytes("y"), x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(x963Representation: Data([0x04]) + x + y)
            else { return nil }
            material = .p256(key)
        case "OKP":
            guard jwk["crv"]?.stringValue == "Ed25519", let x = bytes("x"), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else { return nil }
            material = .ed25519(key)
        default:
            return nil
        }
    }

    /// Whether this key may check a signature made with `alg`: the key type must be the algorithm's,
    /// and a key that names its algorithm only serves that one.
    func serves(_ alg: String) -> Bool {
        if let algorithm, algorithm != alg { return false }
        switch (material, alg) {
        case (.rsa, "RS256"), (.rsa, "PS256"), (.p256, "ES256"), (.ed25519, "EdDSA"): return true
        default: return false
        }
    }

    /// Checks a JWS signature over `input` made with `alg` (which `serves` accepted).
    func verifies(_ signature: Data, over input: Data, alg: String) -> Bool {
        switch (material, alg) {
        case (.rsa(let key), "RS256"):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        case (.rsa(let key), "PS256"):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input), padding: .PSS)
        case (.p256(let key), "ES256"):
            guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: SHA256.hash(data: input))
        case (.ed25519(let key), "EdDSA"):
            return key.isValidSignature(signature, for: input)
        default:
            return false
        }
    }

    /// Reads a JWKS document's keys (those usable here).
    static func keys(fromJWKS body: Data) -> [UpstreamKey]? {
        guard case .object(let document)? = try? JSONDecoder().decode(JSONValue.self, from: body), case .array(let keys)? = document["keys"] else { return nil }
        return keys.compactMap { key in
            guard case .object(let jwk) = key else { return nil }
            return UpstreamKey(jwk: jwk)
        }
    }
}
