import Foundation
import GatehousePluginKit
import GatehouseSupport
import _CryptoExtras

/// A public key an `fsso-jwt` instance accepts, as administrators see it.
public struct FSSOKey: Sendable, Codable, Hashable {
    public enum Source: String, Sendable, Codable { case config, registered, test }

    public var issuer: String
    public var kid: String
    public var source: Source
    /// For test keys: the app they register users for.
    public var appID: String?
    /// The apps the key may sign people into (for a test key, its own app).
    public var apps: [String]
    public var createdAt: Date?
    public var createdBy: String?
    public var revokedAt: Date?

    /// The `iss` of tokens signed with test keys starts with this; no registered issuer may.
    static let testIssuerPrefix = "gatehouse-test:"

    /// The `iss` that tokens signed with an app's test keys carry.
    public static func testIssuer(appID: String) -> String { testIssuerPrefix + appID }

    /// Issuers only test keys may use: `gatehouse-test` and everything under it.
    static func isReserved(_ issuer: String) -> Bool { issuer.hasPrefix("gatehouse-test") }
}

/// A key registered at run time or generated as a test key; only public halves are stored.
struct StoredKey: Codable, Sendable {
    var issuer: String
    var kid: String
    var pem: String
    var appID: String?
    /// The apps a registered key may sign people into; nil in keys registered before keys named
    /// their apps (those follow their configured issuer's apps, or none).
    var apps: [String]?
    var createdAt: Date
    var createdBy: String
    var revokedAt: Date?

    static func storageKey(_ issuer: String, _ kid: String) -> String { "key:\(issuer):\(kid)" }

    func publicKey() throws -> _RSA.Signing.PublicKey {
        do {
            return try _RSA.Signing.PublicKey(pemRepresentation: pem)
        } catch {
            throw FSSOProvider.refused("unknown_kid")
        }
    }

    func view(configured: [FSSOPlugin.Config.Issuer]) -> FSSOKey {
        let apps = appID.map { [$0] } ?? apps ?? configured.first { $0.issuer == issuer }?.apps ?? []
        return FSSOKey(
            issuer: issuer, kid: kid, source: appID == nil ? .registered : .test, appID: appID, apps: apps, createdAt: createdAt, createdBy: createdBy,
            revokedAt: revokedAt
        )
    }
}

/// Administrators manage two resources of an `fsso-jwt` instance: the issuers' public keys (`keys`,
/// registered at run time next to those in the config) and each app's test registration keys
/// (`test-keys`, generated here, the private half shown once and never stored).
extension FSSOProvider {
    public var adminResources: [AdminResource] {
        [
            AdminResource(
                name: "keys", scope: .provider,
                summary: "Issuer public keys (RSA, PKCS#1 or SPKI PEM, at least 2048 bits): from config, registered, and test keys.",
                createFields: [
                    AdminField(name: "issuer", summary: "The tokens' iss."), AdminField(name: "kid", summary: "The tokens' kid."),
                    AdminField(name: "pem", summary: "The public key PEM.", fromFile: true),
                    AdminField(name: "apps", summary: "The apps the key may sign people into: a JSON array or a comma-separated list of app ids."),
                ],
                itemKey: ["issuer", "kid"], columns: ["issuer", "kid", "source", "apps", "createdAt", "createdBy", "revokedAt"], dangerous: true,
                list: { _ in try await keys().map { try Self.json($0) } }, create: { fields, _, admin in try await addKey(fields, by: admin) },
                delete: { key, _, _ in try await removeKey(key) }
            ),
            AdminResource(
                name: "test-keys", scope: .app,
                summary: "Test registration keys: sign JWTs for integration tests; their accounts are test accounts and skip the second factor.",
                itemKey: ["kid"], columns: ["issuer", "kid", "source", "createdAt", "createdBy", "revokedAt"], dangerous: true,
                list: { app in try await keys().filter { $0.source == .test && $0.appID == app?.id }.map { try Self.json($0) } },
                create: { _, app, admin in try await generateTestKey(for: try Self.required(app), by: admin) },
                delete: { key, app, _ in try await revokeTestKey(key[0], of: try Self.required(app)) }
            ),
        ]
    }

