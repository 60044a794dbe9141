import Foundation

/// The platform a device reports.
public enum DevicePlatform: String, Sendable, Hashable, Codable, CaseIterable {
    /// iOS, Android, or a web app.
    case ios, android, web
}

/// A phone, tablet or browser of one account. A device with a vendor id (iOS identifierForVendor,
/// Android ID) is recognised again when the app is reinstalled on it; one without is known by its
/// installation only. Another account on the same hardware has a device of its own: accounts never
/// see or inherit each other's devices.
public struct Device: Sendable, Hashable, Codable {
    /// The device's id, made by the broker.
    public var id: String
    /// The account it belongs to.
    public var accountID: String
    /// The vendor's id of the hardware, where the platform has one (`identifierForVendor`).
    public var vendorID: String?
    /// iOS, Android or the web.
    public var platform: DevicePlatform
    /// The model the device says it is.
    public var model: String?
    /// The name the person sees and may change.
    public var alias: String
    /// When it was first registered.
    public var createdAt: Date
    /// When one of its keys last signed in.
    public var lastUsedAt: Date?

    /// A device as the store keeps it.
    public init(id: String, accountID: String, vendorID: String?, platform: DevicePlatform, model: String?, alias: String, createdAt: Date, lastUsedAt: Date? = nil) {
        self.id = id
        self.accountID = accountID
        self.vendorID = vendorID
        self.platform = platform
        self.model = model
        self.alias = alias
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// One install of one app on a device, known by the random id the app made on its first launch. A
/// reinstall is a new installation: it inherits nothing from the old one, whose keys stop working.
public struct Installation: Sendable, Hashable, Codable {
    /// The installation's id, made by the broker (not the app's installation id, which is kept hashed).
    public var id: String
    /// The device it runs on.
    public var deviceID: String
    /// The account it was registered for.
    public var accountID: String
    /// The app it is an installation of.
    public var appID: String
    /// The id the app made for itself.
    public var installationID: String
    /// The operating system's version it last reported.
    public var osVersion: String?
    /// The app's version it last reported.
    public var appVersion: String?
    /// `release` or `debug`.
    public var buildType: String?
    /// Where the app's back end sends pushes to this installation (APNs or FCM token), as the app gave it.
    public var pushToken: String?
    /// Whether the person enrolled a biometric factor on this installation (the app's word for it).
    public var biometric: Bool?
    /// When it was registered.
    public var createdAt: Date
    /// When one of its keys last signed in.
    public var lastUsedAt: Date?

    /// An installation as the store keeps it.
    public init(
        id: String, deviceID: String, accountID: String, appID: String, installationID: String, osVersion: String?, appVersion: String?, buildType: String?,
        pushToken: String? = nil, biometric: Bool? = nil, createdAt: Date, lastUsedAt: Date? = nil
    ) {
        self.pushToken = pushToken
        self.biometric = biometric
        self.id = id
        self.deviceID = deviceID
        self.accountID = accountID
        self.appID = appID
        self.installationID = installationID
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.buildType = buildType
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A public key an installation registered to sign in with: the app keeps the private key (in the
/// Secure Enclave or Android Keystore where it can), the broker only the public one.
public struct SignInKey: Sendable, Hashable, Codable {
    /// The key id: the `iss` of the assertions it signs.
    public var id: String
    /// The account the key signs in to.
    public var accountID: String
    /// The device it was registered from.
    public var deviceID: String
    /// The `Installation.id` it was registered from.
    public var installationRef: String
    /// The identity provider instance that registered it (its identity link is `(providerID, id)`).
    public var providerID: String
    /// The public key, as a JWK.
    public var publicKey: JSONValue
    /// RFC 7638 thumbprint of the public key.
    public var thumbprint: String
    /// The JWS algorithm it signs with (`ES256`, `EdDSA`...).
    public var algorithm: String
    /// The highest signature counter seen, for keys whose assertions carry one.
    public var counter: Int?
    /// What proved the key lives on a genuine device (an attestation format), when anything did.
    public var attestation: String?
    /// The app the key was registered through (its installation's app), so that each sign-in is held
    /// to the policy of the app it happens at (an app requiring attestation accepts only keys attested
    /// when registered through it). Nil when the installation is gone.
    public var registeredAppID: String?
    /// When it was registered.
    public var createdAt: Date
    /// When it last signed in.
    public var lastUsedAt: Date?

    /// A sign-in key as the store keeps it.
    public init(
        id: String, accountID: String, deviceID: String, installationRef: String, providerID: String, publicKey: JSONValue, thumbprint: String,
        algorithm: String, counter: Int? = nil, attestation: String? = nil, registeredAppID: String? = nil, createdAt: Date, lastUsedAt: Date? = nil
    ) {
        self.id = id
        self.accountID = accountID
        self.deviceID = deviceID
        self.installationRef = installationRef
        self.providerID = providerID
        self.publicKey = publicKey
        self.thumbprint = thumbprint
        self.algorithm = algorithm
        self.counter = counter
        self.attestation = attestation
        self.registeredAppID = registeredAppID
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A device with its installations and their keys, as the account and admin APIs list it.
public struct DeviceRecord: Sendable, Hashable {
    /// The device.
    public var device: Device
    /// Its installations.
    public var installations: [Installation]
    /// The sign-in keys registered from them.
    public var keys: [SignInKey]

    /// A device with everything registered from it.
    public init(device: Device, installations: [Installation], keys: [SignInKey]) {
        self.device = device
        self.installations = installations
        self.keys = keys
    }
}
