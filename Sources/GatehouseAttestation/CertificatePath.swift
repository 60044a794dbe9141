import Foundation

/// A certificate path, leaf first, checked link by link: each certificate's issuer names the next
/// one's subject and the next one's key made its signature, and every issuer is a CA where it says.
/// Which dates count is the caller's (App Attest checks all, Android key attestation has its own rules).
public struct CertificatePath: Sendable {
    public let certificates: [AttestationCertificate]

    public init(_ certificates: [AttestationCertificate]) {
        self.certificates = certificates
    }

    /// Checks every link, then that the last certificate's key is one of `trustedKeys`
    /// (SubjectPublicKeyInfo DER): pinned keys, not certificates, so that a root re-issued with the
    /// same key still anchors.
    /// `leafIssuerMayBeEndEntity`: Android batch attestation keys on some devices are certified with
    /// `cA: false`; Google's validator accepts them as the attested key's issuer, and so does this.
    public func checkLinks(trustedKeys: [[UInt8]], leafIssuerMayBeEndEntity: Bool = false) throws(CertificatePathProblem) {
        guard let last = certificates.last, certificates.count >= 2 else { throw CertificatePathProblem("The certificate chain is too short.") }
        // The anchor ends the path: a pinned key or a self-issued certificate before the end (a root
        // sent twice, say) would let what follows it decide the path's rules.
        if certificates.dropLast().contains(where: { trustedKeys.contains($0.publicKeyInfo) || $0.issuer == $0.subject }) {
            throw CertificatePathProblem("The chain goes on past a root.")
        }
        for index in 0..<(certificates.count - 1) {
            let subject = certificates[index], issuer = certificates[index + 1]
            guard subject.isIssued(byNameOf: issuer), subject.isSigned(byKey: issuer.publicKeyInfo) else {
                throw CertificatePathProblem("Certificate \(index) of the chain is not issued by certificate \(index + 1).")
            }
            if issuer.isCertificateAuthority != true, !(leafIssuerMayBeEndEntity && index == 0) {
                throw CertificatePathProblem("Certificate \(index + 1) of the chain is not a certificate authority.")
            }
        }
        guard trustedKeys.contains(last.publicKeyInfo) else {
            throw CertificatePathProblem("The chain does not end at a trusted root key.")
        }
        // A self-signed root must verify itself; a pinned key that is not self-signed (an
        // intermediate) is trusted as it stands.
        if last.issuer == last.subject, !last.isSigned(byKey: last.publicKeyInfo) {
            throw CertificatePathProblem("The root certificate's signature does not verify.")
        }
    }
}

/// Why a certificate path does not lead to a trusted key (a sentence for logs and refusals).
public struct CertificatePathProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the path.
    public var message: String

    /// A problem.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
