import Crypto
import Foundation
import SwiftASN1
import _CryptoExtras

/// An X.509 certificate read as far as attestation needs it: the signed bytes, the signature, names,
/// validity, the public key (kept as DER, whatever its algorithm: an attested ML-DSA key must not
/// stop the chain from being checked) and the extensions. Signatures are checked with swift-crypto.
public struct AttestationCertificate: Sendable {
    public let der: [UInt8]
    public let tbs: [UInt8]
    public let signatureAlgorithm: ASN1ObjectIdentifier
    public let signature: [UInt8]
    public let serialNumber: [UInt8]
    public let issuer: [UInt8]
    public let subject: [UInt8]
    public let notBefore: Date
    public let notAfter: Date
    /// The SubjectPublicKeyInfo, DER.
    public let publicKeyInfo: [UInt8]
    public let publicKeyAlgorithm: ASN1ObjectIdentifier
    /// The BIT STRING's bytes: for EC keys the uncompressed point.
    public let publicKeyBits: [UInt8]
    public let extensions: [ASN1ObjectIdentifier: (critical: Bool, value: [UInt8])]

    public struct Malformed: Error { public init() {} }

    public init(der: [UInt8]) throws {
        self.der = der
        let root = try DER.parse(der)
        guard case .constructed(let parts) = root.content else { throw Malformed() }
        let top = Array(parts)
        guard top.count == 3, case .constructed(let tbsParts) = top[0].content else { throw Malformed() }
        tbs = Array(top[0].encodedBytes)
        signatureAlgorithm = try Self.algorithm(top[1])
        let bits = try ASN1BitString(derEncoded: top[2])
        signature = Array(bits.bytes)
        var fields = Array(tbsParts)
        if let first = fields.first, first.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) { fields.removeFirst() }
        guard fields.count >= 6 else { throw Malformed() }
        guard fields[0].identifier == .integer, case .primitive(let serial) = fields[0].content else { throw Malformed() }
        serialNumber = Array(serial)
        issuer = Array(fields[2].encodedBytes)
        guard case .constructed(let validity) = fields[3].content else { throw Malformed() }
        let times = Array(validity)
        guard times.count == 2 else { throw Malformed() }
        notBefore = try Self.time(times[0])
        notAfter = try Self.time(times[1])
        subject = Array(fields[4].encodedBytes)
        publicKeyInfo = Array(fields[5].encodedBytes)
        guard case .constructed(let spki) = fields[5].content else { throw Malformed() }
        let spkiParts = Array(spki)
        guard spkiParts.count == 2 else { throw Malformed() }
        publicKeyAlgorithm = try Self.algorithm(spkiParts[0])
        publicKeyBits = Array(try ASN1BitString(derEncoded: spkiParts[1]).bytes)
        var extensions: [ASN1ObjectIdentifier: (critical: Bool, value: [UInt8])] = [:]
        for field in fields.dropFirst(6) where field.identifier == ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific) {
            guard case .constructed(let wrapper) = field.content, let list = Array(wrapper).first, case .constructed(let items) = list.content else { throw Malformed() }
            for item in items {
                guard case .constructed(let pieces) = item.content else { throw Malformed() }
                let values = Array(pieces)
                guard values.count >= 2 else { throw Malformed() }
                let oid = try ASN1ObjectIdentifier(derEncoded: values[0])
                let critical = values.count == 3 ? try Bool(derEncoded: values[1]) : false
                let value = try ASN1OctetString(derEncoded: values[values.count - 1])
                extensions[oid] = (critical, Array(value.bytes))
            }
        }
        self.extensions = extensions
    }

    /// Certificates from PEM text, in the order they appear.
    public static func certificates(pem: String) throws -> [AttestationCertificate] {
        try pem.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().map { block in
            guard let end = block.range(of: "-----END CERTIFICATE-----") else { throw Malformed() }
            let body = block[..<end.lowerBound].filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: String(body)) else { throw Malformed() }
            return try AttestationCertificate(der: Array(der))
        }
    }

    /// Whether `issuerKey` (a SubjectPublicKeyInfo, DER) made this certificate's signature.
    public func isSigned(byKey issuerKey: [UInt8]) -> Bool {
        Self.verify(signature: signature, over: tbs, algorithm: signatureAlgorithm, publicKeyInfo: issuerKey)
    }

    public func isValid(at date: Date) -> Bool { notBefore <= date && date <= notAfter }

    /// BasicConstraints `cA`, when the extension is there.
    public var isCertificateAuthority: Bool? {
        guard let value = extensions[Self.basicConstraints]?.value, let node = try? DER.parse(value), case .constructed(let items) = node.content else { return nil }
        guard let first = Array(items).first, first.identifier == .boolean else { return false }
        return (try? Bool(derEncoded: first)) ?? false
    }

    /// The subject's attributes of one type (e.g. `serialNumber`), decoded as text.
    public func subjectAttributes(_ type: ASN1ObjectIdentifier) -> [String] {
        Self.attributes(of: subject).filter { $0.type == type }.map(\.value)
    }

    /// Whether this certificate's issuer names `other`'s subject: byte for byte, or attribute for
    /// attribute when one side encodes a string type differently.
    public func isIssued(byNameOf other: AttestationCertificate) -> Bool {
        if issuer == other.subject { return true }
        let mine = Self.attributes(of: issuer), theirs = Self.attributes(of: other.subject)
        return !mine.isEmpty && mine.count == theirs.count && zip(mine, theirs).allSatisfy { $0.type == $1.type && $0.value == $1.value }
    }

    // MARK: - Pieces

    public static let basicConstraints = try! ASN1ObjectIdentifier(dotRepresentation: "2.5.29.19")
    public static let serialNumberAttribute = try! ASN1ObjectIdentifier(dotRepresentation: "2.5.4.5")
    public static let ecPublicKey = try! ASN1ObjectIdentifier(dotRepresentation: "1.2.840.10045.2.1")

    public static func algorithm(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
        guard case .constructed(let parts) = node.content, let first = Array(parts).first else { throw Malformed() }
        return try ASN1ObjectIdentifier(derEncoded: first)
    }

    public static func time(_ node: ASN1Node) throws -> Date {
        guard case .primitive(let bytes) = node.content, bytes.last == UInt8(ascii: "Z"), bytes.dropLast().allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw Malformed()
        }
        let text = String(decoding: bytes, as: UTF8.self)
        var digits = String(text.dropLast())
        if node.identifier == .utcTime {
            guard digits.count == 12, let year = Int(digits.prefix(2)) else { throw Malformed() }
            digits = (year >= 50 ? "19" : "20") + digits
        } else if node.identifier != .generalizedTime {
            throw Malformed()
        }
        guard digits.count == 14 else { throw Malformed() }
        let numbers = stride(from: 4, to: 14, by: 2).map { Int(digits.dropFirst($0).prefix(2)) ?? -1 }
        guard (1...12).contains(numbers[0]), (1...31).contains(numbers[1]), (0...23).contains(numbers[2]), (0...59).contains(numbers[3]), (0...60).contains(numbers[4])
        else {
            throw Malformed()
        }
        var components = DateComponents(timeZone: TimeZone(identifier: "UTC"), year: Int(digits.prefix(4)), month: numbers[0], day: numbers[1])
        components.hour = numbers[2]
        components.minute = numbers[3]
        components.second = numbers[4]
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: components) else { throw Malformed() }
        return date
    }

    public static func attributes(of name: [UInt8]) -> [(type: ASN1ObjectIdentifier, value: String)] {
        guard let node = try? DER.parse(name), case .constructed(let sets) = node.content else { return [] }
        var result: [(ASN1ObjectIdentifier, String)] = []
        for set in sets {
            guard case .constructed(let pairs) = set.content else { continue }
            for pair in pairs {
                guard case .constructed(let items) = pair.content else { continue }
                let values = Array(items)
                guard values.count == 2, let type = try? ASN1ObjectIdentifier(derEncoded: values[0]), case .primitive(let bytes) = values[1].content else { continue }
                let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased()
                result.append((type, text))
            }
        }
        return result
    }

    /// Checks an X.509 signature: ECDSA with SHA-256/384/512 on P-256/384/521 keys, RSA PKCS#1 v1.5
    /// with SHA-256/384/512. SHA-1 and anything else is refused.
    static func verify(signature: [UInt8], over message: [UInt8], algorithm: ASN1ObjectIdentifier, publicKeyInfo: [UInt8]) -> Bool {
        switch algorithm.description {
        case "1.2.840.10045.4.3.2": return verifyECDSA(signature, digest: SHA256.hash(data: message), key: publicKeyInfo)
        case "1.2.840.10045.4.3.3": return verifyECDSA(signature, digest: SHA384.hash(data: message), key: publicKeyInfo)
        case "1.2.840.10045.4.3.4": return verifyECDSA(signature, digest: SHA512.hash(data: message), key: publicKeyInfo)
        case "1.2.840.113549.1.1.11": return verifyRSA(signature, digest: SHA256.hash(data: message), key: publicKeyInfo)
        case "1.2.840.113549.1.1.12": return verifyRSA(signature, digest: SHA384.hash(data: message), key: publicKeyInfo)
        case "1.2.840.113549.1.1.13": return verifyRSA(signature, digest: SHA512.hash(data: message), key: publicKeyInfo)
        default: return false
        }
    }

    private static func verifyECDSA<D: Digest>(_ signature: [UInt8], digest: D, key: [UInt8]) -> Bool {
        if let p256 = try? P256.Signing.PublicKey(derRepresentation: key) {
            guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return p256.isValidSignature(signature, for: digest)
        }
        if let p384 = try? P384.Signing.PublicKey(derRepresentation: key) {
            guard let signature = try? P384.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return p384.isValidSignature(signature, for: digest)
        }
        if let p521 = try? P521.Signing.PublicKey(derRepresentation: key) {
            guard let signature = try? P521.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return p521.isValidSignature(signature, for: digest)
        }
        return false
    }

    private static func verifyRSA<D: Digest>(_ signature: [UInt8], digest: D, key: [UInt8]) -> Bool {
        guard let rsa = try? _RSA.Signing.PublicKey(derRepresentation: key), rsa.keySizeInBits >= 2048 else { return false }
        return rsa.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: digest, padding: .insecurePKCS1v1_5)
    }
}
