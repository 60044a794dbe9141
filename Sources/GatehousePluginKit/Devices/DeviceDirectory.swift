import Foundation

/// The devices and sign-in keys of every account, as plugins use them (`PluginEnvironment.devices`):
/// reading keys, devices and installations, and recording a key's use. Registering and removing
/// devices is the broker's (the flow engine and the account API).
public struct DeviceDirectory: Sendable {
    private let readKey: @Sendable (String) async throws -> SignInKey?
    private let recordUse: @Sendable (String, Int?, Date) async throws -> Bool
    private let readDevices: @Sendable (String) async throws -> [DeviceRecord]
    private let readInstallations: @Sendable (String, String) async throws -> [Installation]

    /// A directory over the broker's device store.
    package init(
        signInKey: @escaping @Sendable (String) async throws -> SignInKey?, recordSignInKeyUse: @escaping @Sendable (String, Int?, Date) async throws -> Bool,
        devices: @escaping @Sendable (String) async throws -> [DeviceRecord], installations: @escaping @Sendable (String, String) async throws -> [Installation]
    ) {
        readKey = signInKey
        recordUse = recordSignInKeyUse
        readDevices = devices
        readInstallations = installations
    }

    /// A sign-in key by its id (the JWK thumbprint, or App Attest's key id); nil when none or removed.
    public func signInKey(id: String) async throws -> SignInKey? { try await readKey(id) }
    /// Records a sign-in with the key (last-used times of key, installation and device). With a
    /// counter, only if it is higher than the stored one; false (nothing written) when it is not.
    public func recordSignInKeyUse(id: String, counter: Int?, now: Date) async throws -> Bool { try await recordUse(id, counter, now) }
    /// The account's devices, oldest first, with their installations and keys.
    public func devices(accountID: String) async throws -> [DeviceRecord] { try await readDevices(accountID) }
    /// The installations of `appID` made with this installation id that hold at least one key, of
    /// every account, oldest first.
    public func installations(appID: String, installationID: String) async throws -> [Installation] { try await readInstallations(appID, installationID) }
}
