import Foundation

/// Which dates of an Android key attestation chain count, as Google's own validator decides them
/// (https://developer.android.com/privacy-and-security/security-key-attestation), one rule for every
/// plugin that reads such chains (`device-attestation`'s Android key attestation, `webauthn`'s
/// `android-key` format):
/// - the attested key's certificate carries the device's idea of time and counts for nothing;
/// - the root counts as its pinned key, not as a certificate: Google re-issued Hardware Attestation
///   Root 1 (expired 2026-05-24) as Roots 2 to 4 with the same key, and factory chains still end in
///   their own copy of Root 1;
/// - a factory-provisioned chain (its top intermediate names a `serialNumber`) was burnt into the
///   device and outlives its certificates: no date counts;
/// - a remotely provisioned (RKP) chain is short-lived by design: each intermediate must be in date.
public enum AndroidChainDates {
    /// Whether `chain` (leaf first, ending at the root) was provisioned in the factory.
    public static func isFactoryProvisioned(_ chain: [AttestationCertificate]) -> Bool {
        chain.count > 2 && !chain[chain.count - 2].subjectAttributes(AttestationCertificate.serialNumberAttribute).isEmpty
    }

    /// Refuses a chain (leaf first, ending at the root) whose dates that count do not hold at `now`.
    public static func check(_ chain: [AttestationCertificate], at now: Date) throws(CertificatePathProblem) {
        guard !isFactoryProvisioned(chain) else { return }
        for (index, certificate) in chain.enumerated().dropFirst().dropLast() where !certificate.isValid(at: now) {
            throw CertificatePathProblem("Certificate \(index) of the chain is not valid at \(now).")
        }
    }
}
