import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: DeviceStore {
    public func registerSignInKey(_ key: NewSignInKey, accountID: String, appID: String, providerID: String, now: Date) async throws -> SignInKeyRegistered {
        // One write transaction: SQLite serialises writers, so two registrations from one device
        // cannot both make its device row.
        try await write { db in
            let facts = key.device
            var device: Device?
            if let vendorID = facts.vendorID {
                device = try Row.fetchOne(db, sql: "SELECT * FROM devices WHERE account_id = ? AND vendor_id = ?", arguments: [accountID, vendorID]).map(Self.device)
            } else {
                device = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT d.* FROM devices d JOIN installations i ON i.device_id = d.id
                        WHERE i.account_id = ? AND i.installation_id = ? AND i.app_id = ? AND d.vendor_id IS NULL
                        """,
                    arguments: [accountID, facts.installationID, appID]
                ).map(Self.device)
            }
            let newDevice = device == nil
            if device == nil {
                let made = DeviceRows.newDevice(facts, accountID: accountID, now: now)
                try db.executeCached(
                    sql: "INSERT INTO devices (id, account_id, vendor_id, platform, model, alias, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    arguments: [made.id, accountID, made.vendorID, made.platform.rawValue, made.model, made.alias, now.storeValue, now.storeValue]
                )
                device = made
            }
            let owner = device!
            var installation = try Row.fetchOne(
                db, sql: "SELECT * FROM installations WHERE device_id = ? AND app_id = ? AND installation_id = ?", arguments: [owner.id, appID, facts.installationID]
            ).map(Self.installation)
            var retired: [String] = []
            if installation == nil {
                // A new installation of this app on a known device is a reinstall: the old one goes.
                let old = try String.fetchAll(db, sql: "SELECT id FROM installations WHERE device_id = ? AND app_id = ?", arguments: [owner.id, appID])
                for ref in old { retired += try Self.deleteInstallation(ref, db: db, now: now) }
                let made = DeviceRows.newInstallation(facts, deviceID: owner.id, accountID: accountID, appID: appID, now: now)
                try db.executeCached(
                    sql: """
                        INSERT INTO installations (id, device_id, account_id, app_id, installation_id, os_version, app_version, build_type, push_token, biometric,
                            created_at, last_used_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        made.id, owner.id, accountID, appID, made.installationID, made.osVersion, made.appVersion, made.buildType, made.pushToken, made.biometric,
                        now.storeValue, now.storeValue,
                    ]
                )
                installation = made
            } else if facts.pushToken != nil || facts.biometric != nil {
                // A key added to a known installation brings its current push token and biometric state.
                installation!.pushToken = facts.pushToken ?? installation!.pushToken
                installation!.biometric = facts.biometric ?? installation!.biometric
                try db.executeCached(
                    sql: "UPDATE installations SET push_token = ?, biometric = ? WHERE id = ?",
                    arguments: [installation!.pushToken, installation!.biometric, installation!.id]
                )
            }
            let record = DeviceRows.newKey(
                key, accountID: accountID, deviceID: owner.id, installationRef: installation!.id, appID: appID, providerID: providerID, now: now)
            try db.executeCached(
                sql: """
                    INSERT INTO sign_in_keys (id, account_id, device_id, installation_ref, provider_id, public_key, thumbprint, algorithm, counter, attestation, created_at, last_used_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """,
                arguments: [
                    record.id, accountID, owner.id, record.installationRef, providerID, try StoreJSON.encode(record.publicKey), record.thumbprint, record.algorithm,
                    record.counter, record.attestation, now.storeValue, now.storeValue,
                ]
            )
            guard db.changesCount == 1 else { throw DeviceRows.keyTaken }
            return SignInKeyRegistered(key: record, device: owner, installation: installation!, retiredKeyIDs: retired, newDevice: newDevice)
        }
    }

    /// Deletes an installation with its keys and their identity links; revokes the keys' refresh
    /// tokens. Answers the keys' ids.
    static func deleteInstallation(_ ref: String, db: Database, now: Date) throws -> [String] {
        let keys = try Row.fetchAll(db, sql: "SELECT id, provider_id FROM sign_in_keys WHERE installation_ref = ?", arguments: [ref])
        for key in keys {
            let id: String = key["id"]
            let provider: String = key["provider_id"]
            try db.executeCached(sql: "DELETE FROM identity_links WHERE provider_id = ? AND subject = ?", arguments: [provider, id])
            try db.executeCached(sql: "UPDATE refresh_tokens SET revoked_at = ? WHERE sign_in_key = ? AND revoked_at IS NULL", arguments: [now.storeValue, id])
        }
        try db.executeCached(sql: "DELETE FROM sign_in_keys WHERE installation_ref = ?", arguments: [ref])
        try db.executeCached(sql: "DELETE FROM installations WHERE id = ?", arguments: [ref])
        return keys.map { $0["id"] }
    }

    public func signInKey(id: String) async throws -> SignInKey? {
        try readOneStatement { db in try Row.fetchOne(try db.cachedStatement(sql: Self.signInKeySelect + " WHERE k.id = ?"), arguments: [id]).map(Self.signInKey) }
    }

    public func recordSignInKeyUse(id: String, counter: Int?, now: Date) async throws -> Bool {
        try await write { db in
            if let counter {
                try db.executeCached(
                    sql: "UPDATE sign_in_keys SET counter = ?, last_used_at = ? WHERE id = ? AND (counter IS NULL OR counter < ?)",
                    arguments: [counter, now.storeValue, id, counter]
                )
            } else {
                try db.executeCached(sql: "UPDATE sign_in_keys SET last_used_at = ? WHERE id = ?", arguments: [now.storeValue, id])
            }
            guard db.changesCount == 1 else { return false }
            try db.executeCached(
                sql: "UPDATE installations SET last_used_at = ? WHERE id = (SELECT installation_ref FROM sign_in_keys WHERE id = ?)", arguments: [now.storeValue, id]
            )
            try db.executeCached(
                sql: "UPDATE devices SET last_used_at = ? WHERE id = (SELECT device_id FROM sign_in_keys WHERE id = ?)", arguments: [now.storeValue, id])
            return true
        }
    }

    public func devices(accountID: String) async throws -> [DeviceRecord] {
        try await readLater { db in
            let devices = try Row.fetchAll(db, sql: "SELECT * FROM devices WHERE account_id = ? ORDER BY created_at, id", arguments: [accountID]).map(Self.device)
            let installations = try Row.fetchAll(db, sql: "SELECT * FROM installations WHERE account_id = ? ORDER BY created_at, id", arguments: [accountID])
                .map(Self.installation)
            let keys = try Row.fetchAll(db, sql: Self.signInKeySelect + " WHERE k.account_id = ? ORDER BY k.created_at, k.id", arguments: [accountID]).map(Self.signInKey)
            return DeviceRows.records(devices: devices, installations: installations, keys: keys)
        }
    }

    public func renameDevice(id: String, accountID: String, alias: String) async throws -> Bool {
        try await write { db in
            try db.executeCached(sql: "UPDATE devices SET alias = ? WHERE id = ? AND account_id = ?", arguments: [alias, id, accountID])
            return db.changesCount == 1
        }
    }

    public func removeDevice(id: String, accountID: String, now: Date) async throws -> [String]? {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM devices WHERE id = ? AND account_id = ?", arguments: [id, accountID]) != nil else { return nil }
            var removed: [String] = []
            for ref in try String.fetchAll(db, sql: "SELECT id FROM installations WHERE device_id = ?", arguments: [id]) {
                removed += try Self.deleteInstallation(ref, db: db, now: now)
            }
            try db.executeCached(sql: "DELETE FROM devices WHERE id = ?", arguments: [id])
            return removed
        }
    }

    public func installations(appID: String, installationID: String) async throws -> [Installation] {
        try await readLater { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM installations i WHERE app_id = ? AND installation_id = ? AND EXISTS (SELECT 1 FROM sign_in_keys k WHERE k.installation_ref = i.id)
                    ORDER BY created_at, id
                    """,
                arguments: [appID, installationID]
            ).map(Self.installation)
        }
    }

    public func removeInstallation(id: String, accountID: String, now: Date) async throws -> [String]? {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM installations WHERE id = ? AND account_id = ?", arguments: [id, accountID]) != nil else { return nil }
            return try Self.deleteInstallation(id, db: db, now: now)
        }
    }

    static func device(_ row: Row) throws -> Device {
        Device(
            id: row["id"], accountID: row["account_id"], vendorID: row["vendor_id"], platform: DevicePlatform(rawValue: row["platform"]) ?? .web, model: row["model"],
            alias: row["alias"], createdAt: Date(storeValue: row["created_at"]), lastUsedAt: (row["last_used_at"] as Double?).map(Date.init(storeValue:))
        )
    }

    static func installation(_ row: Row) throws -> Installation {
        Installation(
            id: row["id"], deviceID: row["device_id"], accountID: row["account_id"], appID: row["app_id"], installationID: row["installation_id"],
            osVersion: row["os_version"], appVersion: row["app_version"], buildType: row["build_type"], pushToken: row["push_token"], biometric: row["biometric"],
            createdAt: Date(storeValue: row["created_at"]),
            lastUsedAt: (row["last_used_at"] as Double?).map(Date.init(storeValue:))
        )
    }

    /// A key with the app of the installation it was registered from.
    static let signInKeySelect = "SELECT k.*, i.app_id AS registered_app_id FROM sign_in_keys k LEFT JOIN installations i ON i.id = k.installation_ref"

    static func signInKey(_ row: Row) throws -> SignInKey {
        SignInKey(
            id: row["id"], accountID: row["account_id"], deviceID: row["device_id"], installationRef: row["installation_ref"], providerID: row["provider_id"],
            publicKey: try StoreJSON.decode(JSONValue.self, row["public_key"]), thumbprint: row["thumbprint"], algorithm: row["algorithm"], counter: row["counter"],
            attestation: row["attestation"], registeredAppID: row["registered_app_id"], createdAt: Date(storeValue: row["created_at"]),
            lastUsedAt: (row["last_used_at"] as Double?).map(Date.init(storeValue:))
        )
    }
}
