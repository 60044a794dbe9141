import Foundation

/// Why a flow runs: to sign an existing person in, or to create new credentials and an account.
public enum FlowPurpose: String, Sendable, Codable, CaseIterable {
    /// Sign an existing person in.
    case authenticate
    /// Create new credentials (and, unless signed in, an account).
    case register
}

/// What a client asks for when it starts a flow.
public struct FlowRequest: Sendable {
    /// The app the flow signs in to.
    public var appID: String
    /// The identity provider (or, for a factor, the authenticator) the flow runs.
    public var providerID: String
    /// Sign-in or registration.
    public var purpose: FlowPurpose
    /// A stateless sign-in: no account, no refresh token.
    public var stateless: Bool
    /// Requested scopes; nil means the app's default scopes.
    public var scopes: [String]?
    /// The client's address, for audit and the per-address limits.
    public var clientIP: String?
    /// A username the app suggests (OIDC `login_hint`), for providers that ask for one.
    public var loginHint: String?
    /// The account of a person who is signed in already (the access token the flow start presented):
    /// a registration then adds a credential to it instead of making a new account.
    public var signedInAccountID: String?
    /// The installation a native app runs this flow from (the random id it made at its first
    /// launch): the tokens are tied to it, for `GET /v1/registration-state`.
    public var installationID: String?
    /// The person must sign in again now, not ride on an earlier sign-in (the app asked
    /// `prompt=login`): for a provider that signs people in elsewhere, which must ask the same there.
    public var signInAgain = false
    /// The person must have signed in within this long (the app's `max_age`; 0 is another way of
    /// asking for a sign-in now).
    public var freshSignInWithin: Seconds?
    /// The person chooses the account to use (the app asked `prompt=select_account`).
    public var selectAccount = false

    /// A request; the engine fills what the flow knows.
    public init(
        appID: String, providerID: String, purpose: FlowPurpose = .authenticate, stateless: Bool = false, scopes: [String]? = nil, clientIP: String? = nil,
        loginHint: String? = nil, signedInAccountID: String? = nil, installationID: String? = nil
    ) {
        self.installationID = installationID
        self.signedInAccountID = signedInAccountID
        self.appID = appID
        self.providerID = providerID
        self.purpose = purpose
        self.stateless = stateless
        self.scopes = scopes
        self.clientIP = clientIP
        self.loginHint = loginHint
    }
}

/// What a flow asks of the person or device next. `type` names a challenge type the core or a plugin
/// declared (`ChallengeDescription`); `fields` carries the type-specific facts that are sent to the
/// client as they are (the answer fields come from the declaration).
public struct Challenge: Sendable, Hashable, Codable {
    /// The challenge type, as declared (`credentials`, `riddle`...).
    public var type: String
    /// The type's fields (what `ChallengeDetail`s declare).
    public var fields: [String: JSONValue]
    /// What a page says above this one challenge, when it differs from the declared prompt.
    public var prompt: String?
    /// The answer field that names the account being tried (e.g. `username`). Wrong answers are
    /// counted against it across flows and nodes, and it is locked out after too many; not sent to clients.
    public var accountField: String?

    /// A challenge of a declared type.
    public init(type: String, fields: [String: JSONValue] = [:], prompt: String? = nil, accountField: String? = nil) {
        self.type = type
        self.fields = fields
        self.prompt = prompt
        self.accountField = accountField
    }

    /// A step that could not start (a code was not delivered): answering it (`{}`) starts it again.
    public static let retryType = "retry"
    /// Set on a browser sign-in page's challenge when the page offers "Create an account".
    public static let offersRegistrationField = "offersRegistration"
    /// Set on a browser sign-in page's challenge when the page offers "Forgot password".
    public static let offersRecoveryField = "offersRecovery"
    /// The answer of a challenge with a callback has come back; the app that started the flow goes on.
    public static let callbackReceivedType = "callback_received"

    /// Ask for a username and a password (`ChallengeDescription.credentials`).
    public static func credentials(extra: [String: JSONValue] = [:]) -> Challenge {
        Challenge(type: ChallengeDescription.credentials.type, fields: extra, accountField: "username")
    }
}

