import Foundation

/// The relying party a ceremony is for: its id (a registrable domain: the credentials are scoped to
/// it), its name (shown by the authenticator), and the origins allowed to run ceremonies for it
/// (`https://` web origins, `http://localhost...` in development, and `android:apk-key-hash:...`
/// for native Android apps).
struct RelyingParty: Sendable, Hashable {
    let id: String
    let name: String
    let origins: [String]
}

/// A WebAuthn `UserVerificationRequirement` (§5.8.6).
enum UserVerification: String, Sendable, Codable, CaseIterable {
    case required, preferred, discouraged
}
