import Crypto
import Foundation
import GatehouseAttestation
import GatehousePluginKit
import GatehouseSupport
import SwiftASN1

/// Apple App Attest (https://developer.apple.com/documentation/devicecheck/validating-apps-that-connect-to-your-server):
/// checks an attestation object the way Apple's validation guide lists, and assertions made later by
/// the attested key. Every date check uses the time it is given (the broker's clock).
struct AppAttestVerifier: Sendable {
    /// The Apple App Attestation Root CA's key, pinned.
    let rootKeys: [[UInt8]]
    let rootCertificates: [AttestationCertificate]

    init(rootCertificates: [AttestationCertificate]) {
        self.rootCertificates = rootCertificates
        self.rootKeys = rootCertificates.map(\.publicKeyInfo)
    }

    /// Which builds' keys an app accepts: App Attest's AAGUID says whether the key was made by a
    /// development or a production build.
    struct Environments: Sendable, Hashable {
        var production: Bool
        var development: Bool
    }

    /// A key App Attest vouched for.
    struct AttestedKey: Sendable, Hashable {
        /// SHA-256 of the key's uncompressed point: Apple's key id.
        var keyID: [UInt8]
        /// The uncompressed P-256 point (65 bytes).
        var publicKey: [UInt8]
        var appID: String
        var environment: String
        /// The attestation's receipt, for the app's fraud-metric calls to Apple.
        var receipt: [UInt8]?
    }

    static let nonceExtension = try! ASN1ObjectIdentifier(dotRepresentation: "1.2.840.113635.100.8.2")
    static let productionAAGUID = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
    static let developmentAAGUID = Array("appattestdevelop".utf8)

    /// Checks an attestation object. `clientDataHash` is what the app passed to `attestKey`: the
    /// SHA-256 of the server's challenge. `keyID`, when the app sent it, must be the attested key's.
    func verifyAttestation(
        _ object: [UInt8], keyID: [UInt8]?, clientDataHash: [UInt8], appIDs: [String], environments: Environments, at now: Date
    ) throws(AttestationRefusal) -> AttestedKey {
        let decoded: CBOR
        do { decoded = try CBOR.decode(object) } catch { throw AttestationRefusal(.malformed, "The attestation object is not CBOR: \(error).") }
        guard decoded["fmt"]?.textValue == "apple-appattest" else { throw AttestationRefusal(.malformed, "The attestation object's fmt is not apple-appattest.") }
        guard let statement = decoded["attStmt"], let entries = statement["x5c"]?.arrayValue, entries.allSatisfy({ $0.bytesValue != nil }),
            case let x5c = entries.compactMap(\.bytesValue), (2...5).contains(x5c.count),
            let authData = decoded["authData"]?.bytesValue
        else { throw AttestationRefusal(.malformed, "The attestation object needs attStmt.x5c (leaf and intermediate) and authData.") }
        let chain: [AttestationCertificate]
        do { chain = try x5c.map { try AttestationCertificate(der: $0) } } catch { throw AttestationRefusal(.malformed, "A certificate in x5c does not parse.") }
        // 1. The chain to Apple's App Attestation root, every certificate valid now.
        var path = chain
        if let last = path.last, rootKeys.contains(last.publicKeyInfo), path.count > 2 { path.removeLast() }
        guard let root = rootCertificates.first(where: { root in path.last.map { $0.isIssued(byNameOf: root) } ?? false }) else {
            throw AttestationRefusal(.untrustedChain, "The chain does not lead to the Apple App Attestation Root CA.")
        }
        try AttestationRefusal.checking { () throws(CertificatePathProblem) in try CertificatePath(path + [root]).checkLinks(trustedKeys: rootKeys) }
        for (index, certificate) in (path + [root]).enumerated() where !certificate.isValid(at: now) {
            throw AttestationRefusal(.certificateExpired, "Certificate \(index) of the chain is not valid at \(now).")
        }
        let leaf = path[0]
        // 2. The nonce: SHA-256(authData ‖ clientDataHash) in the leaf's extension.
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        guard let sealed = leaf.extensions[Self.nonceExtension]?.value, let inLeaf = Self.nonce(inExtension: sealed) else {
            throw AttestationRefusal(.malformed, "The leaf certificate has no App Attest nonce extension.")
        }
        guard SecretDigest.constantTimeEquals(inLeaf, nonce) else { throw AttestationRefusal(.challengeMismatch, "The attestation is not bound to this challenge.") }
        // 3. The key id is SHA-256 of the leaf's public key point.
        guard leaf.publicKeyAlgorithm == AttestationCertificate.ecPublicKey, leaf.publicKeyBits.count == 65,
            (try? P256.Signing.PublicKey(x963Representation: leaf.publicKeyBits)) != nil
        else { throw AttestationRefusal(.malformed, "The attested key is not a P-256 key.") }
        let computedKeyID = Array(SHA256.hash(data: leaf.publicKeyBits))
        if let keyID, keyID != computedKeyID { throw AttestationRefusal(.keyMismatch, "The key id is not the attested key's.") }
        // 4-7. Authenticator data: rpIdHash, counter, AAGUID, credential id.
        let parsed = try AuthenticatorData(authData, attested: true)
        guard let appID = appIDs.first(where: { Array(SHA256.hash(data: Data($0.utf8))) == parsed.rpIDHash }) else {
            throw AttestationRefusal(.appMismatch, "The attestation is for another app id.")
        }
        guard parsed.counter == 0 else { throw AttestationRefusal(.counterInvalid, "A new attestation's counter must be 0.") }
        let environment: String
        switch parsed.aaguid {
        case Self.productionAAGUID where environments.production: environment = "production"
        case Self.developmentAAGUID where environments.development: environment = "development"
        case Self.productionAAGUID, Self.developmentAAGUID:
            throw AttestationRefusal(.environmentNotAllowed, "Keys from this App Attest environment are not accepted for this app.")
        default: throw AttestationRefusal(.malformed, "The AAGUID is not App Attest's.")
        }
        guard parsed.credentialID == computedKeyID else { throw AttestationRefusal(.keyMismatch, "The credential id is not the attested key's id.") }
        return AttestedKey(keyID: computedKeyID, publicKey: leaf.publicKeyBits, appID: appID, environment: environment, receipt: statement["receipt"]?.bytesValue)
    }

