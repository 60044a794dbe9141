import Foundation

/// `admin.console:` — the admin console at `/admin/`, an OpenID Connect client of this broker
/// (the app `gatehouse-console`, seeded from this section at every start).
public struct ConsoleConfig: Sendable, Decodable, Hashable {
    /// The console's app id; no `apps[]` entry may use it while the console is on.
    public static let appID = "gatehouse-console"
    /// The account page's app id (`accountPage:`, the same keys).
    public static let accountAppID = "gatehouse-account"
    /// The broker's own apps: they follow the config file alone, and their tokens serve their pages only
    /// (no device registration, token exchange or plugin endpoints through them).
    public static func isBuiltIn(_ appID: String) -> Bool { appID == Self.appID || appID == accountAppID }

    public var enabled: Bool
    /// The providers admins may sign in with; nil: every identity provider of the config.
    public var identityProviders: [String]?
    /// Authenticators admins may use, and the one every console sign-in must also pass.
    public var authenticators: [String]
    public var secondFactor: String?
    /// How long a console sign-in lasts at most.
    public var sessionLifetime: Seconds
    /// A console session unused for this long ends.
    public var idleLifetime: Seconds
    /// Dangerous actions (deleting an app or a user, rotating keys or secrets) need a sign-in at
    /// most this old; an older one is asked to sign in again first.
    public var reauthenticateAfter: Seconds

    public init(
        enabled: Bool = true, identityProviders: [String]? = nil, authenticators: [String] = [], secondFactor: String? = nil,
        sessionLifetime: Seconds = .hours(1), idleLifetime: Seconds = .minutes(15), reauthenticateAfter: Seconds = .minutes(5)
    ) {
        self.enabled = enabled
        self.identityProviders = identityProviders
        self.authenticators = authenticators
        self.secondFactor = secondFactor
        self.sessionLifetime = sessionLifetime
        self.idleLifetime = idleLifetime
        self.reauthenticateAfter = reauthenticateAfter
    }

    enum CodingKeys: String, CodingKey { case enabled, identityProviders, authenticators, secondFactor, sessionLifetime, idleLifetime, reauthenticateAfter }

    public init(from decoder: any Decoder) throws {
        let defaults = ConsoleConfig()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? defaults.enabled
        identityProviders = try container.decodeIfPresent([String].self, forKey: .identityProviders)
        authenticators = try container.decodeIfPresent([String].self, forKey: .authenticators) ?? []
        secondFactor = try container.decodeIfPresent(String.self, forKey: .secondFactor)
        sessionLifetime = try container.decodeIfPresent(Seconds.self, forKey: .sessionLifetime) ?? defaults.sessionLifetime
        idleLifetime = try container.decodeIfPresent(Seconds.self, forKey: .idleLifetime) ?? defaults.idleLifetime
        reauthenticateAfter = try container.decodeIfPresent(Seconds.self, forKey: .reauthenticateAfter) ?? defaults.reauthenticateAfter
        let path = decoder.codingPath
        guard (300...43_200).contains(sessionLifetime.value) else {
            throw ConfigIssue(path: path + [CodingKeys.sessionLifetime], "must be between 5 minutes and 12 hours, got \(sessionLifetime.value) seconds")
        }
        guard (60...sessionLifetime.value).contains(idleLifetime.value) else {
            throw ConfigIssue(
                path: path + [CodingKeys.idleLifetime], "must be between 60 seconds and sessionLifetime (\(sessionLifetime.value) seconds), got \(idleLifetime.value)")
        }
        guard (60...3600).contains(reauthenticateAfter.value) else {
            throw ConfigIssue(path: path + [CodingKeys.reauthenticateAfter], "must be between 60 seconds and 1 hour, got \(reauthenticateAfter.value) seconds")
        }
        if let secondFactor, !authenticators.contains(secondFactor) {
            throw ConfigIssue(path: path + [CodingKeys.secondFactor], "'\(secondFactor)' must also be listed in authenticators")
        }
    }

    /// The console's app (or the account page's, `site`): a public client (PKCE) whose only redirect
    /// is its callback, with sessions as short as its own, and for the console the `groups` scope
    /// for `admin.consoleGroups`.
    public func app(issuer: String, identityProviders all: [String], now: Date, site: ConsoleSite = .admin) -> App {
        var policy = Policy(
            identityProviders: identityProviders ?? all, authenticators: authenticators, secondFactor: secondFactor,
            accessTokenLifetime: .minutes(5), refreshTokenLifetime: .minutes(5), defaultScopes: site.scopes, allowedScopes: site.scopes
        )
        policy.session = SessionPolicy(idleLifetime: idleLifetime, absoluteLifetime: sessionLifetime)
        policy.logout = LogoutPolicy(postLogoutRedirectURIs: [issuer + site.path + "/signed-out"])
        return App(
            id: site.appID, name: site.appName, secretDigest: nil, redirectURIs: [issuer + site.path + "/callback"], policy: policy,
            managedBy: .config, createdAt: now, updatedAt: now
        )
    }
}
