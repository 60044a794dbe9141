import Crypto
import Foundation
import GatehouseAttestation

/// Authenticator data (§6.1): the RP ID hash, the flags, the signature counter, and at registration
/// the attested credential data (AAGUID, credential id, COSE public key). Extensions are skipped
/// after checking they are one CBOR map.
struct AuthenticatorData: Sendable {
    /// The flags byte (§6.1).
    struct Flags: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let userPresent = Flags(rawValue: 0x01)
        static let userVerified = Flags(rawValue: 0x04)
        static let backupEligible = Flags(rawValue: 0x08)
        static let backupState = Flags(rawValue: 0x10)
        static let attestedCredentialData = Flags(rawValue: 0x40)
        static let extensionData = Flags(rawValue: 0x80)
    }

    /// The credential an authenticator created (§6.5.1).
    struct AttestedCredential: Sendable {
        let aaguid: [UInt8]
        let credentialID: [UInt8]
        /// The COSE_Key as its CBOR bytes (what is stored).
        let publicKeyBytes: [UInt8]
        let publicKey: COSEKey
    }

    let raw: [UInt8]
    let rpIDHash: [UInt8]
    let flags: Flags
    let signCount: UInt32
    let attested: AttestedCredential?

    /// Credential ids are at most 1023 bytes (§5.8.3, §6.5.1).
    static let maxCredentialIDLength = 1023

    init(_ raw: [UInt8]) throws(WebAuthnRefusal) {
        guard raw.count >= 37 else { throw WebAuthnRefusal(.malformed, "The authenticator data is shorter than 37 bytes.") }
        self.raw = raw
        rpIDHash = Array(raw[0..<32])
        flags = Flags(rawValue: raw[32])
        signCount = raw[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var rest = raw[37...]
        if flags.contains(.attestedCredentialData) {
            guard rest.count >= 18 else { throw WebAuthnRefusal(.malformed, "The attested credential data is cut short.") }
            let aaguid = Array(rest.prefix(16))
            let length = Int(rest[rest.startIndex + 16]) << 8 | Int(rest[rest.startIndex + 17])
            rest = rest.dropFirst(18)
            guard length > 0, length <= Self.maxCredentialIDLength, rest.count >= length else {
                throw WebAuthnRefusal(.malformed, "The credential id's length is not valid.")
            }
            let credentialID = Array(rest.prefix(length))
            rest = rest.dropFirst(length)
            let decoded: (item: CBOR, length: Int)
            do { decoded = try CBOR.decodePrefix(rest) } catch { throw WebAuthnRefusal(.malformed, "The credential public key is not CBOR.") }
            let keyBytes = Array(rest.prefix(decoded.length))
            rest = rest.dropFirst(decoded.length)
            attested = AttestedCredential(aaguid: aaguid, credentialID: credentialID, publicKeyBytes: keyBytes, publicKey: try COSEKey(decoded.item))
        } else {
            attested = nil
        }
        if flags.contains(.extensionData) {
            guard let extensions = try? CBOR.decodePrefix(rest), case .map = extensions.item else {
                throw WebAuthnRefusal(.malformed, "The authenticator extensions are not a CBOR map.")
            }
            rest = rest.dropFirst(extensions.length)
        }
        guard rest.isEmpty else { throw WebAuthnRefusal(.malformed, "\(rest.count) bytes follow the authenticator data.") }
    }

    /// §7.1 steps 13 to 17 and §7.2 steps 15 to 18: the relying party's id, user presence, user
    /// verification when required, and the backup flags' one rule.
    func check(rpID: String, requireUserVerification: Bool, requireUserPresence: Bool = true) throws(WebAuthnRefusal) {
        guard rpIDHash == Array(SHA256.hash(data: Data(rpID.utf8))) else {
            throw WebAuthnRefusal(.rpIDMismatch, "The authenticator data is not for the relying party '\(rpID)'.")
        }
        if requireUserPresence, !flags.contains(.userPresent) { throw WebAuthnRefusal(.userNotPresent, "The authenticator did not test user presence.") }
        if requireUserVerification, !flags.contains(.userVerified) {
            throw WebAuthnRefusal(.userNotVerified, "The authenticator did not verify the user, which this app requires.")
        }
        if flags.contains(.backupState), !flags.contains(.backupEligible) {
            throw WebAuthnRefusal(.invalidBackupFlags, "The credential says it is backed up but cannot be.")
        }
    }
}
