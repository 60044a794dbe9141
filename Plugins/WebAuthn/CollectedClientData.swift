import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport

/// `clientDataJSON` (§5.8.1) as the browser or platform serialized it: the ceremony type, the
/// challenge (base64url), the origin, and whether it was collected in a cross-origin iframe. Its hash
/// is what the authenticator signed, so the raw bytes are kept as they came.
struct CollectedClientData: Sendable {
    let raw: [UInt8]
    let type: String
    let challenge: [UInt8]
    let origin: String
    let crossOrigin: Bool
    let topOrigin: String?

    init(_ raw: [UInt8]) throws(WebAuthnRefusal) {
        guard raw.count <= 8192, let object = try? JSONSerialization.jsonObject(with: Data(raw)) as? [String: Any] else {
            throw WebAuthnRefusal(.malformed, "clientDataJSON is not a JSON object.")
        }
        guard let type = object["type"] as? String, let challenge = object["challenge"] as? String, let origin = object["origin"] as? String else {
            throw WebAuthnRefusal(.malformed, "clientDataJSON lacks type, challenge or origin.")
        }
        guard let bytes = Base64URL.decode(challenge) else { throw WebAuthnRefusal(.malformed, "clientDataJSON's challenge is not base64url.") }
        self.raw = raw
        self.type = type
        self.challenge = Array(bytes)
        self.origin = origin
        self.crossOrigin = object["crossOrigin"] as? Bool ?? false
        self.topOrigin = object["topOrigin"] as? String
    }

    /// SHA-256 of the raw JSON: what the authenticator data is signed together with.
    var hash: [UInt8] { Array(SHA256.hash(data: raw)) }

    /// §7.1 steps 7 to 11 and §7.2 steps 11 to 15: the type, the flow's challenge (compared in
    /// constant time), one of the relying party's origins, and no cross-origin iframe.
    func check(type expected: String, challenge expectedChallenge: [UInt8], origins: [String]) throws(WebAuthnRefusal) {
        guard type == expected else { throw WebAuthnRefusal(.wrongType, "clientDataJSON.type is '\(type)', not '\(expected)'.") }
        guard SecretDigest.constantTimeEquals(challenge, expectedChallenge) else { throw WebAuthnRefusal(.challengeMismatch, "The challenge is not this flow's.") }
        guard origins.contains(origin) else { throw WebAuthnRefusal(.originNotAllowed, "The origin '\(origin)' is not one of the relying party's.") }
        // The sign-in pages are never framed (frame-ancestors 'none'), so a ceremony in a
        // cross-origin iframe is not one of ours.
        guard !crossOrigin else { throw WebAuthnRefusal(.originNotAllowed, "The ceremony ran in a cross-origin iframe.") }
    }
}
