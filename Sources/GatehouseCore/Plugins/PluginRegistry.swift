/// Type name → factory. The executable registers the built-in plugins; config names types; the
/// registry decodes each instance's config (reporting errors with their exact path) and builds it.
public struct PluginRegistry: Sendable {
    private struct Entry: Sendable {
        let decode: @Sendable (ConfigNode, [any CodingKey]) throws(ConfigIssues) -> any Sendable
        let make: @Sendable (String, any Sendable, PluginEnvironment) throws -> any GatehousePlugin
        let roles: PluginRoles
        let settings: SettingsCodec
    }

    private var entries: [String: Entry] = [:]
    /// The core's challenge types and every registered plugin's.
    public private(set) var challenges = ChallengeCatalog()

    public init() {}

    public mutating func register<Factory: PluginFactory>(_ factory: Factory.Type) {
        for description in Factory.challenges { challenges.add(description) }
        challenges.add(Factory.translations)
        entries[Factory.typeName] = Entry(
            decode: { node, path throws(ConfigIssues) in
                try ConfigNodeDecoder.decode(Factory.Config.self, from: node == .null ? .mapping([]) : node, at: path)
            },
            make: { id, config, environment in
                try Factory.make(id: id, config: config as! Factory.Config, environment: environment)
            },
            roles: PluginRoles(of: Factory.Instance.self),
            settings: SettingsCodec(Factory.Settings.self)
        )
    }

    /// Registered type names, sorted.
    public var typeNames: [String] { entries.keys.sorted() }

    /// The roles the instances of a plugin type play; empty for an unknown type.
    public func roles(ofType type: String) -> PluginRoles { entries[type]?.roles ?? [] }

    /// The settings codec of a plugin type; nil for an unknown type.
    func settings(ofType type: String) -> SettingsCodec? { entries[type]?.settings }

    /// The top-level policy keys registered plugins' settings were once kept under, with the codecs
    /// that read them (in type-name order).
    var formerKeyCodecs: [String: [(FormerPolicyKey, SettingsCodec)]] {
        var claims: [String: [(FormerPolicyKey, SettingsCodec)]] = [:]
        for type in typeNames {
            let codec = entries[type]!.settings
            for former in codec.formerKeys { claims[former.key, default: []].append((former, codec)) }
        }
        return claims
    }

    /// Decodes and checks one declaration's plugin config.
    public func decodeConfig(of declaration: ProviderDeclaration) throws(ConfigIssues) -> any Sendable {
        guard let entry = entries[declaration.type] else {
            let known = typeNames.joined(separator: ", ")
            throw ConfigIssues([ConfigIssue(path: declaration.path + [ConfigIssue.Key("type")], "unknown plugin type '\(declaration.type)' (known: \(known))")])
        }
        return try entry.decode(declaration.config, declaration.path + [ConfigIssue.Key("config")])
    }

