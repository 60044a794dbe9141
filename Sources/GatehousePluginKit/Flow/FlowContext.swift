import Foundation

/// The situation one flow step runs in: what the flow was started with, what it established so far,
/// and the state the plugin kept from its last step (`state(_:)`).
public struct FlowContext: Sendable {
    /// The flow's id (a callback's `state`).
    public var flowID: String
    /// The app the flow runs for.
    public var app: AppView
    /// Sign-in or registration.
    public var purpose: FlowPurpose
    /// A stateless sign-in: no account, no refresh token.
    public var stateless: Bool
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
    public var signInAgain: Bool
    /// The person must have signed in within this long (the app's `max_age`; 0 is another way of
    /// asking for a sign-in now).
    public var freshSignInWithin: Seconds?
    /// The person chooses the account to use (the app asked `prompt=select_account`).
    public var selectAccount: Bool
    /// The account the flow has established, for authenticators; nil while identifying.
    public var account: Account?
    /// The addresses the account's identity providers vouch for (`email` with `email_verified`), for
    /// authenticators that send codes; filled when an authenticator begins.
    public var verifiedEmails: [EmailAddress]
    /// True when this very flow created the account (a registration, or a first sign-in), or is the
    /// first sign-in of an account an administrator made for the person.
    public var accountCreated: Bool = false
    /// The device sign-in key the person signed in with, when they did (its `deviceID` names the
    /// device, for counting wrong answers per device).
    public var signInKey: SignInKey?
    /// The device-attestation checker the app allows (the first instance adopting `DeviceAttesting`
    /// in its policy's authenticators, then identity providers), for providers that register keys.
    public var deviceAttestation: (any DeviceAttesting)?
    /// The person asked, from their account page, to set this plugin's credential up
    /// (`PluginTraits.accountEnrolment`). An identity provider runs as for any signed-in registration
    /// (`signedInAccountID`): what it identifies joins that account. An authenticator runs for
    /// `account` and makes a new credential even when the account has one, after whatever proof of
    /// the current one it asks first (the current code before a new authenticator app replaces it).
    /// Only the plugin being set up sees it: a factor it asks for, or a provider it hands the flow
    /// to, runs as usual.
    public var enrolling: Bool = false
    /// The language the person reads (a tag of `TextTranslations.languages`), chosen when the flow
    /// started: from the app's `ui_locales`, else the browser's or the device's `Accept-Language`,
    /// else the app's default. For what a plugin sends the person itself (an email).
    public var language: String = "en"
    /// The state the plugin's last step kept (`FlowStep`'s `state`), as stored; empty when it kept none.
    package var savedState: Data

    /// A context; the engine builds it.
    package init(
        flowID: String, app: AppView, purpose: FlowPurpose = .authenticate, stateless: Bool = false, clientIP: String? = nil, loginHint: String? = nil,
        signedInAccountID: String? = nil, installationID: String? = nil, signInAgain: Bool = false, freshSignInWithin: Seconds? = nil,
        selectAccount: Bool = false, account: Account? = nil, verifiedEmails: [EmailAddress] = [], savedState: Data = Data()
    ) {
        self.flowID = flowID
        self.app = app
        self.purpose = purpose
        self.stateless = stateless
        self.clientIP = clientIP
        self.loginHint = loginHint
        self.signedInAccountID = signedInAccountID
        self.installationID = installationID
        self.signInAgain = signInAgain
        self.freshSignInWithin = freshSignInWithin
        self.selectAccount = selectAccount
        self.account = account
        self.verifiedEmails = verifiedEmails
        self.savedState = savedState
    }

    /// Whether the plugin's last step kept a state (its first step has none).
    public var hasState: Bool { !savedState.isEmpty }

    /// The state the plugin's last step kept, decoded as the type it kept. A flow whose state does
    /// not decode (none was kept, or another type) ends as not found.
    public func state<State: Decodable>(_ type: State.Type) throws(BrokerError) -> State {
        try Self.decodeState(savedState, as: type)
    }

    static func decodeState<State: Decodable>(_ data: Data, as type: State.Type) throws(BrokerError) -> State {
        do {
            return try JSONDecoder().decode(State.self, from: data)
        } catch {
            throw BrokerError(.flowNotFound, .notFound, "The flow's state is not readable; start a new flow.")
        }
    }
}
