import Foundation

/// The whole broker configuration (one YAML file; see docs/configuration.md).
public struct BrokerConfig: Sendable, CustomStringConvertible {
    /// A summary without any value that may be a secret (admin tokens, app secrets, provider configs).
    public var description: String {
        "BrokerConfig(environment: \(environment.rawValue), issuer: \(server.issuer), providers: \(providers.map(\.id)), apps: \(apps.map(\.id)))"
    }

    public var environment: DeploymentEnvironment
    public var server: ServerConfig
    public var storage: StorageConfig
    public var tokens: TokenConfig
    public var providers: [ProviderDeclaration]
    public var apps: [AppSeed]
    public var admin: AdminConfig
    public var mail: MailConfig
    public var keys: KeysConfig
    /// `lockout:` — the limits of requests that name no known app (unknown client ids, the admin
    /// API): the keys of `apps[].policy.lockout`, with the same defaults.
    public var lockout: LockoutPolicy
    /// `events:` — how the outbox (webhook events, back-channel logout tokens) is delivered.
    public var events: EventSettings
    /// `scim:` — SCIM provisioning.
    public var scim: ScimConfig
    /// `accountPage:` — the page where people manage their own account (`/account`), an OpenID
    /// Connect client of this broker like the admin console, with the same keys.
    public var accountPage: ConsoleConfig

    public init(
        environment: DeploymentEnvironment = .production, server: ServerConfig, storage: StorageConfig, tokens: TokenConfig = TokenConfig(),
        providers: [ProviderDeclaration], apps: [AppSeed], admin: AdminConfig = AdminConfig(), mail: MailConfig = MailConfig(),
        keys: KeysConfig = KeysConfig(), lockout: LockoutPolicy = LockoutPolicy(), events: EventSettings = EventSettings(), scim: ScimConfig = ScimConfig(),
        accountPage: ConsoleConfig = ConsoleConfig()
    ) {
        self.accountPage = accountPage
        self.events = events
        self.scim = scim
        self.mail = mail
        self.keys = keys
        self.lockout = lockout
        self.environment = environment
        self.server = server
        self.storage = storage
        self.tokens = tokens
        self.providers = providers
        self.apps = apps
        self.admin = admin
    }
}

/// `admin:` — the admin API's bearer tokens (with none, and no `GATEHOUSE_ADMIN_TOKEN`, the admin
/// API is off, and the console has no bootstrap token), and the admin console.
public struct AdminConfig: Sendable, Decodable {
    /// One named admin credential.
    public struct Token: Sendable, Decodable {
        public var name: String
        public var token: String

        enum CodingKeys: String, CodingKey { case name, token }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.name = try container.decode(String.self, forKey: .name)
            self.token = try container.decode(String.self, forKey: .token)
            guard Identifier.isValid(name) else { throw ConfigIssue(path: decoder.codingPath + [CodingKeys.name], Identifier.rule) }
            guard token.utf8.count >= 32 else {
                throw ConfigIssue(
                    path: decoder.codingPath + [CodingKeys.token], "an admin token needs at least 32 characters (generate one with `openssl rand -base64 32`)")
            }
        }

        public init(name: String, token: String) {
            self.name = name
            self.token = token
        }
    }

    public var tokens: [Token]
    /// Directory or upstream groups (the `groups` claim of an LDAP or OIDC provider) whose members
    /// are admitted to the admin console without a stored admin role.
    public var consoleGroups: [String]
    public var console: ConsoleConfig

    public init(tokens: [Token] = [], consoleGroups: [String] = [], console: ConsoleConfig = ConsoleConfig()) {
        self.tokens = tokens
        self.consoleGroups = consoleGroups
        self.console = console
    }

    enum CodingKeys: String, CodingKey { case tokens, consoleGroups, console }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.tokens = try container.decodeIfPresent([Token].self, forKey: .tokens) ?? []
        self.consoleGroups = try container.decodeIfPresent([String].self, forKey: .consoleGroups) ?? []
        self.console = try container.decodeIfPresent(ConsoleConfig.self, forKey: .console) ?? ConsoleConfig()
    }
}

/// `development` relaxes rules that only make sense in production (an `http://` issuer on a public
/// host, log-only delivery modes of plugins) and says so loudly in the log.
public enum DeploymentEnvironment: String, Sendable, Codable {
    case development
    case production
}

