import Foundation
import GatehousePluginKit
import GatehouseSupport

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

extension RelyingParty {
    /// Whether `text` is an origin a ceremony's client data can carry (HTML's serialised origin, as
    /// `clientDataJSON.origin` is compared byte for byte): `https://host[:port]` (or `http://` on a
    /// loopback host) with nothing after the authority, or `android:apk-key-hash:` and the base64url
    /// SHA-256 of an Android app's signing certificate.
    static func isOrigin(_ text: String) -> Bool {
        let android = "android:apk-key-hash:"
        if text.hasPrefix(android) {
            let hash = text.dropFirst(android.count)
            return hash.count == 43 && Base64URL.decode(String(hash))?.count == 32
        }
        guard LoopbackHost.allowsWebURL(text), let parts = URLComponents(string: text), let host = parts.host, !host.isEmpty,
            parts.path.isEmpty, parts.query == nil, parts.fragment == nil, parts.user == nil, parts.password == nil
        else { return false }
        // Lower case and no default port: the browser's serialisation, which is what is compared.
        return text == text.lowercased() && parts.port != 443 && !(parts.scheme == "http" && parts.port == 80)
    }
}
