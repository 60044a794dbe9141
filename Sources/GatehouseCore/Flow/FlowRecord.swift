import Foundation

/// A flow in progress, as the store keeps it so that any broker node can continue it.
public struct FlowRecord: Sendable, Hashable {
    /// Where the flow stands, with the state of that step: what the next answer goes to.
    public enum Phase: Sendable, Hashable {
        /// A browser flow whose app allows several providers: the person picks one first.
        case chooseProvider
        /// The identity provider (`providerID`) runs.
        case identify
        /// An authenticator runs; `resumes`: the one that asked for it first (`FlowStep.requireFactor`,
        /// a PIN reset proven by an emailed code), which goes on once this one passed.
        case factor(authenticatorID: String, resumes: SuspendedFactor? = nil)
        /// A new account's profile waits for the person to confirm or edit it (`confirm_profile`);
        /// `pending`: an edit waiting for the code that proves its new address.
        case confirmProfile(pending: AccountProfile? = nil)
        /// A browser sign-in waits for the person to allow the app the scopes it asks for (`consent`).
        case consent
        /// A browser flow resets a forgotten password (`recover_account`, `recovery_code`, `new_password`).
        case recovery(PasswordRecovery)

    }

    /// The flow's id: its handle on the wire (and a callback's `state`).
    public var id: String
    public var appID: String
    public var purpose: FlowPurpose
    public var stateless: Bool
    public var scopes: [String]
    /// What the flow was started with, kept for the rest of it.
    public var origin: FlowOrigin
    /// Where the flow stands, with that phase's state.
    public var phase: Phase
    /// The plugin whose turn it is, with what it keeps between answers.
    public var turn: PluginTurn
    /// What the flow has established so far.
    public var progress: FlowProgress
    public var createdAt: Date
    public var expiresAt: Date
    /// Bumped on every write; a write that expects an older version loses (no lost updates).
    public var version: Int

    public init(
        id: String, appID: String, providerID: String, purpose: FlowPurpose, stateless: Bool, scopes: [String],
        phase: Phase, pluginState: FlowState, challenge: Challenge, identity: ExternalIdentity? = nil,
        accountID: String? = nil, methods: [String] = [], failedAttempts: Int = 0, clientIP: String? = nil,
        authorization: BrowserAuthorization? = nil, createdAt: Date, expiresAt: Date, version: Int = 0
    ) {
        self.id = id
        self.appID = appID
        self.purpose = purpose
        self.stateless = stateless
        self.scopes = scopes
        self.origin = FlowOrigin(clientIP: clientIP, authorization: authorization)
        self.phase = phase
        self.turn = PluginTurn(providerID: providerID, pluginState: pluginState, challenge: challenge)
        self.progress = FlowProgress(identity: identity, accountID: accountID, methods: methods, failedAttempts: failedAttempts)
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.version = version
    }
}

/// What a flow was started with, kept for the rest of it.
public struct FlowOrigin: Sendable, Hashable {
    public var clientIP: String?
    /// Set for flows started at `/oauth2/authorize`: they end with an authorization code, not tokens.
    public var authorization: BrowserAuthorization?
    /// A JSON flow's return URI and PKCE challenge, for sign-ins that go through a browser elsewhere.
    public var returnURI: String?
    public var codeChallenge: String?
    /// The digest of the one-time code a native flow's return URI carried after the callback: only
    /// the app that received the browser back holds it (not whoever started the flow and sent the
    /// sign-in link to someone else).
    public var returnCodeDigest: String?
    /// The account of the person who started a registration while signed in (the access token they
    /// presented): what the flow registers joins that account.
    public var signedInAccountID: String?
    /// The installation a JSON flow runs for (`installation` at its start), so that its tokens are
    /// tied to it (`GET /v1/registration-state`).
    public var installationID: String?
    /// The language the flow's texts are in, chosen at its start (`FlowRequest.language`, else the
    /// app's default); nil for flows stored before languages existed (English).
    public var language: String?
    /// Set for a flow a person started on their account page to set a credential up
    /// (`FlowEngine.startEnrolment`): a browser flow (`authorization` holds its binding) for the
    /// `signedInAccountID`, which ends back on that page instead of with a code.
    public var enrolling: Bool?

