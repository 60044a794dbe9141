import Foundation

/// Reads a config document and checks all of it: syntax, types, unknown keys, every plugin's own
/// config, and references between sections. It reports every mistake it finds, not just the first.
public struct ConfigLoader: Sendable {
    public let registry: PluginRegistry

    public init(registry: PluginRegistry) { self.registry = registry }

    public func load(yaml text: String, environment: [String: String]) throws(ConfigIssues) -> BrokerConfig {
        let (root, substitutionIssues) = try ConfigNode.parse(yaml: text, environment: environment)
        return try load(
            root, knownIssues: substitutionIssues,
            environmentToken: environment["GATEHOUSE_ADMIN_TOKEN"].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 },
            environmentKEK: environment["GATEHOUSE_KEK"].flatMap { $0.isEmpty ? nil : $0 }
        )
    }

    /// Checks a parsed document; `knownIssues` (from parsing) are reported with the rest, and any
    /// path they name is not reported again.
    /// `environmentKEK` (`GATEHOUSE_KEK`) is the key-encryption key when the config's `keys` names none.
    public func load(_ root: ConfigNode, knownIssues: [ConfigIssue] = [], environmentToken: String? = nil, environmentKEK: String? = nil) throws(ConfigIssues)
        -> BrokerConfig
    {
        var issues: [ConfigIssue] = []
        guard case .mapping(let entries) = root else {
            throw ConfigIssues([ConfigIssue(path: "", "the config must be a mapping with server, storage, providers and apps")])
        }
        let known = ["environment", "server", "storage", "tokens", "providers", "apps", "admin", "mail", "keys", "lockout", "events", "scim", "accountPage"]
        for entry in entries where !known.contains(entry.key) {
            issues.append(ConfigIssue(path: entry.key, "unknown key (expected one of: \(known.joined(separator: ", ")))"))
        }

        func section<T: Decodable>(_ key: String, _ type: T.Type, default fallback: ConfigNode = .mapping([])) -> T? {
            do {
                return try ConfigNodeDecoder.decode(T.self, from: root[key] ?? fallback, at: [ConfigIssue.Key(key)])
            } catch {
                issues += error.issues
                return nil
            }
        }

        func list<T: Decodable>(_ key: String, _ type: T.Type) -> [T] {
            guard let node = root[key], node != .null else { return [] }
            guard case .sequence(let elements) = node else {
                issues.append(ConfigIssue(path: key, "expected a list"))
                return []
            }
            var decoded: [T] = []
            for (index, element) in elements.enumerated() {
                do {
                    decoded.append(try ConfigNodeDecoder.decode(T.self, from: element, at: [ConfigIssue.Key(key), ConfigIssue.Key(index: index)]))
                } catch {
                    issues += error.issues
                }
            }
            return decoded
        }

        let environment = section("environment", DeploymentEnvironment.self, default: .scalar("production"))
        let server = section("server", ServerConfig.self)
        let storage = section("storage", StorageConfig.self)
        let tokens = section("tokens", TokenConfig.self)
        let admin = section("admin", AdminConfig.self)
        let mail = section("mail", MailConfig.self)
        let lockout = section("lockout", LockoutPolicy.self)
        let events = section("events", EventSettings.self)
        let scim = section("scim", ScimConfig.self)
        let accountPage = section("accountPage", ConsoleConfig.self, default: .mapping([]))
        var keys = section("keys", KeysConfig.self)
        if var configured = keys, !configured.isConfigured, let environmentKEK {
            do {
                _ = try KeyEncryptionKey(text: environmentKEK)
                configured.encryptionKey = environmentKEK
                keys = configured
            } catch {
                issues.append(ConfigIssue(path: "GATEHOUSE_KEK", error.description))
            }
        }
        let providers = list("providers", ProviderDeclaration.self)
        let apps = list("apps", AppSeed.self)

        issues += duplicates(providers.map(\.id), section: "providers")
        // `/readyz` reports the database as `store`, beside each provider by its id.
        for (index, provider) in providers.enumerated() where provider.id == "store" {
            issues.append(ConfigIssue(path: "providers[\(index)].id", "'store' is reserved (the readiness check of the database); choose another id"))
        }
        issues += duplicates(apps.map(\.id), section: "apps")
        for provider in providers {
            do {
                _ = try registry.decodeConfig(of: provider)
            } catch {
                issues += error.issues
            }
        }
        // Each plugin type declares its roles; an unknown type (reported above) counts in both.
        func ids(playing role: PluginRoles) -> Set<String> {
            Set(providers.filter { registry.roles(ofType: $0.type).contains(role) || registry.roles(ofType: $0.type).isEmpty }.map(\.id))
        }
        let identityProviderIDs = ids(playing: .identityProvider), authenticatorIDs = ids(playing: .authenticator)
        let settings = registry.settingsBook(for: providers)
        for (index, app) in apps.enumerated() {
            issues += app.policy.referenceIssues(identityProviders: identityProviderIDs, authenticators: authenticatorIDs, path: "apps[\(index)].policy")
            issues += settings.issues(app.policy, path: "apps[\(index)].policy")
        }
        if let console = admin?.console, console.enabled {
            if let index = apps.firstIndex(where: { $0.id == ConsoleConfig.appID }) {
                issues.append(
                    ConfigIssue(path: "apps[\(index)].id", "'\(ConsoleConfig.appID)' is the admin console's app; choose another id (or set admin.console.enabled: false)")
                )
            }
            for (index, id) in (console.identityProviders ?? []).enumerated() where !identityProviderIDs.contains(id) {
                issues.append(ConfigIssue(path: "admin.console.identityProviders[\(index)]", "no identity provider '\(id)' is declared in providers"))
            }
            for (index, id) in console.authenticators.enumerated() where !authenticatorIDs.contains(id) {
                issues.append(ConfigIssue(path: "admin.console.authenticators[\(index)]", "no authenticator '\(id)' is declared in providers"))
            }
        }
        if let accountPage, accountPage.enabled {
            if let index = apps.firstIndex(where: { $0.id == ConsoleConfig.accountAppID }) {
                issues.append(
                    ConfigIssue(
                        path: "apps[\(index)].id", "'\(ConsoleConfig.accountAppID)' is the account page's app; choose another id (or set accountPage.enabled: false)"))
            }
            for (index, id) in (accountPage.identityProviders ?? []).enumerated() where !identityProviderIDs.contains(id) {
                issues.append(ConfigIssue(path: "accountPage.identityProviders[\(index)]", "no identity provider '\(id)' is declared in providers"))
            }
            for (index, id) in accountPage.authenticators.enumerated() where !authenticatorIDs.contains(id) {
                issues.append(ConfigIssue(path: "accountPage.authenticators[\(index)]", "no authenticator '\(id)' is declared in providers"))
            }
        }
        if let environment, let server, environment == .production, let url = URL(string: server.issuer), url.scheme == "http",
            !LoopbackHost.contains(url.host ?? "")
        {
            issues.append(ConfigIssue(path: "server.issuer", "must use https outside development (only loopback issuers may use http)"))
        }

        for (index, link) in (scim?.links ?? []).enumerated() where !identityProviderIDs.contains(link.provider) {
            issues.append(ConfigIssue(path: "scim.links[\(index)].provider", "no identity provider '\(link.provider)' is declared in providers"))
        }
        if let environment, let mail { issues += mail.issues(in: environment) }
        if let environment, let postgres = storage?.postgres { issues += postgres.issues(in: environment, path: "storage.postgres") }

        // A variable that is not set reads as null; drop the follow-on "missing" report at the same path.
        let knownPaths = Set(knownIssues.map(\.path))
        issues = knownIssues + issues.filter { !knownPaths.contains($0.path) }
        var adminTokens = admin?.tokens ?? []
        if let token = environmentToken {
            if token.utf8.count < 32 {
                issues.append(ConfigIssue(path: "GATEHOUSE_ADMIN_TOKEN", "an admin token needs at least 32 characters"))
            } else {
                adminTokens.append(AdminConfig.Token(name: "env-admin", token: token))
            }
        }
        guard issues.isEmpty, let environment, let server, let storage, let tokens, let mail, let keys, let lockout, let events, let scim, let accountPage else {
            throw ConfigIssues(issues)
        }
        return BrokerConfig(
            environment: environment, server: server, storage: storage, tokens: tokens, providers: providers, apps: apps,
            admin: AdminConfig(tokens: adminTokens, consoleGroups: admin?.consoleGroups ?? [], console: admin?.console ?? ConsoleConfig()), mail: mail, keys: keys,
            lockout: lockout,
            events: events, scim: scim, accountPage: accountPage
        )
    }

    private func duplicates(_ ids: [String], section: String) -> [ConfigIssue] {
        var seen: Set<String> = []
        var issues: [ConfigIssue] = []
        for (index, id) in ids.enumerated() where !seen.insert(id).inserted {
            issues.append(ConfigIssue(path: "\(section)[\(index)].id", "'\(id)' is used by an earlier entry"))
        }
        return issues
    }
}
