import Foundation
import Logging

/// Anything the registry builds from a `providers:` entry. Concrete plugins adopt `IdentityProvider`,
/// `Authenticator`, or both (as their factory's `roles` declare). Every hook below has a default, so
/// a plugin writes only what it does; the engine never probes for optional protocols.
public protocol GatehousePlugin: Sendable {
    /// The instance id from config, e.g. `corp-ldap`.
    var id: String { get }
    /// What the engine may count on from this instance (stateless sign-in, open enrolment...).
    /// Default: none of them.
    var traits: PluginTraits { get }
    /// Whether the plugin's upstream (directory, API, mail server...) is reachable, for `/readyz`;
    /// nil (the default): the plugin has no upstream to report on.
    func health() async -> PluginHealth?
    /// Checks the config against the upstream step by step (`gatehouse providers test`), stopping at
    /// the first step that fails; with a username (and a password) as far as finding (and signing in)
    /// that user. Only called when `traits.diagnosable`.
    func diagnose(username: String?, password: String?) async -> [DiagnosticStep]
    /// Forgets what the plugin keeps about someone or something that is going away: an identity, an
    /// account, an app, or what departed administrators added. Answers the changes worth an audit
    /// event each (what departed admins added); the default keeps nothing and answers none.
    func forget(_ departure: Departure) async throws -> [AdminChange]
    /// The collections this instance lets administrators manage (see `AdminResource`); default none.
    var adminResources: [AdminResource] { get }
    /// Every item of a resource; `app` is the app for app-scoped resources.
    func listItems(of resource: String, app: AppView?) async throws -> [JSONValue]
    /// Adds an item from the admin's fields; refusals are `invalid_request` naming the field.
    func createItem(in resource: String, fields: [String: JSONValue], app: AppView?, by admin: String) async throws -> AdminChange
    /// Removes (or revokes) the item `key` names; `not_found` when there is none.
    func deleteItem(from resource: String, key: [String], app: AppView?, by admin: String) async throws -> AdminChange
    /// What a signed-in person may do to their own credentials here (change a PIN); default none.
    var accountOperations: [AccountOperation] { get }
    /// Runs an account operation. Refusals are `BrokerError`s; wrong secrets count like wrong answers
    /// in a flow (the plugin's own lockouts).
    func perform(_ operation: String, with fields: ChallengeResponse, in context: AccountOperationContext) async throws -> JSONValue
    /// The HTTP endpoints this instance offers under `/v1/plugins/<instance>/`, or at paths of the
    /// server's own it claims (see `PluginEndpoint`); default none.
    var endpoints: [PluginEndpoint] { get }
    /// The Mustache templates of the pages its endpoints answer (`PluginPage`), by name; each renders
    /// inside the broker's page layout, escaped, under its strict Content-Security-Policy. Default none.
    var pageTemplates: [String: String] { get }
    /// Answers a call of one of `endpoints`, once the broker has proven the caller and checked the
    /// fields. Refusals are `BrokerError`s (4xx on the wire).
    func handle(_ call: PluginEndpointCall) async throws -> PluginEndpointAnswer
    /// Set by a plugin that proves email addresses with one-time codes (the engine uses it for password
    /// recovery and provisional identities); nil by default.
    var addressVerifier: (any AddressVerifying)? { get }
    /// Set by a plugin that checks device attestations; nil by default.
    var deviceAttester: (any DeviceAttesting)? { get }
}

