import Foundation

/// What a device tells about itself when it registers a sign-in key.
public struct DeviceFacts: Sendable, Hashable, Codable {
    public var installationID: String
    public var vendorID: String?
    public var platform: DevicePlatform
    public var model: String?
    public var osVersion: String?
    public var appVersion: String?
    public var buildType: String?
    public var alias: String?

    public init(
        installationID: String, vendorID: String? = nil, platform: DevicePlatform, model: String? = nil, osVersion: String? = nil, appVersion: String? = nil,
        buildType: String? = nil, alias: String? = nil
    ) {
        self.installationID = installationID
        self.vendorID = vendorID
        self.platform = platform
        self.model = model
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.buildType = buildType
        self.alias = alias
    }
}

/// A sign-in key a provider has verified (proof of possession, attestation where asked) and that the
/// engine registers once the flow knows the account: its id, public key and the device's facts.
public struct NewSignInKey: Sendable, Hashable, Codable {
    public var keyID: String
    public var publicKey: JSONValue
    public var thumbprint: String
    public var algorithm: String
    public var counter: Int?
    public var attestation: String?
    public var device: DeviceFacts
    /// What the attestation established (app id, environment, security level...), for the audit log.
    public var attestationFacts: [String: String]?

    public init(
        keyID: String, publicKey: JSONValue, thumbprint: String, algorithm: String, counter: Int? = nil, attestation: String? = nil, device: DeviceFacts,
        attestationFacts: [String: String]? = nil
    ) {
        self.attestationFacts = attestationFacts
        self.keyID = keyID
        self.publicKey = publicKey
        self.thumbprint = thumbprint
        self.algorithm = algorithm
        self.counter = counter
        self.attestation = attestation
        self.device = device
    }
}

/// What the store did with a registration.
public struct SignInKeyRegistered: Sendable, Hashable {
    public var key: SignInKey
    public var device: Device
    public var installation: Installation
    /// Keys of the installations this one replaced (the same app reinstalled on the same device):
    /// deleted, with their refresh tokens revoked; their access tokens are for the caller to revoke.
    public var retiredKeyIDs: [String]
    /// Whether the device was new to the account.
    public var newDevice: Bool

    public init(key: SignInKey, device: Device, installation: Installation, retiredKeyIDs: [String], newDevice: Bool) {
        self.key = key
        self.device = device
        self.installation = installation
        self.retiredKeyIDs = retiredKeyIDs
        self.newDevice = newDevice
    }
}
