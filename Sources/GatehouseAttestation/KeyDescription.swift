import Foundation
import SwiftASN1

/// The Android key attestation extension (OID 1.3.6.1.4.1.11129.2.1.17) of an attested key's
/// certificate, read as far as the checks need it
/// (https://source.android.com/docs/security/features/keystore/attestation#schema). Parsed as BER,
/// since some devices' KeyMaster writes encodings that are not strictly DER.
public struct KeyDescription: Sendable, Hashable {
    public enum SecurityLevel: Int, Sendable, Comparable, CaseIterable {
        case software = 0, trustedEnvironment = 1, strongBox = 2

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

        public var name: String {
            switch self {
            case .software: "software"
            case .trustedEnvironment: "tee"
            case .strongBox: "strongbox"
            }
        }
    }

    public enum BootState: Int, Sendable { case verified = 0, selfSigned = 1, unverified = 2, failed = 3 }

    public struct RootOfTrust: Sendable, Hashable {
        public var deviceLocked: Bool
        public var bootState: BootState
    }

    public struct Package: Sendable, Hashable {
        public var name: String
        public var version: Int
    }

    public static let oid = try! ASN1ObjectIdentifier(dotRepresentation: "1.3.6.1.4.1.11129.2.1.17")

    public var attestationVersion: Int
    public var attestationSecurityLevel: SecurityLevel
    public var keymasterVersion: Int
    public var keymasterSecurityLevel: SecurityLevel
    public var challenge: [UInt8]
    public var rootOfTrust: RootOfTrust?
    public var packages: [Package]
    /// SHA-256 digests of the app's signing certificates.
    public var signatureDigests: [[UInt8]]
    /// `allApplications` (tag 600) in either list: the key may be used by every app of the device.
    public var allApplications: Bool
    /// The key's `origin` (tag 702) from the hardware list, else the software list: 0 is
    /// KM_ORIGIN_GENERATED (made inside the keystore, never imported).
    public var origin: Int?
    /// The key's purposes (tag 1) from the hardware list, else the software list: 2 is KM_PURPOSE_SIGN.
    public var purposes: [Int]

    public struct Malformed: Error { public init() {} }

    public init(extensionValue: [UInt8]) throws {
        let root = try BER.parse(extensionValue)
        guard case .constructed(let items) = root.content else { throw Malformed() }
        let fields = Array(items)
        guard fields.count >= 8 else { throw Malformed() }
        attestationVersion = try Self.integer(fields[0])
        attestationSecurityLevel = try Self.level(fields[1])
        keymasterVersion = try Self.integer(fields[2])
        keymasterSecurityLevel = try Self.level(fields[3])
        guard case .primitive(let challenge) = fields[4].content else { throw Malformed() }
        self.challenge = Array(challenge)
        let software = try Self.authorizations(fields[6]), hardware = try Self.authorizations(fields[7])
        // Only the secure hardware vouches for the boot state: a root of trust in the software list
        // is the operating system's word.
        rootOfTrust = try hardware[704].map(Self.rootOfTrust)
        allApplications = software[600] != nil || hardware[600] != nil
        origin = try (hardware[702] ?? software[702]).map(Self.integer)
        if let purpose = hardware[1] ?? software[1] {
            guard case .constructed(let values) = purpose.content else { throw Malformed() }
            purposes = try values.map(Self.integer)
        } else {
            purposes = []
        }
        packages = []
        signatureDigests = []
        if let applicationID = software[709] ?? hardware[709] {
            guard case .primitive(let bytes) = applicationID.content else { throw Malformed() }
            let inner = try BER.parse(Array(bytes))
            guard case .constructed(let parts) = inner.content else { throw Malformed() }
            let pieces = Array(parts)
            guard pieces.count == 2, case .constructed(let infos) = pieces[0].content, case .constructed(let digests) = pieces[1].content else { throw Malformed() }
            for info in infos {
                guard case .constructed(let values) = info.content else { throw Malformed() }
                let pair = Array(values)
                guard pair.count == 2, case .primitive(let name) = pair[0].content else { throw Malformed() }
                packages.append(Package(name: String(decoding: name, as: UTF8.self), version: (try? Self.integer(pair[1])) ?? 0))
            }
            for digest in digests {
                guard case .primitive(let bytes) = digest.content else { throw Malformed() }
                signatureDigests.append(Array(bytes))
            }
        }
    }

    /// An AuthorizationList's explicitly tagged fields, by tag number.
    public static func authorizations(_ node: ASN1Node) throws -> [UInt: ASN1Node] {
        guard case .constructed(let items) = node.content else { throw Malformed() }
        var fields: [UInt: ASN1Node] = [:]
        for item in items where item.identifier.tagClass == .contextSpecific {
            guard case .constructed(let inner) = item.content, let value = Array(inner).first else { throw Malformed() }
            fields[item.identifier.tagNumber] = value
        }
        return fields
    }

    public static func rootOfTrust(_ node: ASN1Node) throws -> RootOfTrust {
        guard case .constructed(let items) = node.content else { throw Malformed() }
        let fields = Array(items)
        guard fields.count >= 3, fields[1].identifier == .boolean, case .primitive(let locked) = fields[1].content, locked.count == 1,
            let state = BootState(rawValue: try integer(fields[2]))
        else { throw Malformed() }
        return RootOfTrust(deviceLocked: locked.first != 0, bootState: state)
    }

    public static func integer(_ node: ASN1Node) throws -> Int {
        guard node.identifier == .integer || node.identifier == .enumerated, case .primitive(let bytes) = node.content, !bytes.isEmpty, bytes.count <= 8 else {
            throw Malformed()
        }
        let negative = bytes.first! & 0x80 != 0
        let value = bytes.reduce(negative ? -1 : 0) { $0 << 8 | Int($1) }
        return value
    }

    public static func level(_ node: ASN1Node) throws -> SecurityLevel {
        guard let level = SecurityLevel(rawValue: try integer(node)) else { throw Malformed() }
        return level
    }
}
