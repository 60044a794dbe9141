import Foundation

/// The devices of an account, for the person (the account API, with their access token) and for
/// administrators: list them with their installations and keys, rename one, remove one. Removing a
/// device deletes its keys and revokes every token issued through them, at once and on every node.
public struct DeviceService: Sendable {
    let store: any BrokerStore
    let oauth: OAuthService
    let plugins: PluginInstances
    let clock: any BrokerClock

    public init(store: any BrokerStore, oauth: OAuthService, plugins: PluginInstances, clock: any BrokerClock) {
        self.store = store
        self.oauth = oauth
        self.plugins = plugins
        self.clock = clock
    }

    /// The longest alias a device may have.
    public static let maxAliasLength = DeviceFacts.maxAliasLength

    // MARK: - The person

    public func devices(accessToken: PresentedToken) async throws -> [DeviceRecord] {
        try await store.devices(accountID: try await signedIn(accessToken).accountID)
    }

    public func rename(_ deviceID: String, alias: String, accessToken: PresentedToken) async throws -> DeviceRecord {
        let owner = try await signedIn(accessToken)
        let alias = try Self.checkedAlias(alias)
        guard try await store.renameDevice(id: deviceID, accountID: owner.accountID, alias: alias),
            let record = try await store.devices(accountID: owner.accountID).first(where: { $0.device.id == deviceID })
        else { throw Self.noSuchDevice }
        try await store.appendAudit(AuditEvent(time: clock.now, type: "device.renamed", appID: owner.appID, accountID: owner.accountID, details: ["device": deviceID]))
        return record
    }

    public func remove(_ deviceID: String, accessToken: PresentedToken) async throws {
        let owner = try await signedIn(accessToken)
        try await remove(deviceID, accountID: owner.accountID, details: ["by": "account"], appID: owner.appID)
    }

    // MARK: - The person, on the account page (signed in there: the caller proved the account)

    public func rename(_ deviceID: String, alias: String, ownAccountID accountID: String) async throws {
        let alias = try Self.checkedAlias(alias)
        guard try await store.renameDevice(id: deviceID, accountID: accountID, alias: alias) else { throw Self.noSuchDevice }
        try await store.appendAudit(
            AuditEvent(time: clock.now, type: "device.renamed", appID: ConsoleConfig.accountAppID, accountID: accountID, details: ["device": deviceID]))
    }

    public func remove(_ deviceID: String, ownAccountID accountID: String) async throws {
        try await remove(deviceID, accountID: accountID, details: ["by": "account"], appID: ConsoleConfig.accountAppID)
    }

    // MARK: - Administrators

    public func devices(accountID: String) async throws -> [DeviceRecord] {
        guard try await store.account(id: accountID) != nil else { throw BrokerError(.notFound, .notFound, "No account '\(accountID)'.") }
        return try await store.devices(accountID: accountID)
    }

    public func remove(_ deviceID: String, accountID: String, by admin: AdminIdentity) async throws {
        guard try await store.account(id: accountID) != nil else { throw BrokerError(.notFound, .notFound, "No account '\(accountID)'.") }
        try await remove(deviceID, accountID: accountID, details: admin.auditDetails.merging(["by": "admin"]) { first, _ in first }, appID: nil)
    }

    // MARK: -

    private func remove(_ deviceID: String, accountID: String, details: [String: String], appID: String?) async throws {
        let now = clock.now
        guard let keyIDs = try await store.removeDevice(id: deviceID, accountID: accountID, now: now) else { throw Self.noSuchDevice }
        try await oauth.revoker.signInKeys(keyIDs)
        var details = details
        details["device"] = deviceID
        details["keys"] = keyIDs.joined(separator: " ")
        try await store.appendAudit(AuditEvent(time: now, type: "device.removed", appID: appID, accountID: accountID, details: details))
    }

    static let noSuchDevice = BrokerError(.notFound, .notFound, "This account has no such device.")

    /// A trimmed alias of 1 to 64 characters without control characters (`DeviceFacts.checkedAlias`).
    public static func checkedAlias(_ alias: String) throws(BrokerError) -> String { try DeviceFacts.checkedAlias(alias) }

    /// The account and app behind an access token; a stateless sign-in has no devices. Only the
    /// token of an app that registers devices (one of its identity providers registers sign-in keys
    /// from devices) manages them, as Keycloak keeps its account API to its account console: a web
    /// app's token, or a third party's, cannot list or remove the person's phones.
    private func signedIn(_ accessToken: PresentedToken) async throws -> (accountID: String, appID: String) {
        let claims = try await oauth.authorize(accessToken)
        guard !claims.stateless else { throw BrokerError.stateless(.accountCredentials) }
        guard let app = try await oauth.clients.apps.app(id: claims.clientID), !app.disabled, !ConsoleConfig.isBuiltIn(app.id), plugins.registersDevices(for: app) else {
            throw BrokerError(.insufficientScope, .forbidden, "Only an app that registers devices (its policy lists a device provider) may manage the account's devices.")
        }
        guard try await store.account(id: claims.sub.value) != nil else { throw BrokerError(.invalidToken, .unauthenticated, "The account no longer exists.") }
        return (claims.sub.value, claims.clientID)
    }
}

extension DeviceRecord {
    /// The JSON the account and admin APIs answer with: the device, its installations, and under
    /// each installation the keys registered from it (public facts only).
    public var json: JSONValue {
        let time = ISO8601DateFormatter()
        func date(_ value: Date?) -> JSONValue { value.map { .string(time.string(from: $0)) } ?? .null }
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        let installations: [JSONValue] = installations.map { installation in
            let keys: [JSONValue] = keys.filter { $0.installationRef == installation.id }.map { key in
                [
                    "id": .string(key.id), "algorithm": .string(key.algorithm), "thumbprint": .string(key.thumbprint), "attestation": text(key.attestation),
                    "registeredAt": date(key.createdAt), "lastUsedAt": date(key.lastUsedAt),
                ]
            }
            return [
                "id": .string(installation.id), "app": .string(installation.appID), "installationID": .string(installation.installationID),
                "osVersion": text(installation.osVersion), "appVersion": text(installation.appVersion), "buildType": text(installation.buildType),
                "pushToken": text(installation.pushToken), "biometric": installation.biometric.map(JSONValue.bool) ?? .null,
                "registeredAt": date(installation.createdAt), "lastUsedAt": date(installation.lastUsedAt), "keys": .array(keys),
            ]
        }
        return [
            "id": .string(device.id), "alias": .string(device.alias), "platform": .string(device.platform.rawValue), "model": text(device.model),
            "registeredAt": date(device.createdAt), "lastUsedAt": date(device.lastUsedAt), "installations": .array(installations),
        ]
    }
}
