import Crypto
import Foundation
import GatehouseAttestation
import GatehouseCore
import GatehouseTesting
import Testing

@testable import WebAuthn

/// The FIDO Metadata Service BLOB: a JWS made here as the FIDO Alliance makes theirs (an `x5c` signer
/// certified by a root, ES256), listing the root of one of the published TPM vectors. It anchors that
/// TPM's attestation; a tampered BLOB, one under another root, and a compromised status do not.
extension WebAuthnTests {
    /// A root and a signer it certifies (EC P-256), made with openssl: their PEMs and the signer's key.
    static func metadataPKI(in folder: URL) async throws -> (root: String, signer: String, signerKey: String) {
        let path = folder.path
        let script = """
            set -e
            cd '\(path)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout root.key -out root.pem -days 3650 -subj '/CN=Test MDS Root' \
              -addext basicConstraints=critical,CA:true -addext keyUsage=critical,keyCertSign 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout signer.key -out signer.csr -subj '/CN=Test MDS Signer' 2>/dev/null
            printf 'basicConstraints=critical,CA:false\\nkeyUsage=critical,digitalSignature\\n' > signer.ext
            openssl x509 -req -in signer.csr -CA root.pem -CAkey root.key -CAcreateserial -days 3650 -out signer.pem -extfile signer.ext 2>/dev/null
            openssl pkcs8 -topk8 -nocrypt -in signer.key -out signer.p8
            """
        let run = await ChildProcess.run(["sh", "-c", script])
        #expect(run.status == 0, "\(run.output)")
        func read(_ name: String) throws -> String { try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8) }
        return (try read("root.pem"), try read("signer.pem"), try read("signer.p8"))
    }

    static func blob(payload: JSONValue, signer: String, key: String) throws -> String {
        let der = try #require(try AttestationCertificate.certificates(pem: signer).first).der
        let header: JSONValue = ["alg": "ES256", "typ": "JWT", "x5c": [.string(Data(der).base64EncodedString())]]
        let input = Base64URL.encode(bytes: header.serialized()) + "." + Base64URL.encode(bytes: payload.serialized())
        let signature = try P256.Signing.PrivateKey(pemRepresentation: key).signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    @Test func aVerifiedMetadataBLOBAnchorsItsAuthenticatorsAndRefusesCompromisedOnes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-mds-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pki = try await Self.metadataPKI(in: folder)
        let root = try #require(try AttestationCertificate.certificates(pem: pki.root).first)

        let vector = try #require(Self.vectors.first { $0.source.hasSuffix("test_verify_attestation_surface_pro_4") })
        let object = try CBOR.decode(vector.bytes("attestationObject"))
        let authData = try AuthenticatorData(object["authData"]?.bytesValue ?? [])
        let aaguid = try #require(authData.attested?.aaguid)
        let hex = SecretDigest.hex(aaguid)
        let dashed = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)].map(String.init).joined(
            separator: "-")
        let tpmRoot = try #require(object["attStmt"]?["x5c"]?.arrayValue?.last?.bytesValue)
        func payload(status: String, reports: JSONValue? = nil) -> JSONValue {
            [
                "legalHeader": "test", "no": 42, "nextUpdate": "2036-01-01",
                "entries": [
                    [
                        "aaguid": .string(dashed), "statusReports": reports ?? [["status": .string(status), "effectiveDate": "2024-01-01"]],
                        "metadataStatement": ["description": "Test TPM", "attestationRootCertificates": [.string(Data(tpmRoot).base64EncodedString())]],
                    ],
                    ["aaid": "4e4e#4005", "metadataStatement": ["description": "A UAF authenticator, skipped"]],
                ],
            ]
        }
        let now = Date()
        let good = try MetadataBLOB(jws: try Self.blob(payload: payload(status: "FIDO_CERTIFIED_L1"), signer: pki.signer, key: pki.signerKey), root: root, now: now)
        #expect(good.serial == 42)
        #expect(good.entries.count == 1 && good.entries[hex]?.description == "Test TPM")
        let credential = try Self.register(vector, Self.registration(vector, trust: AttestationTrust(anchors: [], metadata: good)))
        #expect(credential.authenticatorDescription == "Test TPM")

        // Altered after signing, signed under another root, or with a compromised status.
        let text = try Self.blob(payload: payload(status: "FIDO_CERTIFIED_L1"), signer: pki.signer, key: pki.signerKey)
        var parts = text.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(bytes: payload(status: "FIDO_CERTIFIED_L2").serialized())
        #expect(throws: (any Error).self) { _ = try MetadataBLOB(jws: parts.joined(separator: "."), root: root, now: now) }
        let other = try await Self.metadataPKI(in: folder.appendingPathComponent("other").creatingDirectory())
        let otherRoot = try #require(try AttestationCertificate.certificates(pem: other.root).first)
        #expect(throws: (any Error).self) { _ = try MetadataBLOB(jws: text, root: otherRoot, now: now) }
        #expect(throws: (any Error).self) { _ = try MetadataBLOB(jws: text, root: root, now: now.addingTimeInterval(86_400 * 4000)) }
        let revoked = try MetadataBLOB(jws: try Self.blob(payload: payload(status: "REVOKED"), signer: pki.signer, key: pki.signerKey), root: root, now: now)
        #expect(
            Self.refusal { _ = try Self.register(vector, Self.registration(vector, trust: AttestationTrust(anchors: [], metadata: revoked))) } == .untrustedAttestation)
        // A revocation without a date (the field is optional) after a dated certification still counts;
        // a certification dated after an old revocation clears it.
        let undated: JSONValue = [["status": "FIDO_CERTIFIED_L1", "effectiveDate": "2024-01-01"], ["status": "REVOKED"]]
        let undatedRevoked = try MetadataBLOB(
            jws: try Self.blob(payload: payload(status: "", reports: undated), signer: pki.signer, key: pki.signerKey), root: root, now: now)
        #expect(undatedRevoked.entries[hex]?.status == "REVOKED")
        let cleared: JSONValue = [["status": "FIDO_CERTIFIED_L1", "effectiveDate": "2025-06-01"], ["status": "REVOKED", "effectiveDate": "2024-01-01"]]
        let recertified = try MetadataBLOB(
            jws: try Self.blob(payload: payload(status: "", reports: cleared), signer: pki.signer, key: pki.signerKey), root: root, now: now)
        #expect(recertified.entries[hex]?.status == "FIDO_CERTIFIED_L1")
    }
}

extension URL {
    /// The folder, made if missing.
    func creatingDirectory() throws -> URL {
        try FileManager.default.createDirectory(at: self, withIntermediateDirectories: true)
        return self
    }
}
