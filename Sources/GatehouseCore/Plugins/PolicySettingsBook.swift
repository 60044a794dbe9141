import Foundation

/// How the broker reads, checks and shows one plugin type's per-app settings without knowing their
/// type: the plugin's `PluginSettings`, erased.
struct SettingsCodec: Sendable {
    let formerKeys: [FormerPolicyKey]
    let fields: [SettingField]
    /// False for `NoSettings`: nothing to show or set.
    let hasSettings: Bool
    /// Decodes settings JSON at `path` (exact error paths) and answers it re-encoded, defaults filled.
    let normalize: @Sendable (JSONValue, [any CodingKey]) throws(ConfigIssues) -> JSONValue

    init<Settings: PluginSettings>(_ type: Settings.Type) {
        formerKeys = Settings.formerPolicyKeys
        fields = Settings.fields
        hasSettings = Settings.self != NoSettings.self
        normalize = { json, path throws(ConfigIssues) in
            let settings = try ConfigNodeDecoder.decode(Settings.self, from: ConfigNode(json: json), at: path)
            do {
                return try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(settings))
            } catch {
                throw ConfigIssues([ConfigIssue(path: path, "cannot be encoded: \(error)")])
            }
        }
    }
}

/// The plugins' settings in apps' policies (`policy.plugins.<instance>`): checked by each instance's
/// plugin, policies written the old way (`FormerPolicyKey`) moved to the new form, and the settings
/// the console shows. Built from the declared instances (the config loader) or the built ones.
public struct PolicySettingsBook: Sendable {
    /// Each declared instance's codec, by instance id.
    let codecs: [String: SettingsCodec]
    /// For each former key, the registered plugin types' codecs that claim it.
    let formerKeyCodecs: [String: [(FormerPolicyKey, SettingsCodec)]]

    init(codecs: [String: SettingsCodec], formerKeyCodecs: [String: [(FormerPolicyKey, SettingsCodec)]]) {
        self.codecs = codecs
        self.formerKeyCodecs = formerKeyCodecs
    }