    /// Checks an assertion: the signature over SHA-256(authenticatorData ‖ SHA-256(clientData)) by the
    /// attested key, the app id, and a counter above `lastCounter`. Answers the new counter.
    func verifyAssertion(_ object: [UInt8], clientData: [UInt8], publicKey: [UInt8], appID: String, lastCounter: Int) throws(AttestationRefusal) -> Int {
        let decoded: CBOR
        do { decoded = try CBOR.decode(object) } catch { throw AttestationRefusal(.malformed, "The assertion is not CBOR: \(error).") }
        guard let signatureBytes = decoded["signature"]?.bytesValue, let authenticatorData = decoded["authenticatorData"]?.bytesValue else {
            throw AttestationRefusal(.malformed, "The assertion needs signature and authenticatorData.")
        }
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey) else { throw AttestationRefusal(.keyMismatch, "The stored key is not a P-256 key.") }
        let nonce = Array(SHA256.hash(data: authenticatorData + Array(SHA256.hash(data: clientData))))
        // The key signs with ECDSA over SHA-256 of the nonce: the nonce is hashed once more.
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureBytes), key.isValidSignature(signature, for: Data(nonce)) else {
            throw AttestationRefusal(.invalidSignature, "The assertion's signature does not verify with the attested key.")
        }
        let parsed = try AuthenticatorData(authenticatorData, attested: false)
        guard parsed.rpIDHash == Array(SHA256.hash(data: Data(appID.utf8))) else { throw AttestationRefusal(.appMismatch, "The assertion is for another app id.") }
        guard parsed.counter > lastCounter else { throw AttestationRefusal(.counterInvalid, "The assertion's counter must be higher than the last one seen.") }
        return parsed.counter
    }

    /// `SEQUENCE { [1] EXPLICIT OCTET STRING }`.
    static func nonce(inExtension value: [UInt8]) -> [UInt8]? {
        guard let node = try? DER.parse(value), case .constructed(let items) = node.content, let tagged = Array(items).first,
            tagged.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific), case .constructed(let inner) = tagged.content,
            let octets = Array(inner).first, let string = try? ASN1OctetString(derEncoded: octets)
        else { return nil }
        return Array(string.bytes)
    }
}

/// WebAuthn authenticator data as App Attest writes it: rpIdHash, flags, a big-endian counter and,
/// in an attestation, the AAGUID and credential id. Newer iOS versions append a CBOR map after the
/// credential without setting the ED flag; what follows the credential id is not read.
struct AuthenticatorData: Sendable {
    var rpIDHash: [UInt8]
    var flags: UInt8
    var counter: Int
    var aaguid: [UInt8]
    var credentialID: [UInt8]

    init(_ bytes: [UInt8], attested: Bool) throws(AttestationRefusal) {
        guard bytes.count >= 37 else { throw AttestationRefusal(.malformed, "The authenticator data is too short.") }
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        counter = bytes[33..<37].reduce(0) { $0 << 8 | Int($1) }
        guard attested else {
            aaguid = []
            credentialID = []
            return
        }
        guard bytes.count >= 55 else { throw AttestationRefusal(.malformed, "The authenticator data has no attested credential.") }
        aaguid = Array(bytes[37..<53])
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard bytes.count >= 55 + length else { throw AttestationRefusal(.malformed, "The credential id runs past the authenticator data.") }
        credentialID = Array(bytes[55..<(55 + length)])
    }
}
