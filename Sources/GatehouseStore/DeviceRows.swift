import Foundation
import GatehouseCore

/// What both stores make alike for devices: new rows from a registration, and the listing shape.
enum DeviceRows {
    static func newDevice(_ facts: DeviceFacts, accountID: String, now: Date) -> Device {
        let alias = facts.alias ?? facts.model ?? facts.platform.rawValue
        return Device(
            id: "dev_" + RandomToken.make(byteCount: 12), accountID: accountID, vendorID: facts.vendorID, platform: facts.platform, model: facts.model,
            alias: alias, createdAt: now, lastUsedAt: now
        )
    }

    static func newInstallation(_ facts: DeviceFacts, deviceID: String, accountID: String, appID: String, now: Date) -> Installation {
        Installation(
            id: "ins_" + RandomToken.make(byteCount: 12), deviceID: deviceID, accountID: accountID, appID: appID, installationID: facts.installationID,
            osVersion: facts.osVersion, appVersion: facts.appVersion, buildType: facts.buildType, pushToken: facts.pushToken, biometric: facts.biometric,
            createdAt: now, lastUsedAt: now
        )
    }

    static func newKey(_ key: NewSignInKey, accountID: String, deviceID: String, installationRef: String, appID: String, providerID: String, now: Date) -> SignInKey {
        SignInKey(
            id: key.keyID, accountID: accountID, deviceID: deviceID, installationRef: installationRef, providerID: providerID, publicKey: key.publicKey,
            thumbprint: key.thumbprint, algorithm: key.algorithm, counter: key.counter, attestation: key.attestation, registeredAppID: appID, createdAt: now,
            lastUsedAt: now
        )
    }

    static func records(devices: [Device], installations: [Installation], keys: [SignInKey]) -> [DeviceRecord] {
        devices.map { device in
            DeviceRecord(device: device, installations: installations.filter { $0.deviceID == device.id }, keys: keys.filter { $0.deviceID == device.id })
        }
    }

    /// The same public key registered twice.
    static let keyTaken = BrokerError(.invalidKey, .conflict, "This public key is registered already; make a new key pair.").because("key_registered")
}