/// `server:` — where to listen and the issuer URL that tokens name.
public struct ServerConfig: Sendable, Decodable {
    public var listen: ListenAddress
    /// The configured issuer; nil means `http://<listen>`, which suits development on loopback.
    public var configuredIssuer: String?
    /// Addresses of reverse proxies whose `X-Forwarded-For` names the real client (for per-IP limits
    /// and audit); requests from anywhere else have the header ignored.
    public var trustedProxies: [String]
    /// How long a connection may go without sending a complete request head before it is closed
    /// (idle keep-alive connections, and clients that send nothing or a byte at a time).
    public var idleTimeout: Seconds
    /// An operator's theme for the sign-in pages: a folder of page templates (`<page>.mustache`) and
    /// `pages.css` that override the built-in ones, checked when the server starts.
    public var themeDir: String?

    public init(listen: ListenAddress, issuer: String? = nil, trustedProxies: [String] = [], idleTimeout: Seconds = Seconds(30), themeDir: String? = nil) {
        self.themeDir = themeDir
        self.listen = listen
        self.configuredIssuer = issuer
        self.trustedProxies = trustedProxies
        self.idleTimeout = idleTimeout
    }

    /// The `iss` of every token; the base URL clients reach the broker at.
    public var issuer: String { configuredIssuer ?? "http://\(listen)" }

    enum CodingKeys: String, CodingKey { case listen, issuer, trustedProxies, idleTimeout, themeDir }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.themeDir = try container.decodeIfPresent(String.self, forKey: .themeDir)
        self.listen = try container.decodeIfPresent(ListenAddress.self, forKey: .listen) ?? ListenAddress(host: "127.0.0.1", port: 8080)
        self.configuredIssuer = try container.decodeIfPresent(String.self, forKey: .issuer)
        self.trustedProxies = try container.decodeIfPresent([String].self, forKey: .trustedProxies) ?? []
        self.idleTimeout = try container.decodeIfPresent(Seconds.self, forKey: .idleTimeout) ?? Seconds(30)
        if !(1...3600).contains(idleTimeout.value) {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.idleTimeout], "must be between 1 and 3600 seconds, got \(idleTimeout.value)")
        }
        if let issuer = configuredIssuer {
            guard let url = URL(string: issuer), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil,
                url.query == nil, url.fragment == nil, !issuer.hasSuffix("/")
            else {
                throw ConfigIssue(
                    path: decoder.codingPath + [CodingKeys.issuer],
                    "not a valid issuer URL (http(s)://host[:port][/path], no query, fragment or trailing slash): '\(issuer)'")
            }
        }
    }
}

/// `storage:` — where the broker keeps its data: `sqlite` (one node, the default) or `postgres`
/// (any number of nodes sharing one database).
public struct StorageConfig: Sendable, Decodable {
    /// `storage.sqlite.path`: the database file (created with its folder when missing).
    public var sqlitePath: String
    /// `storage.sqlite.durability`.
    public var durability: Durability
    /// `storage.postgres`: set when the broker keeps its data in PostgreSQL (then there is no SQLite file).
    public var postgres: PostgresSettings?

    /// How hard each commit is pushed to disk.
    public enum Durability: String, Sendable, Codable {
        /// Every commit is synced: it survives a power cut (SQLite `synchronous=FULL`).
        case full
        /// Synced at checkpoints: survives a process crash; a power cut may lose the last commits
        /// (`synchronous=NORMAL`), for several times the write throughput.
        case normal
    }

    public init(sqlitePath: String, durability: Durability = .full) {
        self.sqlitePath = sqlitePath
        self.durability = durability
        self.postgres = nil
    }

    public init(postgres: PostgresSettings) {
        self.sqlitePath = "data/gatehouse.sqlite"
        self.durability = .full
        self.postgres = postgres
    }

