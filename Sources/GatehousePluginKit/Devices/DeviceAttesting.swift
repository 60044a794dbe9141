import Foundation

/// Optional capability of a plugin that checks device attestations (App Attest, Play Integrity,
/// Android key attestation, DeviceCheck...): the attestation step of a sign-in key registration, and
/// the assertions of keys that can only sign the platform's way (App Attest). The engine hands the
/// instance the app allows (in `Policy.authenticators` or `identityProviders`) to providers in
/// `FlowContext.deviceAttestation`; the core never names a format.
public protocol DeviceAttesting: Sendable {
    /// The formats this instance accepts for `app` (empty: the app is not set up for attestation).
    func attestationFormats(for app: AppView) -> [String]
    /// Checks evidence that the key being registered lives in a genuine app on a genuine device.
    /// Refusals are `invalid_attestation` with a stable `reason`; an unreachable platform service is
    /// `provider_unavailable`.
    func verifyRegistration(_ evidence: AttestationEvidence, app: AppView) async throws -> AttestationVerdict
    /// Checks a platform assertion (`assertion`) made by a key that `verifyRegistration` attested, over
    /// `challenge`, and answers its counter (above the key's stored one); the caller records it
    /// atomically, so that only one of two nodes given the same assertion accepts it.
    func verifyKeyAssertion(_ assertion: String, key: SignInKey, challenge: String, app: AppView) async throws -> Int
}

/// What a device sends to prove itself, with what the broker asked it to bind.
public struct AttestationEvidence: Sendable {
    /// The format the device names (`apple-app-attest`, `play-integrity`, ...).
    public var format: String
    /// The format's own fields (the attestation object, the integrity token, ...).
    public var fields: [String: JSONValue]
    /// The challenge the broker handed out; the evidence must be bound to it.
    public var challenge: String
    /// The key being registered, when the device sent one (App Attest brings its own, in the evidence).
    public var key: PublicJWK?
    /// The platform the device says it is.
    public var platform: DevicePlatform

    /// Evidence as a device sent it.
    public init(format: String, fields: [String: JSONValue], challenge: String, key: PublicJWK?, platform: DevicePlatform) {
        self.format = format
        self.fields = fields
        self.challenge = challenge
        self.key = key
        self.platform = platform
    }
}

/// An accepted attestation: which format proved what. The facts go to the audit log and the key's
/// record, never to the person.
public struct AttestationVerdict: Sendable, Hashable {
    /// The format that vouched for the key (`apple-app-attest`, `play-integrity`...).
    public var format: String
    /// The key the attestation vouches for, when the format attests a key (App Attest, Android key
    /// attestation); nil when it vouches for the app and device only (Play Integrity, DeviceCheck),
    /// and the key is proven by its proof of possession.
    public var attestedKey: PublicJWK?
    /// The key id the platform uses for the attested key (App Attest's SHA-256 of the public key).
    public var platformKeyID: String?
    /// The counter the key starts at (App Attest: 0).
    public var counter: Int?
    /// What the attestation established: platform, app id or package, environment, security level,
    /// verdicts. Short strings, no secrets.
    public var facts: [String: String]
    /// True when the evidence was signed with an app's test registration key, not by a platform:
    /// only test accounts may be registered this way.
    public var isTest: Bool

    /// A verdict: the format, and what it vouched for.
    public init(format: String, attestedKey: PublicJWK? = nil, platformKeyID: String? = nil, counter: Int? = nil, facts: [String: String] = [:], isTest: Bool = false) {
        self.format = format
        self.attestedKey = attestedKey
        self.platformKeyID = platformKeyID
        self.counter = counter
        self.facts = facts
        self.isTest = isTest
    }
}
