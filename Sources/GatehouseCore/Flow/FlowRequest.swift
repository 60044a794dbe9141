import GatehousePluginKit

/// What a client asks for when it starts a flow. Plugins see its parts in their `FlowContext`.
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
    /// The language the person reads (`TextTranslations.languages`), chosen by the server from
    /// `ui_locales` and `Accept-Language`; nil: the app's default.
    public var language: String?
    /// The person set a credential up from their account page (`FlowContext.enrolling`).
    public var enrolling = false

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
