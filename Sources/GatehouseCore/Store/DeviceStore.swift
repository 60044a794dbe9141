import Foundation

/// Devices, their installations and the sign-in keys registered from them, per account.
public protocol DeviceStore: Sendable {
    /// In one transaction: finds the account's device (by vendor id; without one, by the installation
    /// id of an earlier registration) or makes it, finds or makes the installation (by app and
    /// installation id), and adds the key. A new installation of an app on a device that had another
    /// installation of the same app (a reinstall) retires the older ones: their keys and those keys'
    /// identity links are deleted and their refresh tokens revoked. A key whose thumbprint is
    /// registered already is refused (`invalid_key`).
    func registerSignInKey(_ key: NewSignInKey, accountID: String, appID: String, providerID: String, now: Date) async throws -> SignInKeyRegistered
    /// A sign-in key by its id (the JWK thumbprint, or App Attest's key id); nil when none or removed.
    func signInKey(id: String) async throws -> SignInKey?
    /// Records a sign-in with the key (last-used times of key, installation and device). With a
    /// counter, only if it is higher than the stored one; false (nothing written) when it is not.
    func recordSignInKeyUse(id: String, counter: Int?, now: Date) async throws -> Bool
    /// The account's devices, oldest first, with their installations and keys.
    func devices(accountID: String) async throws -> [DeviceRecord]
    /// Renames the account's device; false when the account has no such device.
    func renameDevice(id: String, accountID: String, alias: String) async throws -> Bool
    /// In one transaction: deletes the account's device with its installations, keys and those keys'
    /// identity links, and revokes the refresh tokens issued through the keys. Returns the ids of the
    /// keys removed, nil when the account has no such device.
    func removeDevice(id: String, accountID: String, now: Date) async throws -> [String]?
    /// The installations of `appID` made with this installation id that hold at least one key, of
    /// every account (one installation may be active for several accounts), oldest first.
    func installations(appID: String, installationID: String) async throws -> [Installation]
    /// In one transaction: deletes one installation of the account with its keys and those keys'
    /// identity links, and revokes the refresh tokens issued through the keys. Returns the ids of the
    /// keys removed, nil when the account has no such installation.
    func removeInstallation(id: String, accountID: String, now: Date) async throws -> [String]?
}

extension DeviceDirectory {
    /// The device reads (and the one write, a key's use) plugins make, forwarded to `store`.
    public init(_ store: any DeviceStore) {
        self.init(
            signInKey: { try await store.signInKey(id: $0) }, recordSignInKeyUse: { try await store.recordSignInKeyUse(id: $0, counter: $1, now: $2) },
            devices: { try await store.devices(accountID: $0) }, installations: { try await store.installations(appID: $0, installationID: $1) }
        )
    }
}
