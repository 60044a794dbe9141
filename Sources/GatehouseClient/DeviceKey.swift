import Crypto
import Foundation

/// A P-256 signing key of this installation: the device key it registers and signs in with, and the
/// key its DPoP proofs are made with. Where the private key lives (Secure Enclave, Keychain, memory,
/// a file) is the `DeviceKeyStore`'s business; the SDK only asks it to sign.
public protocol DeviceKey: Sendable {
    /// The public key as its raw x‖y coordinates (64 bytes).
    var publicKeyRawRepresentation: Data { get }
    /// An ES256 signature of `data`: raw r‖s, 64 bytes (the JOSE form, not DER).
    func sign(_ data: Data) async throws -> Data
}

extension DeviceKey {
    /// The public key as a JWK (RFC 7517): `{"kty":"EC","crv":"P-256","x","y"}`.
    public var publicJWK: JSON {
        let raw = publicKeyRawRepresentation
        return ["kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(raw.prefix(32))), "y": .string(Base64URL.encode(raw.suffix(32)))]
    }

    /// The RFC 7638 thumbprint of the public key: the broker's id for a device key, and the `jkt` of
    /// tokens bound to it.
    public var thumbprint: String {
        // The required members in lexicographic order, no whitespace (RFC 7638 section 3.3).
        let jwk = publicJWK
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(jwk["x"]?.string ?? "")","y":"\#(jwk["y"]?.string ?? "")"}"#
        return Base64URL.encode(SHA256.hash(data: Data(canonical.utf8)))
    }

    /// A compact JWS (RFC 7515) of `claims`, signed ES256 with this key.
    func jws(header extra: [String: JSON] = [:], claims: [String: JSON]) async throws -> String {
        var header = extra
        header["alg"] = "ES256"
        let signingInput = Base64URL.encode(try JSON.object(header).compactData()) + "." + Base64URL.encode(try JSON.object(claims).compactData())
        let signature = try await sign(Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}

/// Where an installation keeps its keys, by name (`device` for the sign-in key, `dpop` for the proof
/// key when it is a separate one). On Apple platforms `SecureEnclaveKeyStore` keeps them in the Secure
/// Enclave where there is one; `SoftwareKeyStore` keeps them in memory or a file (tests, Linux).
public protocol DeviceKeyStore: Sendable {
    /// The key named `name`, if this installation has one.
    func key(named name: String) async throws -> (any DeviceKey)?
    /// A new key named `name`, replacing any old one.
    func makeKey(named name: String) async throws -> any DeviceKey
    /// Forgets the key named `name` (deregistration, logout of a device).
    func deleteKey(named name: String) async throws
    /// The key named `name`, made now if there is none; two calls at once must get the same key (an
    /// actor store does both steps without letting another call in between).
    func existingOrNewKey(named name: String) async throws -> any DeviceKey
}

/// A software P-256 key (swift-crypto).
public struct SoftwareDeviceKey: DeviceKey {
    let privateKey: P256.Signing.PrivateKey

    public init(privateKey: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) { self.privateKey = privateKey }

    public var publicKeyRawRepresentation: Data { privateKey.publicKey.rawRepresentation }

    public func sign(_ data: Data) async throws -> Data {
        try privateKey.signature(for: data).rawRepresentation
    }
}

/// Keys in software: in memory only, or also in a directory (one PEM file per key, readable by the
/// owner only) so that they outlive the process. For tests, command-line tools and Linux; an iOS app
/// uses `SecureEnclaveKeyStore`.
public actor SoftwareKeyStore: DeviceKeyStore {
    private var keys: [String: SoftwareDeviceKey] = [:]
    private let directory: URL?

    /// `directory`: where the keys are kept across runs; nil keeps them in memory only.
    public init(directory: URL? = nil) {
        self.directory = directory
    }

    public func key(named name: String) async throws -> (any DeviceKey)? {
        if let key = keys[name] { return key }
        guard let file = file(name), FileManager.default.fileExists(atPath: file.path) else { return nil }
        let key = SoftwareDeviceKey(privateKey: try P256.Signing.PrivateKey(pemRepresentation: String(decoding: try Data(contentsOf: file), as: UTF8.self)))
        keys[name] = key
        return key
    }

    public func makeKey(named name: String) async throws -> any DeviceKey {
        let key = SoftwareDeviceKey()
        if let file = file(name) { try OwnerOnlyFile.write(Data(key.privateKey.pemRepresentation.utf8), to: file) }
        keys[name] = key
        return key
    }

    /// Inside the actor, with no suspension between the look-up and the making: two first uses at
    /// once get one key.
    public func existingOrNewKey(named name: String) async throws -> any DeviceKey {
        if let key = try await key(named: name) { return key }
        return try await makeKey(named: name)
    }

    public func deleteKey(named name: String) async throws {
        keys[name] = nil
        if let file = file(name), FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }

    private func file(_ name: String) -> URL? {
        directory?.appendingPathComponent("\(name).pem")
    }
}