    enum CodingKeys: String, CodingKey { case sqlite, postgres }
    enum SQLiteKeys: String, CodingKey { case path, durability }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.postgres) {
            if container.contains(.sqlite) {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.postgres], "storage takes either sqlite or postgres, not both")
            }
            self.postgres = try container.decode(PostgresSettings.self, forKey: .postgres)
            self.sqlitePath = "data/gatehouse.sqlite"
            self.durability = .full
            return
        }
        self.postgres = nil
        let sqlite = try container.nestedContainer(keyedBy: SQLiteKeys.self, forKey: .sqlite)
        self.sqlitePath = try sqlite.decodeIfPresent(String.self, forKey: .path) ?? "data/gatehouse.sqlite"
        let durability = try sqlite.decodeIfPresent(String.self, forKey: .durability) ?? "full"
        guard let parsed = Durability(rawValue: durability) else {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.sqlite, SQLiteKeys.durability], "must be full or normal, got '\(durability)'")
        }
        self.durability = parsed
        if sqlitePath.isEmpty {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.sqlite, SQLiteKeys.path], "must not be empty")
        }
    }
}

/// `tokens:` — how the broker signs what it issues.
public struct TokenConfig: Sendable, Decodable {
    public var signingAlgorithm: SigningAlgorithm

    public init(signingAlgorithm: SigningAlgorithm = .es256) { self.signingAlgorithm = signingAlgorithm }

    enum CodingKeys: String, CodingKey { case signingAlgorithm }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decodeIfPresent(String.self, forKey: .signingAlgorithm) ?? "ES256"
        guard let algorithm = SigningAlgorithm(rawValue: name) else {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.signingAlgorithm], "'\(name)' is not supported (use ES256 or RS256)")
        }
        self.signingAlgorithm = algorithm
    }
}

/// One `providers:` entry: an instance id, a plugin type, and the plugin's own config, which the
/// plugin decodes itself.
public struct ProviderDeclaration: Sendable, Decodable {
    public var id: String
    public var type: String
    public var config: ConfigNode
    /// What people see on the provider chooser ("Continue with <name>"); the id when not set.
    public var name: String?
    /// Where the entry stands in the file, so plugin errors name the exact path.
    public var path: [ConfigIssue.Key]

    public init(id: String, type: String, config: ConfigNode = .null, name: String? = nil, path: [ConfigIssue.Key] = []) {
        self.id = id
        self.type = type
        self.config = config
        self.name = name
        self.path = path
    }

    enum CodingKeys: String, CodingKey { case id, type, config, name }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.id = try container.decode(String.self, forKey: .id)
        self.type = try container.decode(String.self, forKey: .type)
        self.config = try container.decodeIfPresent(ConfigNode.self, forKey: .config) ?? .null
        self.name = try container.decodeIfPresent(String.self, forKey: .name)
        self.path = decoder.codingPath.map { $0.intValue.map(ConfigIssue.Key.init(index:)) ?? ConfigIssue.Key($0.stringValue) }
        if !Identifier.isValid(id) {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.id], Identifier.rule)
        }
    }
}

/// One `apps:` entry, seeded into the store on start.
public struct AppSeed: Sendable, Decodable {
    public var id: String
    public var name: String
    /// The client secret in clear (from `${ENV}`); nil for a public client.
    public var secret: String?
    public var redirectURIs: [String]
    public var policy: Policy

    public init(id: String, name: String, secret: String? = nil, redirectURIs: [String] = [], policy: Policy) {
        self.id = id
        self.name = name
        self.secret = secret
        self.redirectURIs = redirectURIs
        self.policy = policy
    }

    enum CodingKeys: String, CodingKey { case id, name, secret, redirectURIs, policy }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.id = try container.decode(String.self, forKey: .id)
        self.name = try container.decodeIfPresent(String.self, forKey: .name) ?? id
        self.secret = try container.decodeIfPresent(String.self, forKey: .secret)
        self.redirectURIs = try container.decodeIfPresent([String].self, forKey: .redirectURIs) ?? []
        self.policy = try container.decodeIfPresent(Policy.self, forKey: .policy) ?? Policy()
        let path = decoder.codingPath
        if !Identifier.isValid(id) {
            throw ConfigIssue(path: path + [CodingKeys.id], Identifier.rule)
        }
        if let secret, secret.utf8.count < 32 {
            throw ConfigIssue(path: path + [CodingKeys.secret], "a client secret needs at least 32 characters (generate one with `openssl rand -base64 32`)")
        }
        try AppNameRule.check(name, path: path + [CodingKeys.name])
        try RedirectURIRule.check(redirectURIs, path: path + [CodingKeys.redirectURIs])
    }

}