    /// The app of an app-scoped resource's call (the broker always names it).
    static func required(_ app: AppView?) throws -> AppView {
        guard let app else { throw BrokerError.internalFailure("Test keys belong to an app.") }
        return app
    }

    func addKey(_ fields: [String: JSONValue], by admin: String) async throws -> AdminChange {
        var missing: [ConfigIssue] = []
        for name in ["issuer", "kid", "pem"] where fields[name]?.stringValue?.isEmpty != false {
            missing.append(ConfigIssue(path: name, "is required"))
        }
        let apps = Self.appList(fields["apps"])
        if apps?.isEmpty != false { missing.append(ConfigIssue(path: "apps", "is required: a JSON array of app ids or a comma-separated list")) }
        if !missing.isEmpty { throw BrokerError(.invalidRequest, .badRequest, "The body needs issuer, kid, pem and apps.", issues: missing) }
        let issuer = fields["issuer"]!.stringValue!, kid = fields["kid"]!.stringValue!
        let key = try await addKey(issuer: issuer, kid: kid, pem: fields["pem"]!.stringValue!, apps: apps!, by: admin)
        return AdminChange(item: try Self.json(key), event: "key_added", details: ["issuer": issuer, "kid": kid, "apps": apps!.joined(separator: ",")])
    }

    func removeKey(_ key: [String]) async throws -> AdminChange {
        guard key.count == 2, !FSSOKey.isReserved(key[0]), let stored = try await stored(issuer: key[0], kid: key[1]), stored.appID == nil,
            try await environment.storage.delete(key: StoredKey.storageKey(key[0], key[1]))
        else {
            throw BrokerError(.notFound, .notFound, "No registered key '\(key.last ?? "")' of '\(key.first ?? "")'.")
        }
        return AdminChange(item: ["issuer": .string(key[0]), "kid": .string(key[1])], event: "key_removed", details: ["issuer": key[0], "kid": key[1]])
    }

    func generateTestKey(for app: AppView, by admin: String) async throws -> AdminChange {
        let (key, privateKeyPEM) = try await generateTestKey(appID: app.id, by: admin)
        return AdminChange(
            item: ["key": try Self.json(key), "private_key_pem": .string(privateKeyPEM)], shownOnce: privateKeyPEM, event: "test_key_generated",
            details: ["kid": key.kid]
        )
    }

    func revokeTestKey(_ kid: String, of app: AppView) async throws -> AdminChange {
        guard try await revokeTestKey(appID: app.id, kid: kid) else {
            throw BrokerError(.notFound, .notFound, "No live test key '\(kid)' for '\(app.id)'.")
        }
        return AdminChange(item: ["kid": .string(kid)], event: "test_key_revoked", details: ["kid": kid])
    }

    /// App ids from a JSON array of strings or a comma-separated string (as the CLI sends them);
    /// nil when the value is neither.
    static func appList(_ value: JSONValue?) -> [String]? {
        switch value {
        case .array(let items)?:
            let ids = items.compactMap(\.stringValue)
            return ids.count == items.count ? ids.filter { !$0.isEmpty }.uniqued() : nil
        case .string(let list)?:
            return list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.uniqued()
        default:
            return nil
        }
    }

    /// A key (or keys) as the admin API shows them: RFC 3339 dates.
    static func json(_ value: some Encodable) throws -> JSONValue {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return try JSONDecoder().decode(JSONValue.self, from: try encoder.encode(value))
    }