/// The client's answer to a challenge: the fields the challenge asked for.
public struct ChallengeResponse: Sendable, Hashable {
    /// The answer's fields as the client sent them, checked against the declaration already.
    public var values: [String: JSONValue]

    /// An answer.
    public init(_ values: [String: JSONValue]) { self.values = values }

    /// A required string field; a missing or non-string field is an `invalid_answer`.
    public func string(_ name: String) throws(BrokerError) -> String {
        guard let value = values[name]?.stringValue else {
            throw BrokerError.invalidAnswer("The answer needs a string field '\(name)'.")
        }
        return value
    }
}

/// A plugin's own state between two steps of a flow: opaque bytes to the core, persisted with the flow.
/// The broker seals the whole stored flow (this state and the challenge last sent) under its
/// key-encryption key, so a secret kept here, or shown in a challenge, is never written in clear:
/// a plugin needs no sealing of its own for what lives only as long as the flow.
public struct FlowState: Sendable, Hashable, Codable {
    /// Whatever the plugin keeps between steps; opaque to the engine.
    public var data: Data

    /// A state holding `data`.
    public init(data: Data = Data()) { self.data = data }

    /// Encodes a plugin's Codable state.
    public init<T: Encodable>(encoding value: T) throws {
        self.data = try JSONEncoder().encode(value)
    }

    /// Decodes a plugin's Codable state; a state that does not decode ends the flow as not found.
    public func decode<T: Decodable>(_ type: T.Type) throws(BrokerError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw BrokerError(.flowNotFound, .notFound, "The flow's state is not readable; start a new flow.")
        }
    }
}

/// An authenticator's verdict: this factor is satisfied.
public struct FactorResult: Sendable, Hashable, Codable {
    /// The authenticator instance that verified the factor.
    public var authenticatorID: String
    /// The `amr` value for this factor (RFC 8176), e.g. `otp`, `hwk`, `pin`.
    public var method: String
    /// An address the account proved just now for the first time (enrolment): the engine links it to
    /// the account as an identity of this authenticator, so it is a verified address from now on.
    public var enrolledEmail: EmailAddress?

    /// A verdict.
    public init(authenticatorID: String, method: String, enrolledEmail: EmailAddress? = nil) {
        self.authenticatorID = authenticatorID
        self.method = method
        self.enrolledEmail = enrolledEmail
    }
}

/// What one step of a plugin yields: another challenge (with the state to resume from), or a result.
public enum FlowStep: Sendable {
    /// Ask for an answer; `state` comes back with it.
    case challenge(Challenge, state: FlowState)
    /// An identity provider's result; the identity says how the person proved it (`methods`).
    case identified(ExternalIdentity)
    /// An authenticator's result.
    case verified(FactorResult)
    /// An authenticator needs another one (which the app's policy must allow) to pass first, for
    /// instance a PIN reset proven with an emailed code: the engine runs that one, then calls
    /// `Authenticator.resume(_:after:in:)` of this one with `state`.
    case requireFactor(authenticatorID: String, state: FlowState)
    /// An identity provider hands the flow to another identity provider the app's policy allows (a
    /// second check): the engine runs that one, and once it identifies the person calls
    /// `IdentityProvider.resume(_:after:in:)` of this one with `state` and that identity, to decide
    /// who signed in (under this provider's id).
    case continueWith(providerID: String, state: FlowState)
    /// An identity provider hands the flow to another one whose identity becomes the flow's (the device
    /// key an activation registers): see `HandOver`. This provider stays with the flow: it approves that
    /// identity (`resume(_:after:in:)`) and is told when the flow completes (`completing`, `completed`).
    case handOver(HandOver)
    /// The flow ends here without tokens, as the person or app chose (an activation left as it was):
    /// once the engine has claimed the flow (no other answer can finish it), it calls the provider's
    /// `stopping` with `state`, whose fields join `details`; the flow API answers `"status":
    /// "stopped"` with those fields beside it, and a browser goes back to the app with `access_denied`.
    case stop(state: FlowState = FlowState(), details: [String: JSONValue])
}

