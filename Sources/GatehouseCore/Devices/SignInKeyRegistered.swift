import Foundation

/// What the store did with a registration.
public struct SignInKeyRegistered: Sendable, Hashable {
    /// The key as stored.
    public var key: SignInKey
    /// Its device (new or found by vendor id).
    public var device: Device
    /// Its installation.
    public var installation: Installation
    /// Keys of the installations this one replaced (the same app reinstalled on the same device):
    /// deleted, with their refresh tokens revoked; their access tokens are for the caller to revoke.
    public var retiredKeyIDs: [String]
    /// Whether the device was new to the account.
    public var newDevice: Bool

    /// What storing a new key did.
    public init(key: SignInKey, device: Device, installation: Installation, retiredKeyIDs: [String], newDevice: Bool) {
        self.key = key
        self.device = device
        self.installation = installation
        self.retiredKeyIDs = retiredKeyIDs
        self.newDevice = newDevice
    }
}
