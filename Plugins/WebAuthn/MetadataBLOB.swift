import Crypto
import Foundation
import GatehouseAttestation
import GatehousePluginKit
import GatehouseSupport

/// The FIDO Metadata Service BLOB (FIDO MDS 3.0, §3.1.7), read from a file: a JWS whose `x5c`
/// chains to the FIDO root the operator configured, listing per AAGUID the roots that anchor the
/// authenticator's attestations and its status reports. Read once at start; a BLOB that does not
/// verify is a config error, never ignored.
struct MetadataBLOB: Sendable {
    struct Entry: Sendable {
        let description: String
        let roots: [AttestationCertificate]
        /// The latest status report's status (`FIDO_CERTIFIED_L1`, `REVOKED`...).
        let status: String?
    }

    /// Statuses that make every attestation of the authenticator untrusted (MDS 3.0 §3.1.4).
    static let compromised: Set<String> = [
        "REVOKED", "ATTESTATION_KEY_COMPROMISE", "USER_KEY_REMOTE_COMPROMISE", "USER_KEY_PHYSICAL_COMPROMISE", "USER_VERIFICATION_BYPASS",
    ]

    let serial: Int
    let nextUpdate: String?
    /// By AAGUID in lower-case hex without dashes.
    let entries: [String: Entry]

    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    /// Verifies the BLOB's signature and its certificate path to `root` (valid at `now`) and reads it.
    init(jws text: String, root: AttestationCertificate, now: Date) throws {
        guard let jws = CompactJWS(text.trimmingCharacters(in: .whitespacesAndNewlines), maxBytes: 32 * 1024 * 1024) else {
            throw Problem(description: "the BLOB is not a compact JWS")
        }
        guard let x5c = jws.header["x5c"]?.arrayValue, !x5c.isEmpty else { throw Problem(description: "the BLOB's header has no x5c") }
        var chain: [AttestationCertificate] = []
        for entry in x5c {
            guard let text = entry.stringValue, let der = Data(base64Encoded: text), let certificate = try? AttestationCertificate(der: Array(der)) else {
                throw Problem(description: "a certificate of the BLOB's x5c does not parse")
            }
            chain.append(certificate)
        }
        guard chain.allSatisfy({ $0.isValid(at: now) }), root.isValid(at: now) else { throw Problem(description: "a certificate of the BLOB's path is not valid now") }
        do {
            let path = chain.last?.publicKeyInfo == root.publicKeyInfo ? chain : chain + [root]
            try CertificatePath(path).checkLinks(trustedKeys: [root.publicKeyInfo])
        } catch { throw Problem(description: "the BLOB's certificates do not lead to the configured root: \(error)") }
        let signature = [UInt8](jws.signature), input = [UInt8](jws.signingInput)
        let verified: Bool
        switch jws.algorithm {
        case "RS256": verified = AttestationSignature.verifies(signature, over: input, algorithm: -257, publicKeyInfo: chain[0].publicKeyInfo)
        case "ES256":
            // JWS signatures are r ‖ s; the certificate check takes DER.
            guard let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else {
                throw Problem(description: "the BLOB's ES256 signature is not 64 bytes")
            }
            verified = AttestationSignature.verifies(Array(raw.derRepresentation), over: input, algorithm: -7, publicKeyInfo: chain[0].publicKeyInfo)
        default: throw Problem(description: "the BLOB is signed with \(jws.algorithm ?? "no algorithm"), not RS256 or ES256")
        }
        guard verified else { throw Problem(description: "the BLOB's signature does not verify") }
        guard let number = jws.claims["no"]?.numberValue, let list = jws.claims["entries"]?.arrayValue else {
            throw Problem(description: "the BLOB has no serial number or entries")
        }
        serial = Int(number)
        nextUpdate = jws.claims["nextUpdate"]?.stringValue
        var entries: [String: Entry] = [:]
        for item in list {
            // U2F and UAF entries name keys otherwise; only FIDO2 authenticators have an AAGUID.
            guard let aaguid = item["aaguid"]?.stringValue else { continue }
            let statement = item["metadataStatement"]
            var roots: [AttestationCertificate] = []
            for root in statement?["attestationRootCertificates"]?.arrayValue ?? [] {
                if let text = root.stringValue, let der = Data(base64Encoded: text), let certificate = try? AttestationCertificate(der: Array(der)) {
                    roots.append(certificate)
                }
            }
            // The latest report by its effective date (ISO 8601 dates sort as text; the list's order
            // is not promised). A compromise report wins when it is undated (`effectiveDate` is
            // optional) or not older than the latest other report: doubt refuses.
            let reports = (item["statusReports"]?.arrayValue ?? []).map { (status: $0["status"]?.stringValue ?? "", date: $0["effectiveDate"]?.stringValue) }
            let newestOther = reports.filter { !Self.compromised.contains($0.status) }.compactMap(\.date).max() ?? ""
            let compromise = reports.last { Self.compromised.contains($0.status) && ($0.date.map { $0 >= newestOther } ?? true) }
            let status = compromise?.status ?? reports.enumerated().max { ($0.element.date ?? "", $0.offset) < ($1.element.date ?? "", $1.offset) }?.element.status
            entries[aaguid.replacingOccurrences(of: "-", with: "").lowercased()] = Entry(
                description: statement?["description"]?.stringValue ?? "", roots: roots, status: status)
        }
        self.entries = entries
    }
}