extension GatehousePlugin {
    /// None.
    public var traits: PluginTraits { PluginTraits() }
    /// Nothing to report.
    public func health() async -> PluginHealth? { nil }
    /// No checks.
    public func diagnose(username: String?, password: String?) async -> [DiagnosticStep] { [] }
    /// Keeps nothing.
    public func forget(_ departure: Departure) async throws -> [AdminChange] { [] }
    /// None.
    public var adminResources: [AdminResource] { [] }
    /// Refuses: no such resource.
    public func listItems(of resource: String, app: AppView?) async throws -> [JSONValue] { throw noResource(resource) }
    /// Refuses: no such resource.
    public func createItem(in resource: String, fields: [String: JSONValue], app: AppView?, by admin: String) async throws -> AdminChange {
        throw noResource(resource)
    }
    /// Refuses: no such resource.
    public func deleteItem(from resource: String, key: [String], app: AppView?, by admin: String) async throws -> AdminChange {
        throw noResource(resource)
    }
    /// None.
    public var accountOperations: [AccountOperation] { [] }
    /// Refuses: no such operation.
    public func perform(_ operation: String, with fields: ChallengeResponse, in context: AccountOperationContext) async throws -> JSONValue {
        throw BrokerError(.notFound, .notFound, "'\(id)' offers no operation '\(operation)'.")
    }
    /// None.
    public var endpoints: [PluginEndpoint] { [] }
    /// None.
    public var pageTemplates: [String: String] { [:] }
    /// Refuses: no such endpoint.
    public func handle(_ call: PluginEndpointCall) async throws -> PluginEndpointAnswer {
        throw BrokerError(.notFound, .notFound, "'\(id)' offers no endpoint \(call.endpoint.method.rawValue) \(call.endpoint.path).")
    }
    /// None.
    public var addressVerifier: (any AddressVerifying)? { nil }
    /// None.
    public var deviceAttester: (any DeviceAttesting)? { nil }

    private func noResource(_ resource: String) -> BrokerError {
        BrokerError(.notFound, .notFound, "The provider '\(id)' offers no resource '\(resource)'.")
    }
}

/// What the engine may count on from a plugin instance: declared as values, read without casts.
public struct PluginTraits: Sendable, Hashable {
    /// The provider can sign people in without the broker keeping anything about them.
    public var statelessCapable: Bool
    /// Anyone can pass it (everyone has an email address): a sign-in that brings an identity the broker
    /// has never seen creates an account only when the app allows self-registration.
    public var openEnrollment: Bool
    /// The addresses it vouches for (`email_verified`) may link accounts
    /// (`Policy.linkAccountsByVerifiedEmail`), on either side. Providers that do not say so never link:
    /// an address only counts when the provider proved it (an emailed code) or the operator trusts the
    /// upstream to have.
    public var trustsEmailForLinking: Bool
    /// It identifies someone from a signed assertion (a JWT an app's back end issued), so the
    /// assertion is also accepted at `/oauth2/token` with the JWT bearer grant (RFC 7523):
    /// `IdentityProvider.verifyAssertion` is then its own.
    public var acceptsAssertions: Bool
    /// It can check its config against its upstream (`GatehousePlugin.diagnose`).
    public var diagnosable: Bool
    /// The kind of registration the provider makes, as `GET /v1/registration-state` reports it
    /// (`social`, `password`, `passwordless`, `device`...); nil: told from the methods used.
    public var registrationType: String?
    /// It runs in JSON flows only (the flow API), never on the browser pages: the sign-in page does
    /// not offer it and `/oauth2/authorize` refuses it (what it answers is for an app to act on).
    public var flowAPIOnly: Bool
    /// It hands its flows over to another provider (`FlowStep.handOver`). A flow is handed on once,
    /// so no flow is handed to it (`continueWith`, `handOver`).
    public var handsOver: Bool

    /// Traits; each off unless given.
    public init(
        statelessCapable: Bool = false, openEnrollment: Bool = false, trustsEmailForLinking: Bool = false, acceptsAssertions: Bool = false,
        diagnosable: Bool = false, registrationType: String? = nil, flowAPIOnly: Bool = false, handsOver: Bool = false
    ) {
        self.flowAPIOnly = flowAPIOnly
        self.handsOver = handsOver
        self.statelessCapable = statelessCapable
        self.openEnrollment = openEnrollment
        self.trustsEmailForLinking = trustsEmailForLinking
        self.acceptsAssertions = acceptsAssertions
        self.diagnosable = diagnosable
        self.registrationType = registrationType
    }
}

