import Foundation
import GatehousePluginKit

/// Administrators manage three app-scoped resources of a `device-attestation` instance: the app's
/// signing-certificate fingerprints (`fingerprints`), its secrets (`secrets`, write-only) and its
/// test registration keys (`test-keys`, the private half shown once).
extension DeviceAttestationProvider {
    public var adminResources: [AdminResource] {
        [
            AdminResource(
                name: "fingerprints", scope: .app,
                summary:
                    "SHA-256 fingerprints of the app's Android signing certificates (AB:CD:..., hex or base64), besides those in config; removed with the admin who added them.",
                createFields: [AdminField(name: "sha256", summary: "The certificate's SHA-256 fingerprint, as the Play Console or keytool shows it.")],
                itemKey: ["sha256"], columns: ["sha256", "addedAt", "addedBy"], dangerous: true,
                list: { app in try await fingerprints.entries(app: try Self.owner(app)).map(Self.json) },
                create: { fields, app, admin in try await addFingerprint(fields, app: try Self.owner(app), by: admin) },
                delete: { key, app, _ in try await removeFingerprint(key[0], app: try Self.owner(app)) }
            ),
            AdminResource(
                name: "secrets", scope: .app,
                summary: "The app's attestation secrets, stored encrypted and never shown: \(AttestationSecrets.Name.allCases.map(\.rawValue).joined(separator: ", ")).",
                createFields: [
                    AdminField(name: "name", summary: "Which secret: \(AttestationSecrets.Name.allCases.map(\.rawValue).joined(separator: ", "))."),
                    AdminField(name: "value", summary: "The secret: the base64 key, the PEM, or the service account's JSON.", fromFile: true),
                ],
                itemKey: ["name"], columns: ["name", "setAt", "setBy"], dangerous: true,
                list: { app in
                    try await secrets.list(app: try Self.owner(app)).map {
                        .object(["name": .string($0.name), "setAt": .string(Self.time($0.setAt)), "setBy": .string($0.setBy)])
                    }
                },
                create: { fields, app, admin in try await setSecret(fields, app: try Self.owner(app), by: admin) },
                delete: { key, app, _ in try await removeSecret(key[0], app: try Self.owner(app)) }
            ),
            AdminResource(
                name: "test-keys", scope: .app,
                summary: "Test registration keys (ES256): sign `test` attestations in integration tests; they register test accounts only.",
                itemKey: ["kid"], columns: ["kid", "createdAt", "createdBy", "revokedAt"], dangerous: true,
                list: { app in try await testKeys.entries(app: try Self.owner(app)).map(Self.json) },
                create: { _, app, admin in try await generateTestKey(app: try Self.owner(app), by: admin) },
                delete: { key, app, _ in try await revokeTestKey(key[0], app: try Self.owner(app)) }
            ),
        ]
    }

    /// The id of the app an app-scoped resource's call is for (the broker always names it).
    static func owner(_ app: AppView?) throws -> String {
        guard let app else { throw BrokerError.internalFailure("device-attestation's resources belong to an app.") }
        return app.id
    }

    func addFingerprint(_ fields: [String: JSONValue], app: String, by admin: String) async throws -> AdminChange {
        guard let text = fields["sha256"]?.stringValue, !text.isEmpty else {
            throw BrokerError(.invalidRequest, .badRequest, "The body needs sha256.", issues: [ConfigIssue(path: "sha256", "is required")])
        }
        guard let entry = try await fingerprints.add(text, app: app, by: admin) else {
            throw BrokerError(.conflict, .conflict, "The app's allow-list has this fingerprint already.")
        }
        return AdminChange(item: Self.json(entry), event: "fingerprint_added", details: ["sha256": entry.sha256])
    }

    func removeFingerprint(_ sha256: String, app: String) async throws -> AdminChange {
        guard let entry = try await fingerprints.remove(sha256, app: app) else {
            throw BrokerError(.notFound, .notFound, "The app '\(app)' has no fingerprint '\(sha256)' added by an admin.")
        }
        return AdminChange(item: Self.json(entry), event: "fingerprint_removed", details: ["sha256": entry.sha256])
    }

