import Foundation

/// An answer to a `Challenge`. The SDK turns each into the broker's answer fields; the device-key,
/// activation and browser answers also make what only the SDK can (keys, proofs, assertions, the PKCE
/// verifier, the installation's facts).
public enum FlowAnswer: Sendable {
    case credentials(username: String, password: String)
    case customData(JSON)
    case pin(String)
    /// The PIN is forgotten: the broker runs the app's reset factor, then asks for a new PIN.
    case forgotPIN
    case email(String)
    case emailCode(String)
    case resendCode
    /// Registers the installation's device key (made now if it has none), with an attestation: the one
    /// given, else one from the client's `AttestationProvider` when the challenge asks for one.
    case registerDeviceKey(attestation: AttestationEvidence? = nil)
    /// Signs the device-key assertion with the installation's key.
    case signWithDeviceKey
    case attestation(AttestationEvidence)
    /// Answers an attestation challenge with evidence from the client's `AttestationProvider` (for the
    /// challenge, its formats and request hash, and the installation's device key).
    case attest
    /// An activation code (as scanned, typed or opened as a deep link) and its activation PIN.
    case activation(code: String, pin: String)
    /// One of an activation choice's `choices`; `new_activation` also takes a PIN, an alias and an address.
    case activationChoice(String, pin: String? = nil, alias: String? = nil, email: String? = nil)
    /// Confirms the profile as shown (no changes), or sends changed fields (`name`, `email`, `picture`).
    case confirmProfile(changes: [String: JSON] = [:])
    /// The code sent to a changed address while confirming the profile.
    case profileCode(String)
    /// Starts a failed second factor again.
    case retry
    /// A JWT the app's back end signed (`fsso-jwt`).
    case signedJWT(String)
    /// The URL the browser came back to (the app's return URI with `flow` and `code`, or `error`).
    case browserReturn(URL)
    /// The name a new passkey and its account are made with.
    case passkeyName(String)
    /// The credential the platform's passkey API made or used.
    case passkey(PasskeyCredential)
    /// The authenticator app's code.
    case authenticatorCode(String)
    /// Asks for a recovery code instead of the app's code.
    case useRecoveryCode
    /// Goes back from the recovery code to the app's code.
    case useAuthenticatorApp
    /// One of the recovery codes.
    case recoveryCode(String)
    /// The recovery codes were shown and kept.
    case recoveryCodesSaved
    /// Any answer fields, for a challenge this SDK does not model.
    case fields([String: JSON])
}

/// Where a flow stands.
public enum FlowState: Sendable, Equatable {
    /// The broker asks for something: answer it with `Flow.answer(_:)`.
    case challenge(Challenge)
    /// Signed in (or registered): the tokens are kept in the client's token store.
    case completed(SignInResult)
    /// The flow ended without tokens, as an activation can (`stop`, or `new_activation` with the new
    /// activation's details in `activation`).
    case stopped(activation: JSON)
}

/// What a completed flow gave.
public struct SignInResult: Sendable, Equatable {
    public var tokens: Tokens
    /// The account's id and username (none for a stateless sign-in).
    public var account: Account?
    /// An activation's details (outcome, choice, overridden installations, ...), when the flow was one.
    public var activation: JSON?

    /// The profile the ID token states (when the scopes had `openid`).
    public var profile: Profile? { tokens.idTokenClaims.map(Profile.init) }
}

/// An account as the broker names it.
public struct Account: Sendable, Equatable {
    public var id: String
    public var username: String?

    /// From the broker's `account` object (`{"id", "username"?}`); nil without one.
    init?(_ json: JSON?) {
        guard let id = json?["id"]?.string else { return nil }
        self.id = id
        username = json?["username"]?.string
    }
}

/// Who signed in, as the ID token or userinfo says (what the scopes allow).
public struct Profile: Sendable, Equatable {
    public var subject: String?
    public var username: String?
    public var name: String?
    public var email: String?
    public var emailVerified: Bool?
    public var groups: [String]
    /// Every claim, for the ones not modelled here.
    public var claims: JSON

    public init(_ claims: JSON) {
        subject = claims["sub"]?.string
        username = claims["preferred_username"]?.string
        name = claims["name"]?.string
        email = claims["email"]?.string
        emailVerified = claims["email_verified"]?.bool
        groups = claims["groups"]?.array?.compactMap(\.string) ?? []
        self.claims = claims
    }
}