    /// What is wrong with a policy's plugin settings, by exact path (`path` names the policy): an
    /// entry for an instance that does not exist or has no settings, a value its plugin refuses, and a
    /// top-level key neither the core nor any plugin knows.
    public func issues(_ policy: Policy, path: String) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        for (id, json) in policy.plugins.sorted(by: { $0.key < $1.key }) {
            let at = [ConfigIssue.Key(path), ConfigIssue.Key("plugins"), ConfigIssue.Key(id)]
            guard let codec = codecs[id] else {
                issues.append(ConfigIssue(path: at, "no provider with id '\(id)' is configured"))
                continue
            }
            guard codec.hasSettings else {
                issues.append(ConfigIssue(path: at, "the provider '\(id)' has no per-app settings"))
                continue
            }
            do { _ = try codec.normalize(json, at) } catch { issues += error.issues }
        }
        for (key, value) in policy.formerSettings.sorted(by: { $0.key < $1.key }) {
            guard let claims = formerKeyCodecs[key] else {
                issues.append(ConfigIssue(path: "\(path).\(key)", "unknown key"))
                continue
            }
            // Read the way each plugin that claims it reads it, reported at the key itself.
            for (former, codec) in claims {
                do {
                    if let field = former.field {
                        _ = try codec.normalize(.object([field: value]), [ConfigIssue.Key(path)])
                    } else {
                        _ = try codec.normalize(value, [ConfigIssue.Key(path), ConfigIssue.Key(key)])
                    }
                } catch {
                    issues += error.issues.map { issue in
                        guard let field = former.field, issue.path.hasPrefix("\(path).\(field)") else { return issue }
                        return ConfigIssue(path: "\(path).\(key)" + issue.path.dropFirst("\(path).\(field)".count), issue.message)
                    }
                }
            }
        }
        // What will be stored: each instance's entry with the former keys laid over it, which may
        // break a rule neither part breaks alone (a stored `maxLength: 6` and a new `pinPolicy.minLength: 8`).
        if issues.isEmpty, !policy.formerSettings.isEmpty {
            for (id, codec) in codecs.sorted(by: { $0.key < $1.key }) where codec.hasSettings && policy.plugins[id] != nil {
                let claimed = codec.formerKeys.map(\.key).filter { policy.formerSettings[$0] != nil }
                guard !claimed.isEmpty, let json = policy.settingsJSON(for: id, formerKeys: codec.formerKeys) else { continue }
                do {
                    _ = try codec.normalize(json, [ConfigIssue.Key(path), ConfigIssue.Key("plugins"), ConfigIssue.Key(id)])
                } catch {
                    issues += error.issues.map { issue in
                        ConfigIssue(
                            path: "\(path).\(claimed[0])",
                            "together with plugins.\(id), \(issue.path.dropFirst("\(path).plugins.\(id)".count).drop { $0 == "." }): \(issue.message)")
                    }
                }
            }
        }
        return issues.uniqued()
    }

    /// The policy in the new form, as stored: what former keys held laid over `plugins.<instance>` of
    /// every instance the policy lists whose plugin claims them, those former keys gone, and each
    /// listed instance's settings as its plugin reads them (typed values, defaults filled).
    public func normalized(_ policy: Policy) -> Policy {
        var policy = policy
        var moved: Set<String> = []
        let listed = Set(policy.identityProviders + policy.authenticators)
        for (id, codec) in codecs where codec.hasSettings && listed.contains(id) {
            guard let json = policy.settingsJSON(for: id, formerKeys: codec.formerKeys) else { continue }
            // Checked before anything is stored (`issues`): a value its plugin refuses stays as written.
            policy.plugins[id] = (try? codec.normalize(json, [ConfigIssue.Key("plugins"), ConfigIssue.Key(id)])) ?? json
            moved.formUnion(codec.formerKeys.map(\.key))
        }
        // A former key no listed instance took stays, so that nothing an earlier version kept is lost.
        policy.formerSettings = policy.formerSettings.filter { !moved.contains($0.key) }
        return policy
    }

    /// The policy without the former keys that `instances`' plugins claim: what a change that sets
    /// those instances' settings in the new form starts from, so that an old key an earlier version
    /// stored does not override it.
    public func droppingFormerKeys(claimedBy instances: Set<String>, from policy: Policy) -> Policy {
        var policy = policy
        let claimed = Set(instances.compactMap { codecs[$0] }.flatMap { $0.formerKeys.map(\.key) })
        policy.formerSettings = policy.formerSettings.filter { !claimed.contains($0.key) }
        return policy
    }

    /// The fields an instance's plugin declares for its settings (empty for an unknown instance).
    public func fields(of instance: String) -> [SettingField] { codecs[instance]?.fields ?? [] }

    /// The settings of the instances the policy lists that have any, defaults filled: what the
    /// console's policy page shows, one fieldset per instance.
    public func effectiveSettings(of policy: Policy) -> [(instance: String, fields: [SettingField], values: [String: JSONValue])] {
        let normalized = normalized(policy)
        return (policy.identityProviders + policy.authenticators).uniqued().compactMap { id in
            guard let codec = codecs[id], codec.hasSettings else { return nil }
            let json = normalized.plugins[id] ?? .object([:])
            guard let values = try? codec.normalize(json, [ConfigIssue.Key("plugins"), ConfigIssue.Key(id)]).objectValue else { return nil }
            return (id, codec.fields, values)
        }
    }
}

extension PluginRegistry {
    /// The settings book of the declared instances, for checks made before plugins are built.
    public func settingsBook(for declarations: [ProviderDeclaration]) -> PolicySettingsBook {
        var codecs: [String: SettingsCodec] = [:]
        for declaration in declarations { codecs[declaration.id] = settings(ofType: declaration.type) }
        return PolicySettingsBook(codecs: codecs, formerKeyCodecs: formerKeyCodecs)
    }
}
