import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: DeviceStore {
    /// The device row is locked for the transaction, so two registrations from one device on two
    /// nodes take turns: neither can retire an installation the other is adding a key to.
    public func registerSignInKey(_ key: NewSignInKey, accountID: String, appID: String, providerID: String, now: Date) async throws -> SignInKeyRegistered {
        try await transaction { connection in
            let facts = key.device
            let logger = self.logger
            var newDevice = false
            var device: Device?
            if let vendorID = facts.vendorID {
                let made = DeviceRows.newDevice(facts, accountID: accountID, now: now)
                newDevice = try await !Self.rows(
                    """
                    INSERT INTO devices (id, account_id, vendor_id, platform, model, alias, created_at, last_used_at)
                    VALUES (\(made.id), \(accountID), \(vendorID), \(made.platform.rawValue), \(made.model), \(made.alias), \(now.storeValue), \(now.storeValue))
                    ON CONFLICT (account_id, vendor_id) WHERE vendor_id IS NOT NULL DO NOTHING RETURNING 1
                    """, on: connection, logger: logger
                ).isEmpty
                device = try await Self.rows(
                    "SELECT * FROM devices WHERE account_id = \(accountID) AND vendor_id = \(vendorID) FOR UPDATE", on: connection, logger: logger
                ).first.map(Self.device)
            } else {
                device = try await Self.rows(
                    """
                    SELECT d.* FROM devices d JOIN installations i ON i.device_id = d.id
                    WHERE i.account_id = \(accountID) AND i.installation_id = \(facts.installationID) AND i.app_id = \(appID) AND d.vendor_id IS NULL
                    FOR UPDATE OF d
                    """, on: connection, logger: logger
                ).first.map(Self.device)
                if device == nil {
                    let made = DeviceRows.newDevice(facts, accountID: accountID, now: now)
                    try await connection.query(
                        """
                        INSERT INTO devices (id, account_id, vendor_id, platform, model, alias, created_at, last_used_at)
                        VALUES (\(made.id), \(accountID), \(String?.none), \(made.platform.rawValue), \(made.model), \(made.alias), \(now.storeValue), \(now.storeValue))
                        """, logger: logger
                    )
                    device = made
                    newDevice = true
                }
            }
            guard let owner = device else { throw BrokerError(.conflict, .conflict, "The device was removed while it registered; try again.") }
            var installation = try await Self.rows(
                "SELECT * FROM installations WHERE device_id = \(owner.id) AND app_id = \(appID) AND installation_id = \(facts.installationID)",
                on: connection, logger: logger
            ).first.map(Self.installation)
            var retired: [String] = []
            if installation == nil {
                // A new installation of this app on a known device is a reinstall: the old one goes.
                let old = try await Self.rows("SELECT id FROM installations WHERE device_id = \(owner.id) AND app_id = \(appID)", on: connection, logger: logger)
                    .map { try $0["id"].string() }
                for ref in old { retired += try await Self.deleteInstallation(ref, on: connection, logger: logger, now: now) }
                let made = DeviceRows.newInstallation(facts, deviceID: owner.id, accountID: accountID, appID: appID, now: now)
                try await connection.query(
                    """
                    INSERT INTO installations (id, device_id, account_id, app_id, installation_id, os_version, app_version, build_type, push_token, biometric,
                        created_at, last_used_at)
                    VALUES (\(made.id), \(owner.id), \(accountID), \(appID), \(made.installationID), \(made.osVersion), \(made.appVersion), \(made.buildType),
                            \(made.pushToken), \(made.biometric), \(now.storeValue), \(now.storeValue))
                    """, logger: logger
                )
                installation = made
            } else if facts.pushToken != nil || facts.biometric != nil {
                // A key added to a known installation brings its current push token and biometric state.
                installation!.pushToken = facts.pushToken ?? installation!.pushToken
                installation!.biometric = facts.biometric ?? installation!.biometric
                try await connection.query(
                    "UPDATE installations SET push_token = \(installation!.pushToken), biometric = \(installation!.biometric) WHERE id = \(installation!.id)",
                    logger: logger
                )
            }
            let record = DeviceRows.newKey(
                key, accountID: accountID, deviceID: owner.id, installationRef: installation!.id, appID: appID, providerID: providerID, now: now)
            let inserted = try await Self.rows(
                """
                INSERT INTO sign_in_keys (id, account_id, device_id, installation_ref, provider_id, public_key, thumbprint, algorithm, counter, attestation, created_at, last_used_at)
                VALUES (\(record.id), \(accountID), \(owner.id), \(record.installationRef), \(providerID), \(try StoreJSON.encode(record.publicKey)), \(record.thumbprint),
                        \(record.algorithm), \(record.counter), \(record.attestation), \(now.storeValue), \(now.storeValue))
                ON CONFLICT DO NOTHING RETURNING 1
                """, on: connection, logger: logger
            )
            guard !inserted.isEmpty else { throw DeviceRows.keyTaken }
            return SignInKeyRegistered(key: record, device: owner, installation: installation!, retiredKeyIDs: retired, newDevice: newDevice)
        }
    }

    /// Deletes an installation with its keys and their identity links; revokes the keys' refresh
    /// tokens. Answers the keys' ids.
    static func deleteInstallation(_ ref: String, on connection: PostgresConnection, logger: Logger, now: Date) async throws -> [String] {
        let keys = try await rows("DELETE FROM sign_in_keys WHERE installation_ref = \(ref) RETURNING id, provider_id", on: connection, logger: logger)
        var ids: [String] = []
        for key in keys {
            let id = try key["id"].string()
            let provider = try key["provider_id"].string()
            try await connection.query("DELETE FROM identity_links WHERE provider_id = \(provider) AND subject = \(id)", logger: logger)
            try await connection.query("UPDATE refresh_tokens SET revoked_at = \(now.storeValue) WHERE sign_in_key = \(id) AND revoked_at IS NULL", logger: logger)
            ids.append(id)
        }
        try await connection.query("DELETE FROM installations WHERE id = \(ref)", logger: logger)
        return ids
    }

    public func signInKey(id: String) async throws -> SignInKey? {
        try await rows("SELECT k.*, i.app_id AS registered_app_id FROM sign_in_keys k LEFT JOIN installations i ON i.id = k.installation_ref WHERE k.id = \(id)").first
            .map(Self.signInKey)
    }

    public func recordSignInKeyUse(id: String, counter: Int?, now: Date) async throws -> Bool {
        let updated: Int
        if let counter {
            updated = try await run(
                "UPDATE sign_in_keys SET counter = \(counter), last_used_at = \(now.storeValue) WHERE id = \(id) AND (counter IS NULL OR counter < \(counter)) RETURNING 1"
            )
        } else {
            updated = try await run("UPDATE sign_in_keys SET last_used_at = \(now.storeValue) WHERE id = \(id) RETURNING 1")
        }
        guard updated == 1 else { return false }
        try await run(
            """
            WITH key AS (SELECT installation_ref, device_id FROM sign_in_keys WHERE id = \(id)),
                 i AS (UPDATE installations SET last_used_at = \(now.storeValue) WHERE id = (SELECT installation_ref FROM key) RETURNING 1)
            UPDATE devices SET last_used_at = \(now.storeValue) WHERE id = (SELECT device_id FROM key) RETURNING 1
            """
        )
        return true
    }

    public func devices(accountID: String) async throws -> [DeviceRecord] {
        let devices = try await rows("SELECT * FROM devices WHERE account_id = \(accountID) ORDER BY created_at, id").map(Self.device)
        let installations = try await rows("SELECT * FROM installations WHERE account_id = \(accountID) ORDER BY created_at, id").map(Self.installation)
        let keys = try await rows(
            "SELECT k.*, i.app_id AS registered_app_id FROM sign_in_keys k LEFT JOIN installations i ON i.id = k.installation_ref WHERE k.account_id = \(accountID) ORDER BY k.created_at, k.id"
        ).map(Self.signInKey)
        return DeviceRows.records(devices: devices, installations: installations, keys: keys)
    }

    public func renameDevice(id: String, accountID: String, alias: String) async throws -> Bool {
        try await run("UPDATE devices SET alias = \(alias) WHERE id = \(id) AND account_id = \(accountID) RETURNING 1") == 1
    }

    public func removeDevice(id: String, accountID: String, now: Date) async throws -> [String]? {
        try await transaction { connection in
            let logger = self.logger
            guard try await !Self.rows("SELECT id FROM devices WHERE id = \(id) AND account_id = \(accountID) FOR UPDATE", on: connection, logger: logger).isEmpty else {
                return nil
            }
            var removed: [String] = []
            for ref in try await Self.rows("SELECT id FROM installations WHERE device_id = \(id)", on: connection, logger: logger).map({ try $0["id"].string() }) {
                removed += try await Self.deleteInstallation(ref, on: connection, logger: logger, now: now)
            }
            try await connection.query("DELETE FROM devices WHERE id = \(id)", logger: logger)
            return removed
        }
    }

    public func installations(appID: String, installationID: String) async throws -> [Installation] {
        try await rows(
            """
            SELECT * FROM installations i WHERE app_id = \(appID) AND installation_id = \(installationID)
                AND EXISTS (SELECT 1 FROM sign_in_keys k WHERE k.installation_ref = i.id)
            ORDER BY created_at, id
            """
        ).map(Self.installation)
    }

    public func removeInstallation(id: String, accountID: String, now: Date) async throws -> [String]? {
        try await transaction { connection in
            let logger = self.logger
            guard try await !Self.rows("SELECT id FROM installations WHERE id = \(id) AND account_id = \(accountID) FOR UPDATE", on: connection, logger: logger).isEmpty
            else { return nil }
            return try await Self.deleteInstallation(id, on: connection, logger: logger, now: now)
        }
    }

    static func device(_ row: PostgresRandomAccessRow) throws -> Device {
        Device(
            id: try row["id"].string(), accountID: try row["account_id"].string(), vendorID: try row["vendor_id"].optionalString(),
            platform: DevicePlatform(rawValue: try row["platform"].string()) ?? .web, model: try row["model"].optionalString(), alias: try row["alias"].string(),
            createdAt: try row["created_at"].date(), lastUsedAt: try row["last_used_at"].optionalDate()
        )
    }

    static func installation(_ row: PostgresRandomAccessRow) throws -> Installation {
        Installation(
            id: try row["id"].string(), deviceID: try row["device_id"].string(), accountID: try row["account_id"].string(), appID: try row["app_id"].string(),
            installationID: try row["installation_id"].string(), osVersion: try row["os_version"].optionalString(), appVersion: try row["app_version"].optionalString(),
            buildType: try row["build_type"].optionalString(), pushToken: try row["push_token"].optionalString(), biometric: try row["biometric"].decode(Bool?.self),
            createdAt: try row["created_at"].date(), lastUsedAt: try row["last_used_at"].optionalDate()
        )
    }

    static func signInKey(_ row: PostgresRandomAccessRow) throws -> SignInKey {
        SignInKey(
            id: try row["id"].string(), accountID: try row["account_id"].string(), deviceID: try row["device_id"].string(),
            installationRef: try row["installation_ref"].string(), providerID: try row["provider_id"].string(),
            publicKey: try row["public_key"].json(JSONValue.self), thumbprint: try row["thumbprint"].string(), algorithm: try row["algorithm"].string(),
            counter: try row["counter"].decode(Int?.self), attestation: try row["attestation"].optionalString(),
            registeredAppID: try row["registered_app_id"].optionalString(), createdAt: try row["created_at"].date(),
            lastUsedAt: try row["last_used_at"].optionalDate()
        )
    }
}
