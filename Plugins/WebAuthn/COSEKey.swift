import Crypto
import Foundation
import GatehouseAttestation
import _CryptoExtras

/// A credential public key in COSE_Key form (RFC 9052 §7, RFC 9053), as authenticator data carries
/// it: EC2 P-256 with ES256 (-7), OKP Ed25519 with EdDSA (-8), RSA with RS256 (-257). The raw CBOR
/// is what is stored; this is its checked reading.
struct COSEKey: Sendable, Equatable {
    /// The COSE algorithms a credential may use.
    enum Algorithm: Int, Sendable, CaseIterable, Codable {
        case es256 = -7
        case eddsa = -8
        case rs256 = -257

        /// The name the config and the account API use.
        var name: String {
            switch self {
            case .es256: "ES256"
            case .eddsa: "EdDSA"
            case .rs256: "RS256"
            }
        }

        init?(name: String) {
            guard let found = Self.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
            self = found
        }
    }

    enum Material: Sendable, Equatable {
        case p256(x: [UInt8], y: [UInt8])
        case ed25519(x: [UInt8])
        case rsa(n: [UInt8], e: [UInt8])
    }

    let algorithm: Algorithm
    let material: Material

    /// Reads a COSE_Key map: key type, algorithm and parameters must agree (an EC2 key with an RSA
    /// algorithm, a curve other than P-256 or Ed25519, a short coordinate are refused).
    init(_ item: CBOR) throws(WebAuthnRefusal) {
        guard let kty = item[1]?.intValue, let alg = item[3]?.intValue else { throw WebAuthnRefusal(.malformed, "The credential public key lacks kty or alg.") }
        guard let algorithm = Algorithm(rawValue: alg) else {
            throw WebAuthnRefusal(.algorithmNotAllowed, "The credential uses COSE algorithm \(alg), which is not supported.")
        }
        switch (kty, algorithm) {
        case (2, .es256):
            guard item[-1]?.intValue == 1, let x = item[-2]?.bytesValue, let y = item[-3]?.bytesValue, x.count == 32, y.count == 32,
                (try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y)) != nil
            else { throw WebAuthnRefusal(.malformed, "The credential's EC2 key is not a P-256 point.") }
            material = .p256(x: x, y: y)
        case (1, .eddsa):
            guard item[-1]?.intValue == 6, let x = item[-2]?.bytesValue, x.count == 32 else {
                throw WebAuthnRefusal(.malformed, "The credential's OKP key is not Ed25519.")
            }
            material = .ed25519(x: x)
        case (3, .rs256):
            guard let n = item[-1]?.bytesValue, let e = item[-2]?.bytesValue, let key = try? _RSA.Signing.PublicKey(n: n, e: e), key.keySizeInBits >= 2048 else {
                throw WebAuthnRefusal(.malformed, "The credential's RSA key is not a key of at least 2048 bits.")
            }
            material = .rsa(n: n, e: e)
        default:
            throw WebAuthnRefusal(.malformed, "The credential's key type \(kty) does not match its algorithm \(alg).")
        }
        self.algorithm = algorithm
    }

    /// Reads stored COSE_Key bytes.
    init(bytes: [UInt8]) throws(WebAuthnRefusal) {
        let item: CBOR
        do { item = try CBOR.decode(bytes) } catch { throw WebAuthnRefusal(.malformed, "The credential public key is not CBOR.") }
        try self.init(item)
    }

    /// Whether `signature` over `data` verifies: ES256 signatures are DER (§6.5.5), EdDSA raw, RS256
    /// PKCS#1 v1.5 with SHA-256.
    func verifies(_ signature: [UInt8], over data: [UInt8]) -> Bool {
        switch material {
        case .p256(let x, let y):
            guard let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y),
                let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
            else { return false }
            return key.isValidSignature(parsed, for: SHA256.hash(data: data))
        case .ed25519(let x):
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else { return false }
            return key.isValidSignature(signature, for: data)
        case .rsa(let n, let e):
            guard let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { return false }
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
        }
    }

    /// The key as SubjectPublicKeyInfo DER, to compare with a certificate's key (packed, apple,
    /// android-key: the attested key must be the credential's).
    var subjectPublicKeyInfo: [UInt8]? {
        switch material {
        case .p256(let x, let y): (try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y)).map { Array($0.derRepresentation) }
        case .ed25519(let x): (try? Curve25519.Signing.PublicKey(rawRepresentation: x)).map { Array(Self.ed25519Prefix + $0.rawRepresentation) }
        case .rsa(let n, let e): (try? _RSA.Signing.PublicKey(n: n, e: e)).map { Array($0.derRepresentation) }
        }
    }

    /// The SubjectPublicKeyInfo header of an Ed25519 key (RFC 8410).
    private static let ed25519Prefix: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]
}
