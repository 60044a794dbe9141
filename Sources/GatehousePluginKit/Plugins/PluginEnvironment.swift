import Foundation
import Logging

/// What the broker hands every plugin instance: the only way a plugin reaches time, logs and storage.
public struct PluginEnvironment: Sendable {
    /// The broker's clock (a test clock in tests): the only time a plugin reads.
    public var clock: any BrokerClock
    /// A logger with the instance's id in its metadata.
    public var logger: Logger
    /// Key-value storage private to this plugin instance.
    public var storage: PluginStorage
    /// True when config says this is a development deployment (plugins may relax rules, loudly).
    public var development: Bool
    /// For plugins that call out over HTTP.
    public var http: any OutboundHTTP
    /// For plugins that send email: the transport `mail:` configures.
    public var mailer: any Mailer
    /// Lockouts and rate limits kept by the core, under this instance's id.
    public var lockouts: LockoutBook
    /// The broker's callback URL (`<issuer>/oauth2/callback`), where a challenge with a `callback`
    /// has the browser sent back with the flow's id as `state`.
    public var callbackURL: String
    /// The broker's issuer URL: the audience of what devices sign for it.
    public var issuer: String
    /// The devices and sign-in keys of every account (the core's, shared by all plugins).
    public var devices: DeviceDirectory?
    /// The accounts and their identities, for plugins that act for an account outside a flow
    /// (issuing an activation); they change accounts only through the flow engine.
    public var accounts: AccountDirectory?
    /// The apps, for plugins that answer outside a flow (an invitation link names its app).
    public var apps: AppDirectory?
    /// The audit log, for what a plugin does outside a flow and the admin API.
    public var audit: AuditLog?

    /// An environment; the broker builds one per instance (tests: `GatehouseTesting`).
    package init(
        clock: any BrokerClock, logger: Logger, storage: PluginStorage, lockouts: LockoutBook, development: Bool = false,
        http: any OutboundHTTP, mailer: any Mailer, callbackURL: String = "http://127.0.0.1/oauth2/callback",
        issuer: String = "http://127.0.0.1", devices: DeviceDirectory? = nil, accounts: AccountDirectory? = nil, apps: AppDirectory? = nil,
        audit: AuditLog? = nil
    ) {
        self.accounts = accounts
        self.apps = apps
        self.audit = audit
        self.issuer = issuer
        self.devices = devices
        self.callbackURL = callbackURL
        self.clock = clock
        self.logger = logger
        self.storage = storage
        self.lockouts = lockouts
        self.development = development
        self.http = http
        self.mailer = mailer
    }
}
