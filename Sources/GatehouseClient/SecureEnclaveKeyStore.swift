#if canImport(CryptoKit) && canImport(Security)
import CryptoKit
import Foundation
import Security

/// Device keys in the Secure Enclave (iPhone, iPad, Macs with one): the private key never leaves the
/// hardware; what is kept in the Keychain is the enclave's wrapped key blob, which only this device's
/// enclave can use (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: not in backups). Where there
/// is no enclave (the Simulator, older Macs) making a key throws: check `isAvailable` and use
/// `SoftwareKeyStore` there. On macOS the data-protection Keychain needs a signed app with an
/// application identifier (an unsigned tool gets `errSecMissingEntitlement`, -34018).
public actor SecureEnclaveKeyStore: DeviceKeyStore {
    private let service: String

    /// `service`: the Keychain service the wrapped keys are kept under (one per app).
    public init(service: String) {
        self.service = service
    }

    /// Whether this device has a Secure Enclave to keep keys in.
    public static var isAvailable: Bool { SecureEnclave.isAvailable }

    public func key(named name: String) async throws -> (any DeviceKey)? {
        var query = baseQuery(name)
        query[kSecReturnData as String] = true
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let blob = item as? Data else { throw GatehouseError.transport("the Keychain answered \(status)") }
        return EnclaveKey(key: try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: blob))
    }

    public func existingOrNewKey(named name: String) async throws -> any DeviceKey {
        if let key = try await key(named: name) { return key }
        return try await makeKey(named: name)
    }

    public func makeKey(named name: String) async throws -> any DeviceKey {
        // Usable after the first unlock (DPoP proofs and renewals run while the device is locked),
        // never on another device.
        guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, .privateKeyUsage, nil) else {
            throw GatehouseError.transport("cannot make the Secure Enclave key's access control")
        }
        guard SecureEnclave.isAvailable else { throw GatehouseError.transport("this device has no Secure Enclave: use SoftwareKeyStore") }
        let key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
        try KeychainItem.write(key.dataRepresentation, query: baseQuery(name))
        return EnclaveKey(key: key)
    }

    public func deleteKey(named name: String) async throws {
        let status = SecItemDelete(baseQuery(name) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw GatehouseError.transport("the Keychain answered \(status)") }
    }

    private func baseQuery(_ name: String) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: name,
            kSecUseDataProtectionKeychain as String: true,
        ]
    }

    struct EnclaveKey: DeviceKey {
        let key: SecureEnclave.P256.Signing.PrivateKey
        var publicKeyRawRepresentation: Data { key.publicKey.rawRepresentation }
        func sign(_ data: Data) async throws -> Data { try key.signature(for: data).rawRepresentation }
    }
}
#endif