/// Something going away that a plugin may keep data about (`GatehousePlugin.forget`).
public enum Departure: Sendable, Hashable {
    /// An identity this provider vouched for, unlinked at deregistration (a password hash goes).
    case identity(subject: String)
    /// A deregistered account (a PIN hash goes).
    case account(id: String)
    /// A deleted app (certificate fingerprints, secrets, test keys go).
    case app(id: String)
    /// Administrators no longer configured: what the others (not in `remaining`) added goes, each
    /// removal answered as an audited change (Sudo Platform's rule for signing-certificate fingerprints).
    case admins(remaining: Set<String>)
}

/// The roles a plugin type's instances play, declared by its factory and checked when config is
/// read: an app's policy naming a provider in a role it does not play is a config error.
public struct PluginRoles: OptionSet, Sendable, Hashable {
    /// The roles as bits.
    public let rawValue: Int
    /// Roles from bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Establishes who someone is (`IdentityProvider`): listed in `policy.identityProviders`.
    public static let identityProvider = PluginRoles(rawValue: 1)
    /// Verifies one more factor (`Authenticator`): listed in `policy.authenticators`.
    public static let authenticator = PluginRoles(rawValue: 2)
}

/// Establishes who someone is (LDAP directory, upstream OIDC, a JWT issuer, the local password list...).
/// The engine calls `begin` once, then `resume` with each answer, until the provider returns
/// `.identified`.
public protocol IdentityProvider: GatehousePlugin {
    /// Starts the provider's part of a flow: a challenge, or at once an identity.
    func begin(_ request: FlowRequest, in context: FlowContext) async throws -> FlowStep
    /// Takes an answer to the provider's last challenge.
    func resume(_ state: FlowState, with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep
    /// Whether an identity the provider once vouched for is still good (the account is not disabled in
    /// the directory, the user still exists), with the provider's fresh view of the person when it read
    /// one (those claims replace the link's, so the next tokens carry them). Asked on every refresh and
    /// single sign-on, so that someone removed upstream stops getting tokens. Default: still good.
    func recheck(subject: String) async throws -> IdentityRecheck
    /// The identity a signed assertion proves (when `traits.acceptsAssertions`). Refusals are
    /// `invalid_grant` with a `reason`; a provider that does not know the assertion's issuer answers
    /// with reason `unknown_issuer`, so the next provider can be asked (the default answers that).
    func verifyAssertion(_ assertion: String, for app: AppView) async throws -> ExternalIdentity
    /// Goes on after the identity provider this one handed the flow to (`FlowStep.continueWith` or
    /// `handOver`) identified the person as `identity`; `state` is what it handed over. After
    /// `continueWith` it decides who signed in; after `handOver` it lets that identity through by
    /// answering `.identified` with it, or refuses. Only called on providers that hand flows on.
    func resume(_ state: FlowState, after identity: ExternalIdentity, in context: FlowContext) async throws -> FlowStep
    /// A flow this provider handed over (`FlowStep.handOver`) completes: called once the flow is
    /// claimed, after every factor and before its new credentials (a device key) are stored. A refusal
    /// ends the flow without tokens. Default: nothing to check.
    func completing(_ state: FlowState, _ completion: FlowCompletion) async throws
    /// The flow this provider handed over completed and its credentials are stored: what is left to do
    /// (through `completion.changes`); answers fields the app is told beside the tokens. Default: none.
    func completed(_ state: FlowState, _ completion: FlowCompletion) async throws -> [String: JSONValue]
    /// This provider stopped its flow (`FlowStep.stop`) and the engine has claimed it: what stopping
    /// does (uses something up, issues something), done only now so that of two racing answers only
    /// one does it; answers fields the app is told beside the stop's details. Default: none.
    func stopping(_ state: FlowState, in context: FlowContext) async throws -> [String: JSONValue]
    /// A flow in which this provider identified the person completed: every factor passed and its
    /// identity is linked to `completion.account`. What the provider kept for the flow before the
    /// account existed (a passkey made during a registration, stored with an expiry so that an
    /// abandoned one is purged) becomes permanent here. Called before the tokens are issued; a
    /// refusal ends the flow without them. Default: nothing to do.
    func identifiedFlowCompleted(_ completion: FlowCompletion) async throws
    /// Whether a device sign-in key this provider registered may still be used at `app` (a refresh of
    /// tokens its sign-in got), under the app's settings as they are now; a refusal is an
    /// `invalid_grant` `BrokerError` with a `reason`, answered as it is. Default: it may.
    func checkKeyUse(_ key: SignInKey, at app: AppView) async throws
    /// Set by a provider that keeps passwords itself (administrators manage its users; a person who
    /// forgot theirs may set a new one); nil by default.
    var passwordKeeper: (any PasswordKeeping)? { get }
}

extension IdentityProvider {
    /// Still good.
    public func recheck(subject: String) async throws -> IdentityRecheck { .valid(freshClaims: nil) }
    /// Refuses with `unknown_issuer`.
    public func verifyAssertion(_ assertion: String, for app: AppView) async throws -> ExternalIdentity {
        throw BrokerError(.invalidGrant, .badRequest, "The assertion is not valid.").because("unknown_issuer")
    }
    /// Refuses: this provider hands the flow to no other.
    public func resume(_ state: FlowState, after identity: ExternalIdentity, in context: FlowContext) async throws -> FlowStep {
        throw BrokerError.internalFailure("'\(id)' handed the flow to no other provider.")
    }
    /// May.
    public func checkKeyUse(_ key: SignInKey, at app: AppView) async throws {}
    /// Nothing to check.
    public func completing(_ state: FlowState, _ completion: FlowCompletion) async throws {}
    /// Nothing more.
    public func completed(_ state: FlowState, _ completion: FlowCompletion) async throws -> [String: JSONValue] { [:] }
    /// Nothing to do.
    public func stopping(_ state: FlowState, in context: FlowContext) async throws -> [String: JSONValue] { [:] }
    /// Nothing to do.
    public func identifiedFlowCompleted(_ completion: FlowCompletion) async throws {}
    /// None.
    public var passwordKeeper: (any PasswordKeeping)? { nil }
}

/// Verifies one more factor for an account the flow already has (an emailed code, a device key...).
/// The context carries the account. Ends with `.verified`.
public protocol Authenticator: GatehousePlugin {
    /// Starts the authenticator's part of a flow for the account in `context`: a challenge, or at once a verdict.
    func begin(_ request: FlowRequest, in context: FlowContext) async throws -> FlowStep
    /// Takes an answer to the authenticator's last challenge.
    func resume(_ state: FlowState, with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep
    /// Goes on after the authenticator this one handed the flow to (`FlowStep.requireFactor`) passed;
    /// `state` is what it handed over. Only called on authenticators that answer `requireFactor`.
    func resume(_ state: FlowState, after passed: FactorResult, in context: FlowContext) async throws -> FlowStep
}

extension Authenticator {
    /// Refuses: this authenticator asks for no other.
    public func resume(_ state: FlowState, after passed: FactorResult, in context: FlowContext) async throws -> FlowStep {
        throw BrokerError.internalFailure("'\(id)' asked for no other factor.")
    }
}

/// Proves that a person controls an email address by sending a one-time code to it (a plugin's
/// `addressVerifier`). The core uses it to verify the address of a provisional identity before
/// attaching it, and to prove a person in a password recovery.
public protocol AddressVerifying: GatehousePlugin {
    /// Sends a new code to `address`, bound to `binding`: only a check naming the same binding accepts
    /// it. Lockouts and resend limits apply; a code that could not be sent is never usable.
    func sendCode(to address: EmailAddress, binding: String, app: AppView, clientIP: String?) async throws -> CodeDelivery
    /// Checks a code sent for `binding`. A right code is used up and answers the address it went to.
    func checkCode(_ code: String, binding: String) async throws -> EmailAddress
    /// How the address was proven, for the audit log (`email_code`).
    var proofMethod: String { get }
}

/// What a code's binding says about its purpose: a password recovery's codes are bound to
/// `recovery:<flow>`, so that a verifier keeps their wrong guesses and send limits apart from sign-in
/// codes (a stranger guessing at someone's recovery must not lock their sign-in).
public enum CodeBinding {
    /// The prefix of every recovery binding.
    public static let recoveryPrefix = "recovery:"

