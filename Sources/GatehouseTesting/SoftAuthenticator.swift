import Crypto
import Foundation
import GatehouseCore

/// A software WebAuthn authenticator for the tests (the engine's and the client SDK's): P-256
/// credentials, `none` attestation (or packed self attestation), assertions with a counter,
/// discoverable credentials by relying party. The independent authenticators are the Python ones
/// (soft-webauthn) and Chromium's virtual one.
public final class SoftAuthenticator: @unchecked Sendable {
    /// A credential it made.
    public struct Credential {
        public let id: [UInt8]
        let key: P256.Signing.PrivateKey
        public let rpID: String
        public let userHandle: String
        public var signCount: UInt32
    }

    public var credentials: [Credential] = []
    /// Whether it verifies the person (the UV flag).
    public var userVerifying = true
    /// Whether its credentials are synced passkeys (the BE and BS flags).
    public var backupEligible = true
    /// Packed self attestation instead of `none`.
    public var selfAttestation = false
    /// What the next assertion's counter is set to instead of counting up (a cloned authenticator).
    public var counterOverride: UInt32?
    /// The id the next credential gets instead of a random one (a credential id registered twice).
    public var fixedID: [UInt8]?
    /// An attestation format it claims, with a statement nobody can verify (`{"sig": 0}`).
    public var claimedFormat: String?
    /// Whether assertions carry the user handle (authenticators of non-discoverable credentials may
    /// leave it out).
    public var returnsUserHandle = true

    public init() {}

    static func b64(_ bytes: some Collection<UInt8>) -> String { Base64URL.encode(bytes: Array(bytes)) }

    func flags(attested: Bool) -> UInt8 {
        var flags: UInt8 = 0x01
        if userVerifying { flags |= 0x04 }
        if backupEligible { flags |= 0x08 | 0x10 }
        if attested { flags |= 0x40 }
        return flags
    }

    /// `navigator.credentials.create` for the options JSON, from `origin`; answers RegistrationResponseJSON.
    public func create(_ options: JSONValue, origin: String) -> JSONValue {
        let rpID = options["rp"]?["id"]?.stringValue ?? ""
        let handle = options["user"]?["id"]?.stringValue ?? ""
        let id = fixedID ?? (0..<32).map { _ in UInt8.random(in: 0...255) }
        let key = P256.Signing.PrivateKey()
        credentials.append(Credential(id: id, key: key, rpID: rpID, userHandle: handle, signCount: 0))
        let clientData = Array(#"{"type":"webauthn.create","challenge":"\#(options["challenge"]?.stringValue ?? "")","origin":"\#(origin)","crossOrigin":false}"#.utf8)
        let point = Array(key.publicKey.x963Representation)
        let cose = CBORWriter.map([
            (.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Array(point[1...32]))), (.int(-3), .bytes(Array(point[33...64]))),
        ])
        let authData = Array(SHA256.hash(data: Data(rpID.utf8))) + [flags(attested: true), 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0, 32] + id + cose
        var statement = CBORWriter.map([])
        var format = "none"
        if let claimedFormat {
            format = claimedFormat
            statement = CBORWriter.map([(.text("sig"), .bytes([0]))])
        } else if selfAttestation {
            format = "packed"
            let signature = Array(try! key.signature(for: authData + Array(SHA256.hash(data: clientData))).derRepresentation)
            statement = CBORWriter.map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(signature))])
        }
        let object = CBORWriter.map([(.text("fmt"), .text(format)), (.text("attStmt"), .raw(statement)), (.text("authData"), .bytes(authData))])
        return [
            "id": .string(Self.b64(id)), "rawId": .string(Self.b64(id)), "type": "public-key",
            "response": ["clientDataJSON": .string(Self.b64(clientData)), "attestationObject": .string(Self.b64(object)), "transports": ["internal"]],
        ]
    }

    /// `navigator.credentials.get`: the first credential for the relying party that the options allow.
    public func get(_ options: JSONValue, origin: String, challenge override: String? = nil) -> JSONValue? {
        let rpID = options["rpId"]?.stringValue ?? ""
        let allowed = options["allowCredentials"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        guard let index = credentials.firstIndex(where: { $0.rpID == rpID && (allowed.isEmpty || allowed.contains(Self.b64($0.id))) }) else { return nil }
        credentials[index].signCount = counterOverride ?? credentials[index].signCount + 1
        let credential = credentials[index]
        let clientData = Array(#"{"type":"webauthn.get","challenge":"\#(override ?? options["challenge"]?.stringValue ?? "")","origin":"\#(origin)"}"#.utf8)
        let count = credential.signCount
        let authData =
            Array(SHA256.hash(data: Data(rpID.utf8))) + [
                flags(attested: false), UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff),
            ]
        let signature = Array(try! credential.key.signature(for: authData + Array(SHA256.hash(data: clientData))).derRepresentation)
        var response: [String: JSONValue] = [
            "clientDataJSON": .string(Self.b64(clientData)), "authenticatorData": .string(Self.b64(authData)), "signature": .string(Self.b64(signature)),
        ]
        if returnsUserHandle { response["userHandle"] = .string(credential.userHandle) }
        return ["id": .string(Self.b64(credential.id)), "rawId": .string(Self.b64(credential.id)), "type": "public-key", "response": .object(response)]
    }
}

/// Just enough CBOR encoding for the tests' authenticator: maps, ints, text and bytes.
public enum CBORWriter {
    /// A data item to write.
    public indirect enum Item {
        case int(Int)
        case text(String)
        case bytes([UInt8])
        case array([Item])
        case raw([UInt8])
    }

    static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        switch value {
        case 0..<24: [major << 5 | UInt8(value)]
        case 24..<256: [major << 5 | 24, UInt8(value)]
        case 256..<65536: [major << 5 | 25, UInt8(value >> 8), UInt8(value & 0xff)]
        default: [major << 5 | 26] + (0..<4).reversed().map { UInt8(value >> (8 * UInt64($0)) & 0xff) }
        }
    }

    static func encode(_ item: Item) -> [UInt8] {
        switch item {
        case .int(let value): value >= 0 ? head(0, UInt64(value)) : head(1, UInt64(-1 - value))
        case .text(let text): head(3, UInt64(text.utf8.count)) + Array(text.utf8)
        case .bytes(let bytes): head(2, UInt64(bytes.count)) + bytes
        case .array(let items): head(4, UInt64(items.count)) + items.flatMap(encode)
        case .raw(let bytes): bytes
        }
    }

    public static func map(_ pairs: [(Item, Item)]) -> [UInt8] {
        head(5, UInt64(pairs.count)) + pairs.flatMap { encode($0.0) + encode($0.1) }
    }
}
