import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport
import GatehouseAttestation
import SwiftASN1

/// What an attestation statement proved (§6.5.3): its format, its type, and the certificates to
/// anchor in a trusted root (the trust path), empty for `none` and self attestation.
struct AttestationResult: Sendable {
    enum Kind: String, Sendable { case none, `self`, basic, attCA = "attca" }

    let format: String
    let kind: Kind
    let trustPath: [AttestationCertificate]
}

/// The verification procedures of the attestation statement formats (§8): `none`, `packed` (self and
/// x5c), `fido-u2f`, `android-key`, `apple` and `tpm`. Each checks that the statement signs this
/// registration (the authenticator data and the client data hash) with a key bound to the new
/// credential, and answers the trust path; whether that path is trusted is `AttestationTrust`'s.
enum AttestationStatementVerifier {
    static let formats = ["none", "packed", "fido-u2f", "android-key", "apple", "tpm"]

    static func verify(format: String, statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8]) throws(WebAuthnRefusal) -> AttestationResult {
        guard let attested = authenticatorData.attested else { throw WebAuthnRefusal(.malformed, "The authenticator data carries no credential.") }
        let signed = authenticatorData.raw + clientDataHash
        switch format {
        case "none":
            guard case .map(let entries) = statement, entries.isEmpty else { throw WebAuthnRefusal(.invalidAttestation, "A 'none' statement must be empty.") }
            return AttestationResult(format: format, kind: .none, trustPath: [])
        case "packed":
            return try packed(statement, signed: signed, attested: attested)
        case "fido-u2f":
            return try fidoU2F(statement, authenticatorData: authenticatorData, clientDataHash: clientDataHash, attested: attested)
        case "android-key":
            return try androidKey(statement, signed: signed, clientDataHash: clientDataHash, attested: attested)
        case "apple":
            return try apple(statement, signed: signed, attested: attested)
        case "tpm":
            return try tpm(statement, signed: signed, attested: attested)
        default:
            throw WebAuthnRefusal(.formatNotAllowed, "The attestation format '\(format)' is not supported.")
        }
    }

    // MARK: - Formats

    /// §8.2: with `x5c`, the attestation certificate signs (and meets §8.2.1); without, the credential
    /// key signs itself (self attestation) with its own algorithm.
    static func packed(_ statement: CBOR, signed: [UInt8], attested: AuthenticatorData.AttestedCredential) throws(WebAuthnRefusal) -> AttestationResult {
        guard let alg = statement["alg"]?.intValue, let signature = statement["sig"]?.bytesValue else {
            throw WebAuthnRefusal(.invalidAttestation, "A packed statement needs alg and sig.")
        }
        guard statement["ecdaaKeyId"] == nil else { throw WebAuthnRefusal(.formatNotAllowed, "ECDAA attestation is not supported.") }
        guard let x5c = statement["x5c"] else {
            guard alg == attested.publicKey.algorithm.rawValue else {
                throw WebAuthnRefusal(.invalidAttestation, "Self attestation must use the credential's own algorithm.")
            }
            guard attested.publicKey.verifies(signature, over: signed) else {
                throw WebAuthnRefusal(.invalidSignature, "The self attestation signature does not verify.")
            }
            return AttestationResult(format: "packed", kind: .self, trustPath: [])
        }
        guard alg != AttestationSignature.rs1 else { throw WebAuthnRefusal(.invalidAttestation, "SHA-1 signatures are accepted from TPMs only.") }
        let chain = try certificates(x5c)
        let leaf = chain[0]
        guard AttestationSignature.verifies(signature, over: signed, algorithm: alg, publicKeyInfo: leaf.publicKeyInfo) else {
            throw WebAuthnRefusal(.invalidSignature, "The packed attestation signature does not verify.")
        }
        // §8.2.1: an end-entity certificate for "Authenticator Attestation", and the AAGUID it names
        // (when it names one) is the credential's.
        guard leaf.isCertificateAuthority != true else { throw WebAuthnRefusal(.invalidAttestation, "The attestation certificate is a CA.") }
        // Attribute values are compared without regard to case (as `subjectAttributes` reads them).
        guard leaf.subjectAttributes(organizationalUnit) == ["authenticator attestation"] else {
            throw WebAuthnRefusal(.invalidAttestation, "The attestation certificate's OU is not 'Authenticator Attestation'.")
        }
        try checkAAGUIDExtension(leaf, attested: attested)
        return AttestationResult(format: "packed", kind: .basic, trustPath: chain)
    }

    /// §8.6: one P-256 certificate signs 0x00 ‖ rpIdHash ‖ clientDataHash ‖ credentialId ‖ the
    /// credential key as an uncompressed point.
    static func fidoU2F(_ statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8], attested: AuthenticatorData.AttestedCredential)
        throws(WebAuthnRefusal) -> AttestationResult
    {
        guard let signature = statement["sig"]?.bytesValue, let x5c = statement["x5c"] else {
            throw WebAuthnRefusal(.invalidAttestation, "A fido-u2f statement needs x5c and sig.")
        }
        let chain = try certificates(x5c)
        guard chain.count == 1, (try? P256.Signing.PublicKey(derRepresentation: chain[0].publicKeyInfo)) != nil else {
            throw WebAuthnRefusal(.invalidAttestation, "A fido-u2f statement carries one P-256 certificate.")
        }
        guard case .p256(let x, let y) = attested.publicKey.material else { throw WebAuthnRefusal(.invalidAttestation, "A fido-u2f credential is a P-256 key.") }
        let data = [0x00] + authenticatorData.rpIDHash + clientDataHash + attested.credentialID + [0x04] + x + y
        guard AttestationSignature.verifies(signature, over: data, algorithm: -7, publicKeyInfo: chain[0].publicKeyInfo) else {
            throw WebAuthnRefusal(.invalidSignature, "The fido-u2f attestation signature does not verify.")
        }
        return AttestationResult(format: "fido-u2f", kind: .basic, trustPath: chain)
    }

    /// §8.4: the credential key is the certified key, its key description binds this registration's
    /// client data hash, and the key is the app's own, generated in the keystore, for signing.
    static func androidKey(_ statement: CBOR, signed: [UInt8], clientDataHash: [UInt8], attested: AuthenticatorData.AttestedCredential) throws(WebAuthnRefusal)
        -> AttestationResult
    {
        guard let alg = statement["alg"]?.intValue, let signature = statement["sig"]?.bytesValue, let x5c = statement["x5c"] else {
            throw WebAuthnRefusal(.invalidAttestation, "An android-key statement needs alg, sig and x5c.")
        }
        guard alg != AttestationSignature.rs1 else { throw WebAuthnRefusal(.invalidAttestation, "SHA-1 signatures are accepted from TPMs only.") }
        let chain = try certificates(x5c)
        let leaf = chain[0]
        // Only the attested key's certificate describes a key: an issuer with a key description is a
        // keystore key used to certify a key of the attacker's making.
        guard chain.dropFirst().allSatisfy({ $0.extensions[KeyDescription.oid] == nil }) else {
            throw WebAuthnRefusal(.invalidAttestation, "An issuer in the chain carries a key description: the attested key is not the leaf.")
        }
        guard AttestationSignature.verifies(signature, over: signed, algorithm: alg, publicKeyInfo: leaf.publicKeyInfo) else {
            throw WebAuthnRefusal(.invalidSignature, "The android-key attestation signature does not verify.")
        }
        try checkSameKey(leaf, attested: attested)
        guard let value = leaf.extensions[KeyDescription.oid]?.value, let description = try? KeyDescription(extensionValue: value) else {
            throw WebAuthnRefusal(.invalidAttestation, "The attestation certificate has no key description.")
        }
        guard SecretDigest.constantTimeEquals(description.challenge, clientDataHash) else {
            throw WebAuthnRefusal(.invalidAttestation, "The key description's challenge is not this registration's client data hash.")
        }
        guard !description.allApplications else { throw WebAuthnRefusal(.invalidAttestation, "The attested key is usable by every app of the device.") }
        guard description.origin == 0, description.purposes.contains(2) else {
            throw WebAuthnRefusal(.invalidAttestation, "The attested key was not generated in the keystore for signing.")
        }
        return AttestationResult(format: "android-key", kind: .basic, trustPath: chain)
    }

    /// §8.8: the credential certificate carries SHA-256(authenticatorData ‖ clientDataHash) as its
    /// nonce extension, and certifies the credential key.
    static func apple(_ statement: CBOR, signed: [UInt8], attested: AuthenticatorData.AttestedCredential) throws(WebAuthnRefusal) -> AttestationResult {
        guard let x5c = statement["x5c"] else { throw WebAuthnRefusal(.invalidAttestation, "An apple statement needs x5c.") }
        let chain = try certificates(x5c)
        let nonce = Array(SHA256.hash(data: signed))
        guard let value = chain[0].extensions[appleNonce]?.value, let found = appleNonceValue(value), SecretDigest.constantTimeEquals(found, nonce) else {
            throw WebAuthnRefusal(.invalidAttestation, "The credential certificate's nonce is not this registration's.")
        }
        try checkSameKey(chain[0], attested: attested)
        return AttestationResult(format: "apple", kind: .attCA, trustPath: chain)
    }

    /// §8.3: the TPM certified `pubArea` (the credential key) with `extraData` = hash(attToBeSigned),
    /// and the attestation identity key's certificate (§8.3.1) signed `certInfo`.
    static func tpm(_ statement: CBOR, signed: [UInt8], attested: AuthenticatorData.AttestedCredential) throws(WebAuthnRefusal) -> AttestationResult {
        guard statement["ver"]?.textValue == "2.0", let alg = statement["alg"]?.intValue, let signature = statement["sig"]?.bytesValue,
            let x5c = statement["x5c"], let certInfoBytes = statement["certInfo"]?.bytesValue, let pubAreaBytes = statement["pubArea"]?.bytesValue
        else { throw WebAuthnRefusal(.invalidAttestation, "A tpm statement needs ver 2.0, alg, sig, x5c, certInfo and pubArea.") }
        let publicArea = try TPMStructures.PublicArea(pubAreaBytes)
        switch (publicArea.key, attested.publicKey.material) {
        case (.rsa(let modulus, let exponent), .rsa(let n, let e)):
            guard stripped(modulus) == stripped(n), exponent == e.reduce(0, { $0 << 8 | UInt32($1) }) else {
                throw WebAuthnRefusal(.invalidAttestation, "The TPM's key is not the credential's.")
            }
        case (.ecc(let curve, let x, let y), .p256(let cx, let cy)):
            guard curve == TPMStructures.curveP256, x == cx, y == cy else { throw WebAuthnRefusal(.invalidAttestation, "The TPM's key is not the credential's.") }
        default:
            throw WebAuthnRefusal(.invalidAttestation, "The TPM's key is not the credential's.")
        }
        let certInfo = try TPMStructures.CertifyInfo(certInfoBytes)
        guard let digest = AttestationSignature.tpmDigest(signed, algorithm: alg), SecretDigest.constantTimeEquals(certInfo.extraData, digest) else {
            throw WebAuthnRefusal(.invalidAttestation, "certInfo's extraData is not the hash of this registration.")
        }
        guard let nameHash = nameDigest(pubAreaBytes, algorithm: publicArea.nameAlgorithm),
            certInfo.attestedName == [UInt8(publicArea.nameAlgorithm >> 8), UInt8(publicArea.nameAlgorithm & 0xff)] + nameHash
        else { throw WebAuthnRefusal(.invalidAttestation, "certInfo does not certify this pubArea.") }
        let chain = try certificates(x5c)
        let aik = chain[0]
        guard AttestationSignature.verifies(signature, over: certInfoBytes, algorithm: alg, publicKeyInfo: aik.publicKeyInfo) else {
            throw WebAuthnRefusal(.invalidSignature, "The TPM attestation signature does not verify.")
        }
        // §8.3.1: an end-entity certificate with an empty subject, for TPM attestation keys.
        guard aik.isCertificateAuthority != true, aik.subject == [0x30, 0x00] else {
            throw WebAuthnRefusal(.invalidAttestation, "The attestation identity key's certificate is a CA or has a subject.")
        }
        guard let usage = aik.extensions[extendedKeyUsage]?.value, contains(usage, tcgKeyPurposeAIKCertificate) else {
            throw WebAuthnRefusal(.invalidAttestation, "The attestation identity key's certificate is not for TPM attestation (tcg-kp-AIKCertificate).")
        }
        try checkAAGUIDExtension(aik, attested: attested)
        return AttestationResult(format: "tpm", kind: .attCA, trustPath: chain)
    }

    // MARK: - Helpers

    static let organizationalUnit = try! ASN1ObjectIdentifier(dotRepresentation: "2.5.4.11")
    static let fidoAAGUID = try! ASN1ObjectIdentifier(dotRepresentation: "1.3.6.1.4.1.45724.1.1.4")
    static let appleNonce = try! ASN1ObjectIdentifier(dotRepresentation: "1.2.840.113635.100.8.2")
    static let extendedKeyUsage = try! ASN1ObjectIdentifier(dotRepresentation: "2.5.29.37")
    /// tcg-kp-AIKCertificate, 2.23.133.8.3, DER-encoded.
    static let tcgKeyPurposeAIKCertificate: [UInt8] = [0x06, 0x05, 0x67, 0x81, 0x05, 0x08, 0x03]

    /// `x5c`: one or more DER certificates, the attestation certificate first.
    static func certificates(_ item: CBOR) throws(WebAuthnRefusal) -> [AttestationCertificate] {
        guard let items = item.arrayValue, !items.isEmpty, items.count <= 8 else { throw WebAuthnRefusal(.invalidAttestation, "x5c is not a list of certificates.") }
        var chain: [AttestationCertificate] = []
        for entry in items {
            guard let der = entry.bytesValue, let certificate = try? AttestationCertificate(der: der) else {
                throw WebAuthnRefusal(.malformed, "A certificate of x5c does not parse.")
            }
            chain.append(certificate)
        }
        return chain
    }

    /// The certificate certifies the credential key itself.
    static func checkSameKey(_ certificate: AttestationCertificate, attested: AuthenticatorData.AttestedCredential) throws(WebAuthnRefusal) {
        guard let spki = attested.publicKey.subjectPublicKeyInfo, spki == certificate.publicKeyInfo else {
            throw WebAuthnRefusal(.invalidAttestation, "The attestation certificate does not certify the credential's key.")
        }
    }

    /// id-fido-gen-ce-aaguid, when present: not critical, and the credential's AAGUID.
    static func checkAAGUIDExtension(_ certificate: AttestationCertificate, attested: AuthenticatorData.AttestedCredential) throws(WebAuthnRefusal) {
        guard let found = certificate.extensions[fidoAAGUID] else { return }
        guard !found.critical, let node = try? DER.parse(found.value), case .primitive(let bytes) = node.content, Array(bytes) == attested.aaguid else {
            throw WebAuthnRefusal(.invalidAttestation, "The attestation certificate's AAGUID is not the credential's.")
        }
    }

    /// Apple's nonce extension: SEQUENCE { [1] EXPLICIT OCTET STRING nonce }.
    static func appleNonceValue(_ value: [UInt8]) -> [UInt8]? {
        guard let node = try? DER.parse(value), case .constructed(let items) = node.content, let tagged = Array(items).first,
            case .constructed(let inner) = tagged.content, let octets = Array(inner).first, case .primitive(let nonce) = octets.content
        else { return nil }
        return Array(nonce)
    }

    static func nameDigest(_ data: [UInt8], algorithm: Int) -> [UInt8]? {
        switch algorithm {
        case 0x0004: Array(Insecure.SHA1.hash(data: data))
        case 0x000B: Array(SHA256.hash(data: data))
        case 0x000C: Array(SHA384.hash(data: data))
        case 0x000D: Array(SHA512.hash(data: data))
        default: nil
        }
    }

    /// Leading zero bytes of an unsigned big-endian integer do not count.
    static func stripped(_ bytes: [UInt8]) -> ArraySlice<UInt8> { bytes.drop { $0 == 0 } }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