    /// The binding of a password recovery flow's codes.
    public static func recovery(flowID: String) -> String { recoveryPrefix + flowID }

    /// Whether a binding is a password recovery's.
    public static func isRecovery(_ binding: String) -> Bool { binding.hasPrefix(recoveryPrefix) }
}

/// Where a one-time code went and until when it works.
public struct CodeDelivery: Sendable, Hashable {
    /// The address the code went to.
    public var sentTo: EmailAddress
    /// Until when the code works.
    public var expiresAt: Date
    /// When the next code may be asked for.
    public var resendAfter: Date

    /// A delivery.
    public init(sentTo: EmailAddress, expiresAt: Date, resendAfter: Date) {
        self.sentTo = sentTo
        self.expiresAt = expiresAt
        self.resendAfter = resendAfter
    }
}

/// A plugin's answer to a health check.
public struct PluginHealth: Sendable, Hashable, Codable {
    /// Whether the upstream answers.
    public var healthy: Bool
    /// What is wrong, when it is not.
    public var detail: String?

    /// A health report.
    public init(healthy: Bool, detail: String? = nil) {
        self.healthy = healthy
        self.detail = detail
    }
}

/// What a provider that keeps passwords itself (`IdentityProvider.passwordKeeper`) lets the broker
/// do: administrators manage its users (the `gatehouse users` command), and a person who forgot their
/// password sets a new one once the engine has proven them with a code sent to the account's verified
/// address ("Forgot password" on the sign-in page).
public protocol PasswordKeeping: GatehousePlugin {
    /// Adds a user; the password is checked against `policy`. Returns the new identity's subject.
    func addUser(username: String, password: String, policy: PasswordPolicy) async throws -> String
    /// Every user it keeps.
    func listUsers() async throws -> [ManagedUser]
    /// Removes a user's credentials; returns the subject that was removed, or nil if there was none.
    func removeUser(username: String) async throws -> String?
    /// The subject of the user signing in as `username`; nil when there is none.
    func subject(forUsername username: String) async throws -> String?
    /// Replaces the user's password; `policy`'s refusals are thrown as they are at registration.
    func resetPassword(subject: String, to password: String, policy: PasswordPolicy) async throws
}

/// A user as a password-keeping provider lists it.
public struct ManagedUser: Sendable, Hashable, Codable {
    /// The identity's subject.
    public var subject: String
    /// The username.
    public var username: String
    /// When it was added.
    public var createdAt: Date

    /// A user.
    public init(subject: String, username: String, createdAt: Date) {
        self.subject = subject
        self.username = username
        self.createdAt = createdAt
    }
}

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

/// The situation one flow step runs in.
public struct FlowContext: Sendable {
    /// The flow's id (a callback's `state`).
    public var flowID: String
    /// The app the flow runs for.
    public var app: AppView
    /// What the flow was started with.
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

    /// A context.
    public init(flowID: String, app: AppView, request: FlowRequest, account: Account? = nil, verifiedEmails: [EmailAddress] = []) {
        self.flowID = flowID
        self.app = app
        self.request = request
        self.account = account
        self.verifiedEmails = verifiedEmails
    }
}

/// A provider's answer to a recheck (`IdentityProvider.recheck`).
public enum IdentityRecheck: Sendable, Equatable {
    /// Still good; `freshClaims` when the provider read the person's claims again.
    case valid(freshClaims: IdentityClaims?)
    /// No longer accepted (removed, disabled, or filtered out by the provider's rules); `reason` is audited.
    case refused(reason: String)
}