    func setSecret(_ fields: [String: JSONValue], app: String, by admin: String) async throws -> AdminChange {
        guard let nameText = fields["name"]?.stringValue, let name = AttestationSecrets.Name(rawValue: nameText) else {
            let names = AttestationSecrets.Name.allCases.map(\.rawValue).joined(separator: ", ")
            throw BrokerError(.invalidRequest, .badRequest, "'name' must be one of \(names).", issues: [ConfigIssue(path: "name", "must be one of \(names)")])
        }
        guard let value = fields["value"]?.stringValue, !value.isEmpty, value.utf8.count <= 16_384 else {
            throw BrokerError(.invalidRequest, .badRequest, "The body needs the secret's value (at most 16 KiB).", issues: [ConfigIssue(path: "value", "is required")])
        }
        try Self.check(value, as: name)
        try await secrets.set(name, value: Data(value.utf8), app: app, by: admin)
        return AdminChange(item: .object(["name": .string(name.rawValue), "setBy": .string(admin)]), event: "secret_set", details: ["name": name.rawValue])
    }

    func removeSecret(_ nameText: String, app: String) async throws -> AdminChange {
        guard let name = AttestationSecrets.Name(rawValue: nameText), try await secrets.remove(name, app: app) else {
            throw BrokerError(.notFound, .notFound, "The app '\(app)' has no secret '\(nameText)'.")
        }
        return AdminChange(item: .object(["name": .string(name.rawValue)]), event: "secret_removed", details: ["name": name.rawValue])
    }

    func generateTestKey(app: String, by admin: String) async throws -> AdminChange {
        let (entry, privateKeyPEM) = try await testKeys.generate(app: app, by: admin)
        return AdminChange(
            item: .object(["key": Self.json(entry), "private_key_pem": .string(privateKeyPEM)]), shownOnce: privateKeyPEM, event: "test_key_generated",
            details: ["kid": entry.kid]
        )
    }

    func revokeTestKey(_ kid: String, app: String) async throws -> AdminChange {
        guard let entry = try await testKeys.revoke(app: app, kid: kid) else {
            throw BrokerError(.notFound, .notFound, "The app '\(app)' has no test key '\(kid)'.")
        }
        return AdminChange(item: Self.json(entry), event: "test_key_revoked", details: ["kid": entry.kid])
    }

    /// Removes the fingerprints added by admins who are gone (Sudo Platform's rule).
    func adminsDeparted(remaining: Set<String>) async throws -> [AdminChange] {
        var changes: [AdminChange] = []
        for (app, entry) in try await fingerprints.entries(addedByNoneOf: remaining) {
            guard try await fingerprints.remove(entry.sha256, app: app) != nil else { continue }
            changes.append(
                AdminChange(
                    item: Self.json(entry), event: "fingerprint_removed",
                    details: ["sha256": entry.sha256, "app": app, "reason": "admin_removed", "addedBy": entry.addedBy])
            )
        }
        return changes
    }

    /// A secret that cannot work is refused when it is set, not at the first registration.
    static func check(_ value: String, as name: AttestationSecrets.Name) throws {
        let refusal: (String) -> BrokerError = { BrokerError(.invalidRequest, .badRequest, $0, issues: [ConfigIssue(path: "value", $0)]) }
        switch name {
        case .playDecryptionKey:
            do { _ = try PlayIntegrityKeys.decryptionKey(value) } catch { throw refusal("The decryption key must be base64 of 32 bytes, as the Play Console shows it.") }
        case .playVerificationKey:
            do { _ = try PlayIntegrityKeys.verificationKey(value) } catch {
                throw refusal("The verification key must be a base64 (or PEM) EC P-256 public key, as the Play Console shows it.")
            }
        case .playServiceAccount:
            guard (try? JSONDecoder().decode(PlayIntegrityDecoder.ServiceAccount.self, from: Data(value.utf8))) != nil else {
                throw refusal("The service account must be Google's JSON key file (client_email, private_key).")
            }
        case .deviceCheckKey:
            guard value.contains("PRIVATE KEY") else { throw refusal("The DeviceCheck key must be the .p8 file Apple issued (a PEM private key).") }
        }
    }

    static func time(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    static func json(_ entry: SigningCertificateList.Entry) -> JSONValue {
        .object([
            "sha256": .string(SigningCertificateDigest.display(SigningCertificateDigest.bytes(entry.sha256) ?? [])), "addedAt": .string(time(entry.addedAt)),
            "addedBy": .string(entry.addedBy),
        ])
    }

    static func json(_ entry: TestRegistrationKeys.Entry) -> JSONValue {
        var object: [String: JSONValue] = [
            "kid": .string(entry.kid), "publicKey": entry.publicKey, "createdAt": .string(time(entry.createdAt)), "createdBy": .string(entry.createdBy),
        ]
        object["revokedAt"] = entry.revokedAt.map { .string(time($0)) }
        return .object(object)
    }
}
