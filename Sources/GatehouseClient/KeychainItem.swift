#if canImport(Security)
import Foundation
import Security

/// A generic-password item of the data-protection Keychain, readable after the device's first unlock
/// and never on another device or in a backup (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`).
enum KeychainItem {
    /// Replaces the item's data in place, or adds the item when there is none: there is never a moment
    /// without it, so a crash or a refused write keeps the old value (a refresh token, a device key).
    static func write(_ data: Data, query: [String: Any]) throws {
        let attributes: [String: Any] = [
            kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        let updated = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if updated == errSecSuccess { return }
        guard updated == errSecItemNotFound else { throw GatehouseError.transport("the Keychain answered \(updated)") }
        let item = query.merging(attributes) { _, new in new }
        let added = SecItemAdd(item as CFDictionary, nil)
        guard added == errSecSuccess else { throw GatehouseError.transport("the Keychain answered \(added)") }
    }
}
#endif