/// How an identity provider hands its flow to another (`FlowStep.handOver`): the other provider runs
/// for `purpose` (and, to add a credential, for `account`); its identity is linked under its own id,
/// keys included, once this provider answered `.identified` with it from `resume(_:after:in:)` (only
/// its `username` may change there). A flow is handed over once, never a stateless or browser one, and
/// the provider declares that it hands over (`PluginTraits.handsOver`), so no flow is handed to it.
/// A registration it asks for is its own to allow (activation data an administrator issued): the
/// app's `selfRegistration` is not asked, except that an open-enrolment provider (anyone passes it)
/// never makes an account the app would not. A refusal while handing over ends the flow.
public struct HandOver: Sendable, Hashable {
    /// The identity provider that goes on (the app's policy must allow it).
    public var providerID: String
    /// What this provider gets back with the other one's identity, and when the flow completes.
    public var state: FlowState
    /// What the other provider runs for: a sign-in, or a registration.
    public var purpose: FlowPurpose
    /// For a registration: the account the new credential joins; nil makes a new account. A flow
    /// started by a signed-in person keeps their account: another one is refused.
    public var account: String?
    /// How this provider proved the person so far (RFC 8176 `amr` values, e.g. `pin`), added to the
    /// flow's methods with this provider's id.
    public var methods: [String]
    /// Fields added to every challenge the flow shows from now on (what the app is told about why).
    public var annotations: [String: JSONValue]

    /// A hand-over; see each property.
    public init(
        providerID: String, state: FlowState, purpose: FlowPurpose = .authenticate, account: String? = nil, methods: [String] = [],
        annotations: [String: JSONValue] = [:]
    ) {
        self.providerID = providerID
        self.state = state
        self.purpose = purpose
        self.account = account
        self.methods = methods
        self.annotations = annotations
    }
}

/// A flow a provider handed over (`FlowStep.handOver`) is completing, for that provider's
/// `completing` and `completed` hooks: after every factor, once the flow is claimed (no other answer
/// can finish it).
public struct FlowCompletion: Sendable {
    /// The flow's id.
    public var flowID: String
    /// The app.
    public var app: AppView
    /// The account the flow signs in (or made).
    public var account: Account
    /// The identity the other provider established.
    public var identity: ExternalIdentity
    /// The device sign-in key the flow signed in with, or registers.
    public var signInKeyID: String?
    /// The key the flow registers, if it does.
    public var newSignInKey: NewSignInKey?
    /// The changes the provider may make to the account while the flow completes.
    public var changes: any CompletionChanges

    /// A completion; the engine builds it.
    public init(
        flowID: String, app: AppView, account: Account, identity: ExternalIdentity, signInKeyID: String?, newSignInKey: NewSignInKey?,
        changes: any CompletionChanges
    ) {
        self.flowID = flowID
        self.app = app
        self.account = account
        self.identity = identity
        self.signInKeyID = signInKeyID
        self.newSignInKey = newSignInKey
        self.changes = changes
    }
}

/// What a provider that handed a flow over may change about the flow's account as the flow completes
/// (`FlowCompletion.changes`). The engine makes the changes its own way: tokens revoked through the
/// broker's revocation, audit events with the flow's app, account, provider and client address.
public protocol CompletionChanges: Sendable {
    /// Removes an installation of the account (`Installation.id`) with its keys, and revokes every
    /// token those keys got; answers the removed keys' ids, nil when the account has no such installation.
    func retireInstallation(_ installationRef: String) async throws -> [String]?
    /// Links an address the flow proved to the account, under the provider's enrolled-address id
    /// (`IdentityLink.enrolledAddressProvider`): it counts as the account's address (verified when
    /// `verified`) but never signs anyone in by itself. False when another account holds it already.
    func linkAddress(_ address: EmailAddress, verified: Bool) async throws -> Bool
    /// Appends an audit event about the flow.
    func audit(_ type: String, details: [String: String]) async throws
}
