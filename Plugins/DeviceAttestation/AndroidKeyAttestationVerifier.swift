import Foundation
import GatehouseAttestation
import GatehousePluginKit
import GatehouseSupport

/// Android key attestation (https://developer.android.com/privacy-and-security/security-key-attestation):
/// the attested key's certificate chain to one of Google's pinned hardware-attestation root keys, the
/// revocation status of every certificate, and the leaf's KeyDescription against the app's rules.
/// Dates follow Google's validator (`AndroidChainDates`, shared with the `webauthn` plugin).
struct AndroidKeyAttestationVerifier: Sendable {
    let trustedKeys: [[UInt8]]

    /// What the app accepts.
    struct Rules: Sendable, Hashable {
        var challenge: [UInt8]
        var minimumSecurityLevel: KeyDescription.SecurityLevel = .trustedEnvironment
        /// Package names the app ships as; empty skips the check (vector tests).
        var packageNames: Set<String> = []
        /// SHA-256 digests of the app's signing certificates; checked when `packageNames` is.
        var signingCertificates: Set<[UInt8]> = []
        /// A locked bootloader and a verified boot.
        var requireVerifiedBoot = false
    }

    /// What an accepted chain established.
    struct Verdict: Sendable, Hashable {
        var description: KeyDescription
        /// The attested key, as the leaf's SubjectPublicKeyInfo (DER).
        var publicKeyInfo: [UInt8]
        var factoryProvisioned: Bool
    }

    func verify(chain: [AttestationCertificate], rules: Rules, revoked: RevocationStatusList, at now: Date) throws(AttestationRefusal) -> Verdict {
        guard chain.count >= 2, let leaf = chain.first else {
            throw AttestationRefusal(.untrustedChain, "The chain needs the attested key's certificate and its issuers.")
        }
        try AttestationRefusal.checking { () throws(CertificatePathProblem) in
            try CertificatePath(chain).checkLinks(trustedKeys: trustedKeys, leafIssuerMayBeEndEntity: true)
        }
        // The extension belongs to the attested key's certificate only: a certificate the attested key
        // signed (with an extension of its own making) must not pass for it.
        guard chain.dropFirst().allSatisfy({ $0.extensions[KeyDescription.oid] == nil }) else {
            throw AttestationRefusal(.untrustedChain, "An issuer in the chain carries a key description: the attested key is not the leaf.")
        }
        let factory = AndroidChainDates.isFactoryProvisioned(chain)
        do { try AndroidChainDates.check(chain, at: now) } catch { throw AttestationRefusal(.certificateExpired, error.message) }
        if let serial = chain.lazy.compactMap({ revoked.status(of: $0.serialNumber) }).first {
            throw AttestationRefusal(.certificateRevoked, "A certificate of the chain is \(serial.lowercased()) on Google's attestation status list.")
        }
        guard let value = leaf.extensions[KeyDescription.oid]?.value else {
            throw AttestationRefusal(.malformed, "The leaf certificate has no key attestation extension.")
        }
        let description: KeyDescription
        do { description = try KeyDescription(extensionValue: value) } catch { throw AttestationRefusal(.malformed, "The key description does not parse.") }
        guard SecretDigest.constantTimeEquals(description.challenge, rules.challenge) else {
            throw AttestationRefusal(.challengeMismatch, "The attestation challenge is not this flow's.")
        }
        let level = min(description.attestationSecurityLevel, description.keymasterSecurityLevel)
        guard level > .software, level >= rules.minimumSecurityLevel else {
            throw AttestationRefusal(.securityLevelTooLow, "The key lives in \(level.name); this app needs \(rules.minimumSecurityLevel.name) or better.")
        }
        if rules.requireVerifiedBoot {
            guard let trust = description.rootOfTrust, trust.deviceLocked, trust.bootState == .verified else {
                throw AttestationRefusal(.bootStateNotAllowed, "This app needs a device with a locked bootloader and verified boot.")
            }
        }
        if !rules.packageNames.isEmpty {
            guard description.packages.contains(where: { rules.packageNames.contains($0.name) }) else {
                throw AttestationRefusal(.appMismatch, "The key belongs to another app package.")
            }
            guard description.signatureDigests.contains(where: rules.signingCertificates.contains) else {
                throw AttestationRefusal(.signingCertificateNotAllowed, "The app's signing certificate is not in the allow-list.")
            }
        }
        return Verdict(description: description, publicKeyInfo: leaf.publicKeyInfo, factoryProvisioned: factory)
    }
}