    public init(clientIP: String? = nil, authorization: BrowserAuthorization? = nil) {
        self.clientIP = clientIP
        self.authorization = authorization
    }
}

/// The plugin whose turn it is in a flow: the identity provider, or (in a factor phase, named by the
/// phase) an authenticator, with the state it keeps between answers and the challenge last sent.
public struct PluginTurn: Sendable, Hashable {
    /// The identity provider of the flow.
    public var providerID: String
    public var pluginState: FlowState
    /// The challenge last sent, so a wrong answer can be answered with it again.
    public var challenge: Challenge
    /// An identity provider that handed the flow to another one (`FlowStep.continueWith`,
    /// `handOver`): when that one identifies the person, the engine goes back to it with its state.
    public var handOff: HandOff?

    public init(providerID: String, pluginState: FlowState, challenge: Challenge, handOff: HandOff? = nil) {
        self.providerID = providerID
        self.pluginState = pluginState
        self.challenge = challenge
        self.handOff = handOff
    }
}

/// What a flow has established so far: who, which account, how.
public struct FlowProgress: Sendable, Hashable {
    /// Set once the identity provider has identified the person.
    public var identity: ExternalIdentity?
    public var accountID: String?
    /// Whether this flow created the account (an authenticator may enrol a new account's address).
    /// Optional so that flows stored before it existed still read.
    public var accountCreated: Bool?
    /// The sign-in key that identified the person (device-key sign-ins and registrations).
    public var signInKeyID: String?
    /// `amr` values gathered so far.
    public var methods: [String]
    public var failedAttempts: Int

    public init(identity: ExternalIdentity? = nil, accountID: String? = nil, methods: [String] = [], failedAttempts: Int = 0) {
        self.identity = identity
        self.accountID = accountID
        self.methods = methods
        self.failedAttempts = failedAttempts
    }
}

// The parts' fields, read and written where the engine knows them by name.
extension FlowRecord {
    public var providerID: String {
        get { turn.providerID }
        set { turn.providerID = newValue }
    }
    public var pluginState: FlowState {
        get { turn.pluginState }
        set { turn.pluginState = newValue }
    }
    public var challenge: Challenge {
        get { turn.challenge }
        set { turn.challenge = newValue }
    }
    public var handOff: HandOff? {
        get { turn.handOff }
        set { turn.handOff = newValue }
    }
    public var identity: ExternalIdentity? {
        get { progress.identity }
        set { progress.identity = newValue }
    }
    public var accountID: String? {
        get { progress.accountID }
        set { progress.accountID = newValue }
    }
    public var accountCreated: Bool? {
        get { progress.accountCreated }
        set { progress.accountCreated = newValue }
    }
    public var signInKeyID: String? {
        get { progress.signInKeyID }
        set { progress.signInKeyID = newValue }
    }
    public var methods: [String] {
        get { progress.methods }
        set { progress.methods = newValue }
    }
    public var failedAttempts: Int {
        get { progress.failedAttempts }
        set { progress.failedAttempts = newValue }
    }
    public var clientIP: String? {
        get { origin.clientIP }
        set { origin.clientIP = newValue }
    }
    public var authorization: BrowserAuthorization? {
        get { origin.authorization }
        set { origin.authorization = newValue }
    }
    public var returnURI: String? {
        get { origin.returnURI }
        set { origin.returnURI = newValue }
    }
    public var codeChallenge: String? {
        get { origin.codeChallenge }
        set { origin.codeChallenge = newValue }
    }
    public var returnCodeDigest: String? {
        get { origin.returnCodeDigest }
        set { origin.returnCodeDigest = newValue }
    }
    public var signedInAccountID: String? {
        get { origin.signedInAccountID }
        set { origin.signedInAccountID = newValue }
    }
    public var installationID: String? {
        get { origin.installationID }
        set { origin.installationID = newValue }
    }
    public var language: String? {
        get { origin.language }
        set { origin.language = newValue }
    }
    public var enrolling: Bool? {
        get { origin.enrolling }
        set { origin.enrolling = newValue }
    }
    /// A flow from the account page that sets a credential up for the signed-in person.
    public var isEnrolment: Bool { origin.enrolling == true && origin.signedInAccountID != nil && origin.authorization != nil }
}

