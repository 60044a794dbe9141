import Foundation

/// Where the config file's `apps:` and the database disagree. The rule: the file seeds its apps on
/// every start while they are `config`-managed; once an admin changes an app at run time it is
/// `admin`-managed and the file's entry is no longer applied (until `return-to-config`). This lists
/// what that leaves different, for `gatehouse check-config`.
public enum ConfigDrift {
    public struct Finding: Sendable, Equatable, CustomStringConvertible {
        public var appID: String
        public var message: String
        public var description: String { "\(appID): \(message)" }
    }

    /// `settings`: how the plugins' settings read, so that a file written the old way (`pinPolicy`)
    /// and the database's new form (`plugins.<instance>`) are compared as what they mean.
    public static func compare(seeds: [AppSeed], stored: [App], settings: PolicySettingsBook) throws -> [Finding] {
        var findings: [Finding] = []
        let byID = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0) })
        for (index, seed) in seeds.enumerated() {
            guard let app = byID[seed.id] else {
                findings.append(Finding(appID: seed.id, message: "apps[\(index)] is not in the database yet; the next start creates it"))
                continue
            }
            let differences = try differences(seed: seed, app: app, settings: settings)
            guard !differences.isEmpty else { continue }
            let state =
                app.managedBy == .admin
                ? "is managed by an admin since \(ISO8601DateFormatter().string(from: app.updatedAt)); the file's entry (apps[\(index)]) is not applied"
                : "is managed by the file; the next start applies apps[\(index)]"
            findings.append(Finding(appID: app.id, message: "\(state). Differences: " + differences.joined(separator: "; ")))
        }
        let seeded = Set(seeds.map(\.id))
        // The console's app is seeded from admin.console, not apps[], and cannot drift (admins cannot change it).
        for app in stored where !seeded.contains(app.id) && !ConsoleConfig.isBuiltIn(app.id) {
            findings.append(Finding(appID: app.id, message: "exists only in the database (\(app.managedBy.rawValue)-managed); the file does not mention it"))
        }
        return findings
    }

    /// What differs between an app's config entry and its stored version, one line per key.
    public static func differences(seed: AppSeed, app: App, settings: PolicySettingsBook) throws -> [String] {
        var differences: [String] = []
        if app.name != seed.name { differences.append("name: file \(quoted(seed.name)), database \(quoted(app.name))") }
        if app.redirectURIs != seed.redirectURIs { differences.append("redirectURIs: file \(seed.redirectURIs), database \(app.redirectURIs)") }
        if app.secretDigest != seed.secret.map(SecretDigest.sha256Hex) {
            differences.append("client secret: the file's and the database's differ (or one is public)")
        }
        return differences + (try policyDifferences(file: settings.normalized(seed.policy), database: settings.normalized(app.policy)))
    }

    /// `policy.<key>: file X, database Y` for each top-level policy key that differs.
    static func policyDifferences(file: Policy, database: Policy) throws -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard case .object(let left) = try JSONDecoder().decode(JSONValue.self, from: encoder.encode(file)),
            case .object(let right) = try JSONDecoder().decode(JSONValue.self, from: encoder.encode(database))
        else { return [] }
        return Set(left.keys).union(right.keys).sorted().compactMap { key in
            guard left[key] != right[key] else { return nil }
            return "policy.\(key): file \(render(left[key])), database \(render(right[key]))"
        }
    }

    static func render(_ value: JSONValue?) -> String {
        guard let value else { return "(none)" }
        return String(decoding: value.serialized(), as: UTF8.self)
    }

    static func quoted(_ text: String) -> String { "'\(text)'" }
}
