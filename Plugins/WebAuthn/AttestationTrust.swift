import Foundation
import GatehouseAttestation
import GatehousePluginKit
import GatehouseSupport

/// Whether an attestation's trust path ends at a root the relying party trusts (§7.1 steps 23 and
/// 24): the roots the config lists, the roots the FIDO Metadata Service BLOB lists for the
/// authenticator's AAGUID (an authenticator whose latest status is a compromise is refused), and the
/// platforms' own roots for their formats (Apple's WebAuthn root for `apple`, Google's hardware
/// attestation roots for `android-key`). Every certificate of the path must be valid at the
/// broker's time, except in Android key chains, whose dates follow Google's rule (`AndroidChainDates`).
struct AttestationTrust: Sendable {
    let anchors: [AttestationCertificate]
    let metadata: MetadataBLOB?

    static let platformRoots: [String: [AttestationCertificate]] = {
        func read(_ pem: String) -> [AttestationCertificate] { (try? AttestationCertificate.certificates(pem: pem)) ?? [] }
        return [
            "apple": read(TrustAnchors.appleWebAuthnRoot),
            "android-key": read(TrustAnchors.googleHardwareAttestationRoot) + read(TrustAnchors.googleKeyAttestationCA1),
        ]
    }()

    /// Refuses an attestation that is not anchored; answers the metadata description when there is one.
    @discardableResult
    func check(_ result: AttestationResult, aaguid: [UInt8], at now: Date) throws(WebAuthnRefusal) -> String? {
        guard !result.trustPath.isEmpty else {
            throw WebAuthnRefusal(
                .untrustedAttestation, "The authenticator gave \(result.kind == .none ? "no attestation" : "self attestation"); this app needs an attested authenticator."
            )
        }
        let key = SecretDigest.hex(aaguid)
        let entry = metadata?.entries[key]
        if let status = entry?.status, MetadataBLOB.compromised.contains(status) {
            throw WebAuthnRefusal(.untrustedAttestation, "The FIDO metadata reports this authenticator model as \(status).")
        }
        // Android key chains follow Google's rule for dates (`AndroidChainDates`): the root is its
        // pinned key, and a factory chain outlives its certificates. Every other format's path must
        // be in date, up to a root in date.
        // Google's rule holds only for chains to Google's own pinned keys: a path to any other root (a
        // configured anchor, a metadata root) keeps every date, whatever format it claims.
        let googleKeys = result.format == "android-key" ? Set((Self.platformRoots["android-key"] ?? []).map(\.publicKeyInfo)) : []
        let inDate = result.trustPath.allSatisfy { $0.isValid(at: now) }
        let roots = anchors + (entry?.roots ?? []) + (Self.platformRoots[result.format] ?? [])
        var outOfDate = false
        for root in roots {
            guard let chain = anchoredChain(result.trustPath, in: root, format: result.format) else { continue }
            if googleKeys.contains(root.publicKeyInfo) {
                do { try AndroidChainDates.check(chain, at: now) } catch { throw WebAuthnRefusal(.untrustedAttestation, error.message) }
                return entry?.description
            }
            if inDate, root.isValid(at: now) { return entry?.description }
            outOfDate = true
        }
        if outOfDate { throw WebAuthnRefusal(.untrustedAttestation, "A certificate of the attestation is not valid at \(now).") }
        throw WebAuthnRefusal(.untrustedAttestation, "The attestation does not lead to a trusted root.")
    }

    /// The whole chain up to `root` (the path itself when it ends at the root's key, else the path
    /// and the root), when every link holds; nil when the path does not lead to `root`.
    private func anchoredChain(_ path: [AttestationCertificate], in root: AttestationCertificate, format: String) -> [AttestationCertificate]? {
        // Android batch keys on some devices are certified with cA false (as in device-attestation).
        let lenient = format == "android-key"
        if path.last?.publicKeyInfo == root.publicKeyInfo {
            if path.count == 1 { return path[0].der == root.der ? path : nil }
            return (try? CertificatePath(path).checkLinks(trustedKeys: [root.publicKeyInfo], leafIssuerMayBeEndEntity: lenient)) != nil ? path : nil
        }
        let chain = path + [root]
        return (try? CertificatePath(chain).checkLinks(trustedKeys: [root.publicKeyInfo], leafIssuerMayBeEndEntity: lenient)) != nil ? chain : nil
    }
}
