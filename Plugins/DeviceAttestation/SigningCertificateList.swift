import Foundation
import GatehousePluginKit
import GatehouseSupport

/// The signing-certificate fingerprints administrators add to an app's allow-list at run time (next
/// to those in config), each with the admin who added it: Sudo Platform's rule removes an admin's
/// fingerprints with that admin, and an app's with the app.
struct SigningCertificateList: Sendable {
    struct Entry: Codable, Sendable, Hashable {
        /// Lowercase hex of the SHA-256 digest.
        var sha256: String
        var addedAt: Date
        var addedBy: String
    }

    let storage: PluginStorage
    let clock: any BrokerClock

    static func key(app: String, sha256: String) -> String { "fingerprint/\(app)/\(sha256)" }

    func entries(app: String) async throws -> [Entry] {
        try await storage.all(Entry.self, keyPrefix: "fingerprint/\(app)/").map(\.value)
    }

    /// The app's fingerprints: configured ones and those administrators added.
    func digests(app: String, configured: [String]) async throws -> [String] {
        configured + (try await entries(app: app)).map(\.sha256)
    }

    /// Adds a fingerprint; nil when it is listed already.
    func add(_ text: String, app: String, by admin: String) async throws -> Entry? {
        guard let bytes = SigningCertificateDigest.bytes(text) else {
            throw BrokerError(
                .invalidRequest, .badRequest, "'sha256' must be a SHA-256 fingerprint: AB:CD:... (32 bytes), plain hex or base64.",
                issues: [ConfigIssue(path: "sha256", "not a SHA-256 fingerprint")])
        }
        let entry = Entry(sha256: SecretDigest.hex(bytes), addedAt: clock.now, addedBy: admin)
        return try await storage.insert(entry, key: Self.key(app: app, sha256: entry.sha256)) ? entry : nil
    }

    func remove(_ text: String, app: String) async throws -> Entry? {
        let hex = SigningCertificateDigest.normalize(text)
        guard let current = try await storage.get(Entry.self, key: Self.key(app: app, sha256: hex)) else { return nil }
        return try await storage.delete(key: Self.key(app: app, sha256: hex), version: current.version) ? current.value : nil
    }

    func removeAll(app: String) async throws {
        for entry in try await entries(app: app) { try await storage.delete(key: Self.key(app: app, sha256: entry.sha256)) }
    }

    /// Every entry of every app added by an admin who is no longer configured.
    func entries(addedByNoneOf admins: Set<String>) async throws -> [(app: String, entry: Entry)] {
        try await storage.all(Entry.self, keyPrefix: "fingerprint/").compactMap { key, entry in
            let parts = key.split(separator: "/")
            guard parts.count == 3, !admins.contains(entry.addedBy), !entry.addedBy.hasPrefix("cli:") else { return nil }
            return (String(parts[1]), entry)
        }
    }
}
