import Crypto
import Foundation
import _CryptoExtras

/// Verifies an attestation statement's signature (§8) with a certificate's key, under the COSE
/// algorithm the statement names: ECDSA with SHA-256/384/512 (-7, -35, -36), EdDSA (-8), RSA
/// PKCS#1 v1.5 with SHA-256/384/512 (-257, -258, -259) and, for TPMs that know nothing else, with
/// SHA-1 (-65535), and RSA-PSS with SHA-256 (-37).
enum AttestationSignature {
    /// RSASSA-PKCS1-v1_5 with SHA-1: only TPM statements may use it.
    static let rs1 = -65535
    /// The SubjectPublicKeyInfo header of an Ed25519 key (RFC 8410).
    static let ed25519Prefix: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]

    static func verifies(_ signature: [UInt8], over data: [UInt8], algorithm: Int, publicKeyInfo: [UInt8]) -> Bool {
        switch algorithm {
        case -7: return ecdsa(signature, SHA256.hash(data: data), publicKeyInfo)
        case -35: return ecdsa(signature, SHA384.hash(data: data), publicKeyInfo)
        case -36: return ecdsa(signature, SHA512.hash(data: data), publicKeyInfo)
        case -8:
            // SubjectPublicKeyInfo of Ed25519 (RFC 8410): a 12-byte header, then the 32-byte key.
            guard publicKeyInfo.count == 44, publicKeyInfo.starts(with: ed25519Prefix),
                let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKeyInfo.suffix(32))
            else { return false }
            return key.isValidSignature(signature, for: data)
        case -257: return rsa(signature, SHA256.hash(data: data), publicKeyInfo, .insecurePKCS1v1_5)
        case -258: return rsa(signature, SHA384.hash(data: data), publicKeyInfo, .insecurePKCS1v1_5)
        case -259: return rsa(signature, SHA512.hash(data: data), publicKeyInfo, .insecurePKCS1v1_5)
        case -65535: return rsa(signature, Insecure.SHA1.hash(data: data), publicKeyInfo, .insecurePKCS1v1_5)
        case -37: return rsa(signature, SHA256.hash(data: data), publicKeyInfo, .PSS)
        default: return false
        }
    }

    /// The hash a TPM's `extraData` is made with for the statement's algorithm.
    static func tpmDigest(_ data: [UInt8], algorithm: Int) -> [UInt8]? {
        switch algorithm {
        case -7, -257, -37: Array(SHA256.hash(data: data))
        case -35, -258: Array(SHA384.hash(data: data))
        case -36, -259: Array(SHA512.hash(data: data))
        case -65535: Array(Insecure.SHA1.hash(data: data))
        default: nil
        }
    }

    private static func ecdsa<D: Digest>(_ signature: [UInt8], _ digest: D, _ key: [UInt8]) -> Bool {
        if let p256 = try? P256.Signing.PublicKey(derRepresentation: key), let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) {
            return p256.isValidSignature(parsed, for: digest)
        }
        if let p384 = try? P384.Signing.PublicKey(derRepresentation: key), let parsed = try? P384.Signing.ECDSASignature(derRepresentation: signature) {
            return p384.isValidSignature(parsed, for: digest)
        }
        if let p521 = try? P521.Signing.PublicKey(derRepresentation: key), let parsed = try? P521.Signing.ECDSASignature(derRepresentation: signature) {
            return p521.isValidSignature(parsed, for: digest)
        }
        return false
    }

    private static func rsa<D: Digest>(_ signature: [UInt8], _ digest: D, _ key: [UInt8], _ padding: _RSA.Signing.Padding) -> Bool {
        guard let rsa = try? _RSA.Signing.PublicKey(derRepresentation: key), rsa.keySizeInBits >= 2048 else { return false }
        return rsa.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: digest, padding: padding)
    }
}
