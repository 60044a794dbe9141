import Foundation

/// The two TPM 2.0 structures a `tpm` attestation statement carries (TPM 2.0 Library, Part 2):
/// `pubArea` (TPMT_PUBLIC, the credential key as the TPM holds it) and `certInfo` (TPMS_ATTEST of
/// type TPM_ST_ATTEST_CERTIFY, which the attestation identity key signed).
enum TPMStructures {
    /// A big-endian reader that refuses to read past the end.
    struct Reader {
        var bytes: ArraySlice<UInt8>

        mutating func uint16() throws(WebAuthnRefusal) -> Int {
            guard bytes.count >= 2 else { throw WebAuthnRefusal(.malformed, "A TPM structure is cut short.") }
            defer { bytes = bytes.dropFirst(2) }
            return Int(bytes[bytes.startIndex]) << 8 | Int(bytes[bytes.startIndex + 1])
        }

        mutating func uint32() throws(WebAuthnRefusal) -> UInt32 {
            UInt32(try uint16()) << 16 | UInt32(try uint16())
        }

        mutating func take(_ count: Int) throws(WebAuthnRefusal) -> [UInt8] {
            guard bytes.count >= count else { throw WebAuthnRefusal(.malformed, "A TPM structure is cut short.") }
            defer { bytes = bytes.dropFirst(count) }
            return Array(bytes.prefix(count))
        }

        /// A TPM2B: a 16-bit size, then that many bytes.
        mutating func sized() throws(WebAuthnRefusal) -> [UInt8] { try take(try uint16()) }
    }

    static let algorithmNull = 0x0010
    static let algorithmRSA = 0x0001
    static let algorithmECC = 0x0023
    static let curveP256 = 0x0003

    /// TPMT_PUBLIC: the key's type, name algorithm and public part.
    struct PublicArea {
        enum Key: Equatable {
            case rsa(modulus: [UInt8], exponent: UInt32)
            case ecc(curve: Int, x: [UInt8], y: [UInt8])
        }

        let nameAlgorithm: Int
        let key: Key

        init(_ bytes: [UInt8]) throws(WebAuthnRefusal) {
            var reader = Reader(bytes: bytes[...])
            let type = try reader.uint16()
            nameAlgorithm = try reader.uint16()
            _ = try reader.uint32()  // objectAttributes
            _ = try reader.sized()  // authPolicy
            // TPMT_SYM_DEF_OBJECT, then the scheme: each algorithm other than NULL has more fields.
            if try reader.uint16() != algorithmNull { _ = try reader.take(4) }
            switch type {
            case algorithmRSA:
                if try reader.uint16() != algorithmNull { _ = try reader.take(2) }
                _ = try reader.uint16()  // keyBits
                let exponent = try reader.uint32()
                key = .rsa(modulus: try reader.sized(), exponent: exponent == 0 ? 65537 : exponent)
            case algorithmECC:
                if try reader.uint16() != algorithmNull { _ = try reader.take(2) }
                let curve = try reader.uint16()
                if try reader.uint16() != algorithmNull { _ = try reader.take(2) }  // kdf
                key = .ecc(curve: curve, x: try reader.sized(), y: try reader.sized())
            default:
                throw WebAuthnRefusal(.invalidAttestation, "The TPM key's type \(type) is neither RSA nor ECC.")
            }
            guard reader.bytes.isEmpty else { throw WebAuthnRefusal(.malformed, "Bytes follow the TPM public area.") }
        }
    }

    /// TPMS_ATTEST of a TPM2_Certify: what the attestation identity key signed.
    struct CertifyInfo {
        let extraData: [UInt8]
        let attestedName: [UInt8]

        init(_ bytes: [UInt8]) throws(WebAuthnRefusal) {
            var reader = Reader(bytes: bytes[...])
            guard try reader.uint32() == 0xff54_4347 else { throw WebAuthnRefusal(.invalidAttestation, "certInfo's magic is not TPM_GENERATED_VALUE.") }
            guard try reader.uint16() == 0x8017 else { throw WebAuthnRefusal(.invalidAttestation, "certInfo is not of type TPM_ST_ATTEST_CERTIFY.") }
            _ = try reader.sized()  // qualifiedSigner
            extraData = try reader.sized()
            _ = try reader.take(17)  // clockInfo
            _ = try reader.take(8)  // firmwareVersion
            attestedName = try reader.sized()
            _ = try reader.sized()  // qualifiedName
            guard reader.bytes.isEmpty else { throw WebAuthnRefusal(.malformed, "Bytes follow certInfo.") }
        }
    }
}