    /// Registers an issuer's public key (PEM); refused if the (issuer, kid) exists or the key is weak.
    func addKey(issuer: String, kid: String, pem: String, apps: [String], by creator: String) async throws -> FSSOKey {
        guard !FSSOKey.isReserved(issuer) else {
            throw BrokerError(
                .invalidRequest, .badRequest, "Issuers starting with gatehouse-test are reserved for test keys.", issues: [ConfigIssue(path: "issuer", "is reserved")])
        }
        guard !kid.contains(":") else {
            // `:` separates issuer and kid in the storage key; a kid without one keeps the key unambiguous.
            throw BrokerError(.invalidRequest, .badRequest, "A kid must not contain ':'.", issues: [ConfigIssue(path: "kid", "must not contain ':'")])
        }
        do {
            _ = try FSSOPlugin.Config.Key.parse(pem, path: [ConfigIssue.Key("pem")])
        } catch let issue as ConfigIssue {
            throw BrokerError(.invalidRequest, .badRequest, issue.description, issues: [issue])
        }
        if config.issuers.first(where: { $0.issuer == issuer })?.keys.contains(where: { $0.kid == kid }) == true {
            throw BrokerError(.conflict, .conflict, "The config already has key '\(kid)' for '\(issuer)'.")
        }
        let record = StoredKey(issuer: issuer, kid: kid, pem: pem, apps: apps, createdAt: environment.clock.now, createdBy: creator)
        guard try await environment.storage.insert(record, key: StoredKey.storageKey(issuer, kid)) else {
            throw BrokerError(.conflict, .conflict, "Key '\(kid)' of '\(issuer)' is already registered.")
        }
        return record.view(configured: config.issuers)
    }

    /// Every key: from config, registered, and test keys.
    func keys() async throws -> [FSSOKey] {
        let configured = config.issuers.flatMap { issuer in issuer.keys.map { FSSOKey(issuer: issuer.issuer, kid: $0.kid, source: .config, apps: issuer.apps) } }
        return configured + (try await environment.storage.all(StoredKey.self, keyPrefix: "key:").map { $0.value.view(configured: config.issuers) })
    }

    /// Makes a test registration key for an app: the public half is kept, the private PEM is returned
    /// once and never stored.
    func generateTestKey(appID: String, by creator: String) async throws -> (key: FSSOKey, privateKeyPEM: String) {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let record = StoredKey(
            issuer: FSSOKey.testIssuer(appID: appID), kid: "test-" + RandomToken.make(byteCount: 8), pem: privateKey.publicKey.pemRepresentation,
            appID: appID, createdAt: environment.clock.now, createdBy: creator
        )
        guard try await environment.storage.insert(record, key: StoredKey.storageKey(record.issuer, record.kid)) else {
            throw BrokerError.internalFailure("A test key id collided; try again.")
        }
        return (record.view(configured: config.issuers), privateKey.pemRepresentation)
    }

    /// Revokes a test key of an app at once; false when there is no such live key.
    func revokeTestKey(appID: String, kid: String) async throws -> Bool {
        let key = StoredKey.storageKey(FSSOKey.testIssuer(appID: appID), kid)
        guard !kid.contains(":"), let stored = try await environment.storage.get(StoredKey.self, key: key), stored.value.appID == appID,
            stored.value.kid == kid, stored.value.revokedAt == nil
        else { return false }
        var revoked = stored.value
        revoked.revokedAt = environment.clock.now
        return try await environment.storage.replace(revoked, key: key, version: stored.version)
    }
}

extension FSSOProvider {
    /// A deleted app's test keys go with it (an app made later with the same id must not accept
    /// them), and registered keys stop naming it.
    public func forget(_ departure: Departure) async throws -> [AdminChange] {
        guard case .app(let appID) = departure else { return [] }
        var changes: [AdminChange] = []
        for (key, record) in try await environment.storage.all(StoredKey.self, keyPrefix: "key:") {
            if record.appID == appID {
                guard try await environment.storage.delete(key: key) else { continue }
                changes.append(
                    AdminChange(
                        item: try Self.json(record.view(configured: config.issuers)), event: "test_key_removed", details: ["issuer": record.issuer, "kid": record.kid]))
            } else if let apps = record.apps, apps.contains(appID), let stored = try await environment.storage.get(StoredKey.self, key: key) {
                var narrowed = stored.value
                narrowed.apps = apps.filter { $0 != appID }
                guard try await environment.storage.replace(narrowed, key: key, version: stored.version) else { continue }
                changes.append(
                    AdminChange(
                        item: try Self.json(narrowed.view(configured: config.issuers)), event: "key_apps_changed",
                        details: ["issuer": record.issuer, "kid": record.kid, "apps": (narrowed.apps ?? []).joined(separator: ",")]
                    ))
            }
        }
        return changes
    }
}