    /// What is wrong with a plugin's endpoint declarations (the plugin author's mistake), if anything:
    /// a path that is empty or has a segment other than letters, digits, `.`, `_` and `-` (or, in a
    /// root path after its first segment, `:name`); a root path the server serves itself; a method
    /// and path declared twice; an input named like client credentials; a root endpoint for an
    /// access token or an admin, an `anyone` caller outside a root path, or a page for any other caller.
    static func endpointProblem(_ endpoints: [PluginEndpoint]) -> String? {
        var seen: Set<String> = []
        func literal(_ segment: Substring) -> Bool {
            !segment.allSatisfy { $0 == "." } && segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
        }
        for endpoint in endpoints {
            let name = "\(endpoint.method.rawValue) \(endpoint.path)"
            let segments = endpoint.path.split(separator: "/", omittingEmptySubsequences: false)
            let parameter = { (segment: Substring) in segment.hasPrefix(":") && literal(segment.dropFirst()) && !segment.contains(".") && !segment.contains("-") }
            if !segments.allSatisfy({ literal($0) || parameter($0) }) || !literal(segments[0]) {
                return "an endpoint with an unusable path ('\(endpoint.path)')"
            }
            if !endpoint.root, segments.contains(where: { $0.hasPrefix(":") }) { return "the endpoint \(name) with a parameter outside a root path" }
            if endpoint.root, endpoint.caller == .accessToken || endpoint.caller == .admin {
                return "the root endpoint \(name) for an access token or an admin (those endpoints go under the instance's prefix)"
            }
            if endpoint.root, let owned = serverPaths.first(where: { endpoint.path == $0 || endpoint.path.hasPrefix($0 + "/") }) {
                return "the root endpoint \(name) under '\(owned)', which the server serves itself"
            }
            if !seen.insert("\(endpoint.root) \(name)").inserted { return "the endpoint \(name) twice" }
            if endpoint.inputs.contains(where: { ["client_id", "client_secret"].contains($0.name) }) {
                return "the endpoint \(name) with an input named like client credentials"
            }
            if endpoint.caller == .anyone, !endpoint.root { return "the endpoint \(name) for anyone outside a root path" }
            if endpoint.format == .page, endpoint.caller != .anyone { return "the page \(name) for a caller a browser cannot prove" }
        }
        return nil
    }

    /// The paths the server routes itself (and everything under them): no plugin claims them.
    static let serverPaths = [
        ".well-known", "admin", "oauth2", "logout", "healthz", "readyz", "readiness", "metrics", "static", "v1/flows", "v1/account", "v1/plugins",
        "v1/registration-state", "v1/logout", "v1/provisional-identities",
    ]

    /// Two instances claiming one root path (parameters named alike or not: the server routes it
    /// once) must declare it alike: the same path, caller, format and fields. Answers what is wrong,
    /// if anything.
    static func rootEndpointClash(_ instances: PluginInstances) -> String? {
        var claimed: [String: (String, PluginEndpoint)] = [:]
        for id in instances.all.keys.sorted() {
            for endpoint in instances.endpoints[id, default: []] where endpoint.root {
                let route = endpoint.method.rawValue + " /" + endpoint.path.split(separator: "/").map { $0.hasPrefix(":") ? ":" : String($0) }.joined(separator: "/")
                if let (other, earlier) = claimed[route],
                    earlier.path != endpoint.path || earlier.caller != endpoint.caller || earlier.format != endpoint.format || earlier.inputs != endpoint.inputs
                {
                    return "'\(other)' and '\(id)' claim \(endpoint.method.rawValue) /\(endpoint.path) declared differently (path, caller, format or fields)"
                }
                claimed[route] = claimed[route] ?? (id, endpoint)
            }
        }
        return nil
    }

    /// Builds every declared instance. `environment` gives each its clock, logger and storage.
    public func instantiate(_ declarations: [ProviderDeclaration], environment: (ProviderDeclaration) -> PluginEnvironment) throws(ConfigIssues) -> PluginInstances {
        var instances = PluginInstances()
        var issues: [ConfigIssue] = []
        for declaration in declarations {
            do {
                let config = try decodeConfig(of: declaration)
                let entry = entries[declaration.type]!
                let plugin = try entry.make(declaration.id, config, environment(declaration))
                if let offering = PluginInstances.capability((any EndpointOffering).self, of: plugin), let problem = Self.endpointProblem(offering.endpoints) {
                    issues.append(ConfigIssue(path: declaration.path + [ConfigIssue.Key("type")], "the '\(declaration.type)' plugin declares \(problem)"))
                }
                do {
                    try instances.add(plugin, type: declaration.type, roles: entry.roles, name: declaration.name)
                    instances.settingsCodecs[declaration.id] = entry.settings
                } catch {
                    issues.append(ConfigIssue(path: declaration.path + [ConfigIssue.Key("type")], error.message))
                }
            } catch let error as ConfigIssues {
                issues += error.issues
            } catch let issue as ConfigIssue {
                let base = ConfigIssue.render(declaration.path + [ConfigIssue.Key("config")])
                issues.append(ConfigIssue(path: issue.path.isEmpty ? base : "\(base).\(issue.path)", issue.message))
            } catch {
                issues.append(ConfigIssue(path: declaration.path, "could not start the '\(declaration.type)' plugin: \(error)"))
            }
        }
        if let clash = Self.rootEndpointClash(instances) { issues.append(ConfigIssue(path: "providers", clash)) }
        if !issues.isEmpty { throw ConfigIssues(issues) }
        instances.settings = PolicySettingsBook(codecs: instances.settingsCodecs, formerKeyCodecs: formerKeyCodecs)
        return instances
    }
}

