/// The two sites the broker serves to people signed in through itself: the admin console
/// (`/admin/`, admins only) and the account page (`/account`, everyone with an account). Both are
/// OpenID Connect clients of the broker with the same sign-in, sessions, CSRF tokens and
/// re-authentication (`AdminConsoleService`); they differ in their app, paths and who is admitted.
public enum ConsoleSite: String, Sendable, Hashable {
    case admin
    case account

    public var appID: String { self == .admin ? ConsoleConfig.appID : ConsoleConfig.accountAppID }
    var appName: String { self == .admin ? "Gatehouse admin console" : "Your account" }
    /// The path every page of the site is under.
    public var path: String { self == .admin ? "/admin" : "/account" }
    var scopes: [String] { self == .admin ? ["openid", "profile", "groups"] : ["openid", "profile"] }
    var sessionNamespace: String { self == .admin ? "gatehouse:console-sessions" : "gatehouse:account-sessions" }
    var signInCookieContext: String { self == .admin ? "gatehouse:console-sign-in" : "gatehouse:account-sign-in" }
    /// The prefix of its audit events (`console.signed_in`, `account_page.signed_in`).
    var auditPrefix: String { self == .admin ? "console." : "account_page." }
}