/// Where a password reset stands. The account is only known to the engine: every person sees the
/// same pages whether the username exists or not.
public struct PasswordRecovery: Sendable, Hashable, Codable {
    public enum Step: String, Sendable, Hashable, Codable { case username, code, newPassword }
    public var step: Step
    /// The provider's subject and the account, when the username exists and the account has a
    /// verified address the app trusts; nil otherwise (the code step then accepts no code).
    public var subject: String?
    public var accountID: String?

    public init(step: Step, subject: String? = nil, accountID: String? = nil) {
        self.step = step
        self.subject = subject
        self.accountID = accountID
    }
}

/// An authenticator that handed the flow to another one for a moment (`FlowStep.requireFactor`).
public struct SuspendedFactor: Sendable, Hashable, Codable {
    public var authenticatorID: String
    public var state: FlowState

    public init(authenticatorID: String, state: FlowState) {
        self.authenticatorID = authenticatorID
        self.state = state
    }
}

/// An identity provider that handed the flow to another one: for a moment (`FlowStep.continueWith`:
/// it decides who signed in once the other identified someone), or for the rest of the flow
/// (`FlowStep.handOver`: it approves the other's identity and is told when the flow completes).
public struct HandOff: Sendable, Hashable, Codable {
    public enum Mode: String, Sendable, Hashable, Codable {
        /// `continueWith`.
        case decides
        /// `handOver`.
        case adopts
    }
    public var providerID: String
    public var state: FlowState
    public var mode: Mode
    /// Fields every challenge gets from now on (`HandOver.annotations`).
    public var annotations: [String: JSONValue]
    /// `adopts`: the provider approved the other one's identity and waits for the flow to complete.
    public var approved: Bool

    public init(providerID: String, state: FlowState, mode: Mode = .decides, annotations: [String: JSONValue] = [:], approved: Bool = false) {
        self.providerID = providerID
        self.state = state
        self.mode = mode
        self.annotations = annotations
        self.approved = approved
    }

    enum CodingKeys: String, CodingKey { case providerID, state, mode, annotations, approved }

    /// Reads the shape earlier versions stored (`providerID` and `state` only: a `continueWith`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        providerID = try container.decode(String.self, forKey: .providerID)
        state = try container.decode(FlowState.self, forKey: .state)
        mode = try container.decodeIfPresent(Mode.self, forKey: .mode) ?? .decides
        annotations = try container.decodeIfPresent([String: JSONValue].self, forKey: .annotations) ?? [:]
        approved = try container.decodeIfPresent(Bool.self, forKey: .approved) ?? false
    }
}

/// What the engine answers after each step: the next challenge, or the finished sign-in.
public enum FlowOutcome: Sendable {
    case challenge(flowID: String, challenge: Challenge, expiresAt: Date)
    /// `notice`: what else the app is told (an activation's outcome, the installations it overrode).
    case completed(flowID: String, tokens: IssuedTokens, account: Account?, notice: [String: JSONValue] = [:])
    /// A JSON flow ended without tokens, as the app chose (an activation left as it was, a new
    /// activation requested instead): `status` says how, `details` what the app needs to know.
    case stopped(flowID: String, status: String, details: [String: JSONValue])
    /// A browser flow must first pick one of these providers; `registering`: to create an account.
    case chooseProvider(flowID: String, providers: [String], expiresAt: Date, registering: Bool = false)
    /// A browser flow is done: send the browser to this URL (the app's redirect URI with the code;
    /// for an enrolment, the account page).
    /// `sessionCookie`: a new single sign-on session's cookie value, for the browser to keep.
    case authorized(flowID: String, redirect: String, sessionCookie: String? = nil)
}