/// The plugin instances built from config, by id, and the capabilities each adopts: found once, when
/// the instance is filed, so that nothing else in the broker casts a plugin.
public struct PluginInstances: Sendable {
    /// The authenticator (or provider) that proves addresses for an app: the first in its policy
    /// that can; nil when none can.
    public func addressVerifier(for app: App) -> (any AddressVerifying)? {
        (app.policy.authenticators + app.policy.identityProviders).lazy.compactMap { addressVerifiers[$0] }.first
    }

    /// The device-attestation checker an app allows: the first such instance in its policy's
    /// authenticators, then identity providers.
    public func deviceAttester(for app: App) -> (any DeviceAttesting)? {
        (app.policy.authenticators + app.policy.identityProviders).lazy.compactMap { deviceAttesters[$0] }.first
    }

    /// Whether one of the app's identity providers registers devices (device keys, activation), which
    /// lets the app's tokens manage the account's devices.
    public func registersDevices(for app: App) -> Bool {
        app.policy.identityProviders.contains { identityProviders[$0]?.traits.registration == .device }
    }

    /// The identity providers that can sign in statelessly (`traits.statelessCapable`), by id.
    public var statelessCapableIdentityProviders: Set<String> {
        Set(identityProviders.filter { $0.value.traits.statelessCapable }.keys)
    }

    public private(set) var identityProviders: [String: any IdentityProvider] = [:]
    public private(set) var authenticators: [String: any Authenticator] = [:]
    public private(set) var all: [String: any GatehousePlugin] = [:]
    public private(set) var typeNames: [String: String] = [:]
    /// How each instance's per-app settings are read and checked.
    var settingsCodecs: [String: SettingsCodec] = [:]
    /// The instances' settings in apps' policies: checks, the new form, what the console shows.
    public internal(set) var settings = PolicySettingsBook(codecs: [:], formerKeyCodecs: [:])
    /// The names people see, by id (`providers[].name`); the id when none is set.
    public private(set) var displayNames: [String: String] = [:]

    // The optional capabilities, by instance id.
    public private(set) var healthReporters: [String: any HealthReporting] = [:]
    public private(set) var diagnosables: [String: any Diagnosable] = [:]
    public private(set) var forgetting: [String: any Forgetting] = [:]
    public private(set) var recheckers: [String: any Rechecking] = [:]
    public private(set) var assertionVerifiers: [String: any AssertionVerifying] = [:]
    public private(set) var handingOver: [String: any HandingOver] = [:]
    public private(set) var flowStoppers: [String: any FlowStopping] = [:]
    public private(set) var identityCompleters: [String: any IdentityCompleting] = [:]
    public private(set) var keyUseCheckers: [String: any KeyUseChecking] = [:]
    public private(set) var factorChainers: [String: any FactorChaining] = [:]
    public private(set) var addressVerifiers: [String: any AddressVerifying] = [:]
    public private(set) var deviceAttesters: [String: any DeviceAttesting] = [:]
    public private(set) var passwordKeepers: [String: any PasswordKeeping] = [:]
    public private(set) var temporaryPasswords: [String: any TemporaryPasswords] = [:]
    public private(set) var directories: [String: any DirectorySearching] = [:]
    /// Each instance's admin resources, account operations and endpoints, read once.
    public private(set) var adminResources: [String: [AdminResource]] = [:]
    public private(set) var accountOperations: [String: [AccountOperation]] = [:]
    public private(set) var endpoints: [String: [PluginEndpoint]] = [:]
    public private(set) var pageTemplates: [String: [String: String]] = [:]

