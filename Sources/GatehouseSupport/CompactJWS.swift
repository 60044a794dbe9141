import Foundation
import GatehousePluginKit

/// A JWS in compact serialization (RFC 7515 section 7.1) with a JSON header and a JSON object
/// payload, read but not yet verified. Used for what devices and clients sign: device-key proofs
/// and assertions, DPoP proofs.
public struct CompactJWS: Sendable {
    /// The protected header.
    public let header: [String: JSONValue]
    /// The payload's claims.
    public let claims: [String: JSONValue]
    /// The signature's bytes.
    public let signature: Data
    /// `BASE64URL(header) || '.' || BASE64URL(payload)`: what the signature covers.
    public let signingInput: Data

    /// Nil unless the text is three base64url parts, the first two JSON objects. `maxBytes` bounds
    /// the work done for a hostile input. An empty signature (`alg: none`) reads, so that the refusal
    /// names the algorithm; `isSigned` never accepts it.
    public init?(_ text: String, maxBytes: Int = 16_384) {
        guard text.utf8.count <= maxBytes else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            case .object(let header)? = try? JSONDecoder().decode(JSONValue.self, from: headerData),
            case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: payloadData)
        else { return nil }
        self.header = header
        self.claims = claims
        self.signature = signature
        self.signingInput = Data("\(parts[0]).\(parts[1])".utf8)
    }

    /// The header's `alg`.
    public var algorithm: String? { header["alg"]?.stringValue }

    /// Whether the signature is valid under `key` with the header's `alg`, which must be one of
    /// `allowed` (`none` and the HMAC algorithms never are: a public key is never an HMAC secret).
    public func isSigned(by key: PublicJWK, allowed: [String]) -> Bool {
        guard let algorithm, allowed.contains(algorithm), !algorithm.hasPrefix("HS"), algorithm != "none" else { return false }
        return key.verifies(signature, over: signingInput, algorithm: algorithm)
    }

    /// A NumericDate claim (RFC 7519) in seconds.
    public func time(_ name: String) -> Date? {
        guard case .number(let seconds)? = claims[name], seconds.isFinite else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}
