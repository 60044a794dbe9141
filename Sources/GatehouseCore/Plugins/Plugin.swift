import Foundation
import Logging

/// Anything the registry builds from a `providers:` entry. Concrete plugins adopt `IdentityProvider`,
/// `Authenticator`, or both.
public protocol GatehousePlugin: Sendable {
    /// The instance id from config, e.g. `corp-ldap`.
    var id: String { get }
}

/// Establishes who someone is (LDAP directory, upstream OIDC, a JWT issuer, the local password list...).
/// The engine calls `begin` once, then `resume` with each answer, until the provider returns
/// `.identified`.
public protocol IdentityProvider: GatehousePlugin {
    func begin(_ request: FlowRequest, in context: FlowContext) async throws -> FlowStep
    func resume(_ state: FlowState, with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep
}

/// Verifies one more factor for an account the flow already has (an emailed code, a device key...).
/// The context carries the account. Ends with `.verified`.
public protocol Authenticator: GatehousePlugin {
    func begin(_ request: FlowRequest, in context: FlowContext) async throws -> FlowStep
    func resume(_ state: FlowState, with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep
}

/// Optional capability: the provider can sign people in without the broker keeping anything about them.
public protocol StatelessCapable: IdentityProvider {}

/// Marks providers anyone can pass (everyone has an email address): a sign-in that brings an identity
/// the broker has never seen creates an account only when the app allows self-registration.
public protocol OpenEnrollmentProvider: IdentityProvider {}

/// Optional capability: proves that a person controls an email address by sending a one-time code to
/// it. The core uses it to verify the address of a provisional identity before attaching it.
public protocol AddressVerifying: GatehousePlugin {
    /// Sends a new code to `address`, bound to `binding`: only a check naming the same binding accepts
    /// it. Lockouts and resend limits apply; a code that could not be sent is never usable.
    func sendCode(to address: EmailAddress, binding: String, app: App, clientIP: String?) async throws -> CodeDelivery
    /// Checks a code sent for `binding`. A right code is used up and answers the address it went to.
    func checkCode(_ code: String, binding: String) async throws -> EmailAddress
}

/// What a code's binding says about its purpose: a password recovery's codes are bound to
/// `recovery:<flow>`, so that a verifier keeps their wrong guesses and send limits apart from sign-in
/// codes (a stranger guessing at someone's recovery must not lock their sign-in).
public enum CodeBinding {
    public static let recoveryPrefix = "recovery:"

    /// The binding of a password recovery flow's codes.
    public static func recovery(flowID: String) -> String { recoveryPrefix + flowID }

    public static func isRecovery(_ binding: String) -> Bool { binding.hasPrefix(recoveryPrefix) }
}

/// Where a one-time code went and until when it works.
public struct CodeDelivery: Sendable, Hashable {
    public var sentTo: EmailAddress
    public var expiresAt: Date
    /// When the next code may be asked for.
    public var resendAfter: Date

    public init(sentTo: EmailAddress, expiresAt: Date, resendAfter: Date) {
        self.sentTo = sentTo
        self.expiresAt = expiresAt
        self.resendAfter = resendAfter
    }
}

/// Optional capability: the plugin can tell whether its upstream (directory, API...) is reachable;
/// `/readyz` reports it.
public protocol HealthReporting: GatehousePlugin {
    func health() async -> PluginHealth
}

/// A plugin's answer to a health check.
public struct PluginHealth: Sendable, Hashable, Codable {
    public var healthy: Bool
    public var detail: String?

    public init(healthy: Bool, detail: String? = nil) {
        self.healthy = healthy
        self.detail = detail
    }
}

/// Optional capability of providers that keep passwords themselves: administrators manage their users
/// (the `gatehouse users` command).
public protocol PasswordUserManaging: IdentityProvider {
    /// Adds a user; the password is checked against `policy`. Returns the new identity's subject.
    func addUser(username: String, password: String, policy: PasswordPolicy) async throws -> String
    func listUsers() async throws -> [ManagedUser]
    /// Removes a user's credentials; returns the subject that was removed, or nil if there was none.
    func removeUser(username: String) async throws -> String?
}

/// Optional capability: a provider that keeps passwords lets a person who forgot theirs set a new
/// one, once the engine has proven them with a code sent to the account's verified address ("Forgot
/// password" on the sign-in page).
public protocol PasswordResetting: IdentityProvider {
    /// The subject of the user signing in as `username`; nil when there is none.
    func subject(forUsername username: String) async throws -> String?
    /// Replaces the user's password; `policy`'s refusals are thrown as they are at registration.
    func resetPassword(subject: String, to password: String, policy: PasswordPolicy) async throws
}

/// A user as a password-keeping provider lists it.
public struct ManagedUser: Sendable, Hashable, Codable {
    public var subject: String
    public var username: String
    public var createdAt: Date

    public init(subject: String, username: String, createdAt: Date) {
        self.subject = subject
        self.username = username
        self.createdAt = createdAt
    }
}

/// What the broker hands every plugin instance: the only way a plugin reaches time, logs and storage.
public struct PluginEnvironment: Sendable {
    public var clock: any BrokerClock
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
    public var devices: (any DeviceStore)?
    /// The accounts and their identities, for plugins that act for an account outside a flow
    /// (issuing an activation); they change accounts only through the flow engine.
    public var accounts: (any AccountDirectory)?
    /// The apps, for plugins that answer outside a flow (an invitation link names its app).
    public var apps: (any AppDirectory)?
    /// The audit log, for what a plugin does outside a flow and the admin API.
    public var audit: (any AuditStore)?