    public init() {}

    /// Files an instance under its roles (what its factory's `Instance` adopts) and the capabilities it
    /// adopts. These casts are the broker's only ones on plugins: the registry keeps instances as plain
    /// plugins, and this is where they are held to their roles (a test plugin filed by hand under a
    /// role it does not play is refused) and their capabilities found.
    public mutating func add(_ plugin: any GatehousePlugin, type: String, roles: PluginRoles, name: String? = nil) throws(ConfigIssue) {
        if roles.contains(.identityProvider) {
            guard let provider = plugin as? any IdentityProvider else { throw Self.roleMismatch(type, "IdentityProvider") }
            identityProviders[plugin.id] = provider
        }
        if roles.contains(.authenticator) {
            guard let authenticator = plugin as? any Authenticator else { throw Self.roleMismatch(type, "Authenticator") }
            authenticators[plugin.id] = authenticator
        }
        let id = plugin.id
        all[id] = plugin
        typeNames[id] = type
        displayNames[id] = name ?? id
        healthReporters[id] = Self.capability((any HealthReporting).self, of: plugin)
        diagnosables[id] = Self.capability((any Diagnosable).self, of: plugin)
        forgetting[id] = Self.capability((any Forgetting).self, of: plugin)
        recheckers[id] = Self.capability((any Rechecking).self, of: plugin)
        assertionVerifiers[id] = Self.capability((any AssertionVerifying).self, of: plugin)
        handingOver[id] = Self.capability((any HandingOver).self, of: plugin)
        flowStoppers[id] = Self.capability((any FlowStopping).self, of: plugin)
        identityCompleters[id] = Self.capability((any IdentityCompleting).self, of: plugin)
        keyUseCheckers[id] = Self.capability((any KeyUseChecking).self, of: plugin)
        factorChainers[id] = Self.capability((any FactorChaining).self, of: plugin)
        addressVerifiers[id] = Self.capability((any AddressVerifying).self, of: plugin)
        deviceAttesters[id] = Self.capability((any DeviceAttesting).self, of: plugin)
        passwordKeepers[id] = Self.capability((any PasswordKeeping).self, of: plugin)
        temporaryPasswords[id] = Self.capability((any TemporaryPasswords).self, of: plugin)
        directories[id] = Self.capability((any DirectorySearching).self, of: plugin)
        adminResources[id] = Self.capability((any AdminResourceOffering).self, of: plugin)?.adminResources
        accountOperations[id] = Self.capability((any AccountOperationOffering).self, of: plugin)?.accountOperations
        if let offering = Self.capability((any EndpointOffering).self, of: plugin) {
            endpoints[id] = offering.endpoints
            pageTemplates[id] = offering.pageTemplates
        }
    }

    /// The capability a plugin adopts, when it does: the one way the broker finds one.
    static func capability<Capability>(_ capability: Capability.Type, of plugin: any GatehousePlugin) -> Capability? {
        plugin as? Capability
    }

    /// Whether the instance hands its flows over (`HandingOver`): no flow is handed to it.
    public func handsOver(_ id: String) -> Bool { handingOver[id] != nil }

    private static func roleMismatch(_ type: String, _ role: String) -> ConfigIssue {
        ConfigIssue(path: "", "the '\(type)' plugin declares the role \(role) but its instance does not adopt it")
    }
}

extension PluginRoles {
    /// The roles of a plugin type: what its instance type adopts.
    init(of instance: any GatehousePlugin.Type) {
        self = []
        if instance is any IdentityProvider.Type { insert(.identityProvider) }
        if instance is any Authenticator.Type { insert(.authenticator) }
    }
}
