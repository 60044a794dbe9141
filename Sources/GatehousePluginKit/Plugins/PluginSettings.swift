import Foundation

/// A plugin's settings for one app: `policy.plugins.<instance>` in config, the admin API and the
/// console. The plugin's own `Codable` type with defaults (`init()`), decoded with the config decoder
/// so that a mistake is reported with its exact path (`apps[0].policy.plugins.pin.minLength: ...`);
/// changed at run time like the rest of the policy. A plugin reads its settings for the app a flow
/// runs for with `AppView.settings(_:for:)`.
public protocol PluginSettings: Codable, Sendable, Hashable {
    /// The settings of an app that sets none.
    init()
    /// How the console shows the fields (choices, hints), in order; a field not declared here is shown
    /// by its JSON type. Default: none declared.
    static var fields: [SettingField] { get }
    /// Where these settings were kept before `policy.plugins` existed (top-level policy keys such as
    /// `pinPolicy`), so that a config file or a stored policy written the old way keeps working.
    /// Default: none.
    static var formerPolicyKeys: [FormerPolicyKey] { get }
}

extension PluginSettings {
    /// None declared.
    public static var fields: [SettingField] { [] }
    /// None.
    public static var formerPolicyKeys: [FormerPolicyKey] { [] }
}

/// The settings of a plugin that has none.
public struct NoSettings: PluginSettings {
    /// No settings.
    public init() {}
}

/// How the console shows one settings field.
public struct SettingField: Sendable, Hashable {
    /// The key, as in the settings' JSON.
    public var name: String
    /// The label a person sees.
    public var label: String
    /// The values it may take, for a choice; empty: any value of its JSON type.
    public var choices: [String]
    /// A line under the field.
    public var hint: String?

    /// A field; `choices` empty for any value of its JSON type.
    public init(_ name: String, label: String, choices: [String] = [], hint: String? = nil) {
        self.name = name
        self.label = label
        self.choices = choices
        self.hint = hint
    }
}

/// A top-level policy key that held (part of) a plugin's settings before `policy.plugins` existed:
/// its value is read as the settings (or as the settings' field `field`) of every instance of the
/// plugin, over what `plugins.<instance>` says.
public struct FormerPolicyKey: Sendable, Hashable {
    /// The old top-level key, e.g. `pinPolicy`.
    public var key: String
    /// The settings field it becomes; nil: it is the whole settings object.
    public var field: String?

    /// A former key; `field` nil when it held the whole settings.
    public init(_ key: String, field: String? = nil) {
        self.key = key
        self.field = field
    }
}

extension AppView {
    /// The settings of plugin instance `instanceID` for this app: `policy.plugins.<instance>`, or a
    /// policy written the old way (`FormerPolicyKey`), or the defaults. A policy is checked when it is
    /// written, so a failure here means a stored policy no plugin version could read.
    public func settings<Settings: PluginSettings>(_ type: Settings.Type, for instanceID: String) throws -> Settings {
        guard let json = Self.settingsJSON(for: instanceID, formerKeys: Settings.formerPolicyKeys, plugins: pluginSettings, formerSettings: formerSettings) else {
            return Settings()
        }
        do {
            if let settingsDecoder { return try settingsDecoder.decode(Settings.self, from: json, instanceID: instanceID) }
            return try JSONDecoder().decode(Settings.self, from: Data(json.serialized()))
        } catch {
            throw BrokerError.internalFailure("The stored settings of '\(instanceID)' for app '\(id)' cannot be read: \(error)")
        }
    }

    /// The settings JSON of an instance: its `plugins` entry, with what former keys hold laid over it
    /// (a former key present was written after the new form: a patch in the old form); nil when
    /// neither says anything.
    package static func settingsJSON(
        for instanceID: String, formerKeys: [FormerPolicyKey], plugins: [String: JSONValue], formerSettings: [String: JSONValue]
    ) -> JSONValue? {
        let written = plugins[instanceID]
        let claimed = formerKeys.filter { formerSettings[$0.key] != nil }
        guard !claimed.isEmpty else { return written }
        var object = written?.objectValue ?? [:]
        for former in claimed {
            let value = formerSettings[former.key]!
            if let field = former.field {
                object[field] = value
            } else if case .object(let fields) = value {
                object.merge(fields) { _, former in former }
            }
        }
        return .object(object)
    }
}

/// Decodes a plugin's settings the way the broker decodes its config (durations like `30d`, errors
/// naming the exact path). Package access: the broker hands one to every `AppView` it builds.
package protocol PluginSettingsDecoder: Sendable {
    func decode<Settings: PluginSettings>(_ type: Settings.Type, from json: JSONValue, instanceID: String) throws -> Settings
}