    public init(
        clock: any BrokerClock, logger: Logger, storage: PluginStorage, lockouts: LockoutBook, development: Bool = false,
        http: any OutboundHTTP = NoOutboundHTTP(), mailer: any Mailer = NoMailer(), callbackURL: String = "http://127.0.0.1/oauth2/callback",
        issuer: String = "http://127.0.0.1", devices: (any DeviceStore)? = nil, accounts: (any AccountDirectory)? = nil, apps: (any AppDirectory)? = nil,
        audit: (any AuditStore)? = nil
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

/// The situation one flow step runs in.
public struct FlowContext: Sendable {
    public var flowID: String
    public var app: App
    public var request: FlowRequest
    /// The account the flow has established, for authenticators; nil while identifying.
    public var account: Account?
    /// The addresses the account's identity providers vouch for (`email` with `email_verified`), for
    /// authenticators that send codes; filled when an authenticator begins.
    public var verifiedEmails: [EmailAddress]
    /// True when this very flow created the account (a registration, or a first sign-in).
    public var accountCreated: Bool = false
    /// The device sign-in key the person signed in with, when they did (its `deviceID` names the
    /// device, for counting wrong answers per device).
    public var signInKey: SignInKey?
    /// The device-attestation checker the app allows (the first instance adopting `DeviceAttesting`
    /// in its policy's authenticators, then identity providers), for providers that register keys.
    public var deviceAttestation: (any DeviceAttesting)?

    public init(flowID: String, app: App, request: FlowRequest, account: Account? = nil, verifiedEmails: [EmailAddress] = []) {
        self.flowID = flowID
        self.app = app
        self.request = request
        self.account = account
        self.verifiedEmails = verifiedEmails
    }

    public var policy: Policy { app.policy }
}

/// Optional capability: the provider can say whether an identity it once vouched for is still good
/// (the account is not disabled in the directory, the user still exists). Checked on every refresh,
/// so that someone removed upstream stops getting tokens.
public protocol IdentityRechecking: IdentityProvider {
    func isStillValid(subject: String) async throws -> Bool
    /// The same question with the provider's fresh view of the person: refused (with a reason for the
    /// audit log), or still good, with the claims the provider vouches for now when it read them (they
    /// replace the link's, so the next tokens carry them). By default `isStillValid`, reading nothing.
    func recheck(subject: String) async throws -> IdentityRecheck
}

extension IdentityRechecking {
    public func recheck(subject: String) async throws -> IdentityRecheck {
        try await isStillValid(subject: subject) ? .valid(freshClaims: nil) : .refused(reason: "identity_refused")
    }
}

/// A provider's answer to a recheck (`IdentityRechecking.recheck`).
public enum IdentityRecheck: Sendable, Equatable {
    /// Still good; `freshClaims` when the provider read the person's claims again.
    case valid(freshClaims: IdentityClaims?)
    /// No longer accepted (removed, disabled, or filtered out by the provider's rules); `reason` is audited.
    case refused(reason: String)
}

/// Optional capability: whether the addresses this provider vouches for (`email_verified`) may link
/// accounts (`Policy.linkAccountsByVerifiedEmail`), on either side: the first sign-in that links, and
/// the existing account it joins. Providers that do not adopt it never link: an address only counts
/// when the provider proved it (an emailed code) or the operator trusts the upstream to have.
public protocol EmailLinkingTrust: IdentityProvider {
    var trustsEmailForLinking: Bool { get }
}

/// Optional capability of providers that keep data about a person themselves (a password hash):
/// deregistration asks them to forget it.
public protocol IdentityForgetting: IdentityProvider {
    func forget(subject: String) async throws
}

/// Optional capability of any plugin that keeps data about an account (a PIN hash): deregistration
/// asks it to forget the account.
public protocol AccountForgetting: GatehousePlugin {
    func forget(accountID: String) async throws
}

/// Optional capability of any plugin that keeps data about an app (certificate fingerprints, secrets,
/// test keys): deleting the app asks it to forget them.
public protocol AppForgetting: GatehousePlugin {
    func forget(appID: String) async throws
}

/// Optional capability of a plugin that keeps what each administrator added and removes it with them
/// (Sudo Platform's rule for signing-certificate fingerprints). At start, the broker names the admin
/// credentials still configured; what the others added goes, each removal audited.
public protocol AdminDeparture: GatehousePlugin {
    func adminsDeparted(remaining: Set<String>) async throws -> [AdminChange]
}

/// Optional capability of providers that identify someone from a signed assertion (a JWT an app's
/// back end issued): such an assertion is also accepted at `/oauth2/token` with the JWT bearer grant
/// (RFC 7523), not only as the answer of a flow.
public protocol AssertionVerifying: IdentityProvider {
    /// The identity the assertion proves. Refusals are `invalid_grant` with a `reason`; a provider
    /// that does not know the assertion's issuer answers with reason `unknown_issuer`, so the next
    /// provider can be asked.
    func verifyAssertion(_ assertion: String, for app: App) async throws -> ExternalIdentity
}
