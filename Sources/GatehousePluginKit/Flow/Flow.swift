import Foundation

/// Why a flow runs: to sign an existing person in, or to create new credentials and an account.
public enum FlowPurpose: String, Sendable, Codable, CaseIterable {
    /// Sign an existing person in.
    case authenticate
    /// Create new credentials (and, unless signed in, an account).
    case register
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

    /// Ask for a username and a password (`ChallengeDescription.credentials`) for the provider
    /// `providerID`: the username the app suggests (`context.loginHint`) filled in, and for a
    /// registration the app's password length rules (`passwordPolicy`) and every rule in words
    /// (`passwordRules`) for the page to show before the person types.
    public static func credentials(for providerID: String, in context: FlowContext) -> Challenge {
        var fields: [String: JSONValue] = ["provider": .string(providerID)]
        if let hint = context.loginHint { fields["username"] = .string(hint) }
        if context.purpose == .register {
            let policy = context.app.passwordPolicy
            fields["passwordPolicy"] = ["minLength": .number(Double(policy.minLength)), "maxLength": .number(Double(policy.maxLength))]
            fields["passwordRules"] = .array(policy.rules.map(JSONValue.string))
        }
        return credentials(extra: fields)
    }

    /// The credentials challenge with these fields.
    package static func credentials(extra: [String: JSONValue] = [:]) -> Challenge {
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
///
/// A step's `state` is whatever Codable value the plugin keeps until its next step; the engine stores
/// it with the flow and hands it back as `FlowContext.state(_:)`. The broker seals the whole stored
/// flow (this state and the challenge last sent) under its key-encryption key, so a secret kept here,
/// or shown in a challenge, is never written in clear: a plugin needs no sealing of its own for what
/// lives only as long as the flow.
public enum FlowStep: Sendable {
    /// Ask for an answer; `state` comes back with it.
    case challenge(Challenge, state: (any Encodable & Sendable)? = nil)
    /// An identity provider's result; the identity says how the person proved it (`methods`).
    case identified(ExternalIdentity)
    /// An authenticator's result.
    case verified(FactorResult)
    /// An authenticator needs another one (which the app's policy must allow) to pass first, for
    /// instance a PIN reset proven with an emailed code: the engine runs that one, then calls
    /// `FactorChaining.resume(after:in:)` of this one with `state`.
    case requireFactor(authenticatorID: String, state: (any Encodable & Sendable)? = nil)
    /// An identity provider hands the flow to another identity provider the app's policy allows (a
    /// second check): the engine runs that one, and once it identifies the person calls
    /// `HandingOver.resume(after:in:)` of this one with `state` and that identity, to decide
    /// who signed in (under this provider's id).
    case continueWith(providerID: String, state: (any Encodable & Sendable)? = nil)
    /// An identity provider hands the flow to another one whose identity becomes the flow's (the device
    /// key an activation registers): see `HandOver`. This provider stays with the flow: it approves that
    /// identity (`HandingOver.resume(after:in:)`) and is told when the flow completes (`completing`, `completed`).
    case handOver(HandOver)
    /// The flow ends here without tokens, as the person or app chose (an activation left as it was):
    /// once the engine has claimed the flow (no other answer can finish it), it calls the provider's
    /// `stopping` with `state`, whose fields join `details`; the flow API answers `"status":
    /// "stopped"` with those fields beside it, and a browser goes back to the app with `access_denied`.
    case stop(state: (any Encodable & Sendable)? = nil, details: [String: JSONValue])
}

/// How an identity provider hands its flow to another (`FlowStep.handOver`): the other provider runs
/// for `purpose` (and, to add a credential, for `account`); its identity is linked under its own id,
/// keys included, once this provider answered `.identified` with it from `resume(after:in:)` (only
/// its `username` may change there). A flow is handed over once, never a stateless or browser one, and
/// the provider adopts `HandingOver`, so no flow is handed to it.
/// A registration it asks for is its own to allow (activation data an administrator issued): the
/// app's `selfRegistration` is not asked, except that an open-enrolment provider (anyone passes it)
/// never makes an account the app would not. A refusal while handing over ends the flow.
public struct HandOver: Sendable {
    /// The identity provider that goes on (the app's policy must allow it).
    public var providerID: String
    /// What this provider gets back with the other one's identity, and when the flow completes.
    public var state: (any Encodable & Sendable)?
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
        providerID: String, state: (any Encodable & Sendable)?, purpose: FlowPurpose = .authenticate, account: String? = nil, methods: [String] = [],
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
    /// How the broker makes the changes below.
    package var changes: any CompletionChanges
    /// The `HandOver.state` the provider handed over, as stored.
    package var savedState: Data

    /// A completion; the engine builds it.
    package init(
        flowID: String, app: AppView, account: Account, identity: ExternalIdentity, signInKeyID: String?, newSignInKey: NewSignInKey?,
        changes: any CompletionChanges, savedState: Data = Data()
    ) {
        self.savedState = savedState
        self.flowID = flowID
        self.app = app
        self.account = account
        self.identity = identity
        self.signInKeyID = signInKeyID
        self.newSignInKey = newSignInKey
        self.changes = changes
    }

    /// Removes an installation of the account (`Installation.id`) with its keys, and revokes every
    /// token those keys got; answers the removed keys' ids, nil when the account has no such installation.
    public func retireInstallation(_ installationRef: String) async throws -> [String]? {
        try await changes.retireInstallation(installationRef)
    }

    /// Links an address the flow proved to the account, under the provider's enrolled-address id
    /// (`IdentityLink.enrolledAddressProvider`): it counts as the account's address (verified when
    /// `verified`) but never signs anyone in by itself. False when another account holds it already.
    public func linkAddress(_ address: EmailAddress, verified: Bool) async throws -> Bool {
        try await changes.linkAddress(address, verified: verified)
    }

    /// Appends an audit event about the flow (with its app, account, provider and client address).
    public func audit(_ type: String, details: [String: String]) async throws {
        try await changes.audit(type, details: details)
    }

    /// The state the provider handed over (`HandOver.state`), decoded as the type it kept.
    public func state<State: Decodable>(_ type: State.Type) throws(BrokerError) -> State {
        try FlowContext.decodeState(savedState, as: type)
    }
}

/// The broker's side of a `FlowCompletion`'s changes: it makes them its own way (tokens revoked through
/// its revocation, audit events with the flow's app, account, provider and client address).
package protocol CompletionChanges: Sendable {
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
