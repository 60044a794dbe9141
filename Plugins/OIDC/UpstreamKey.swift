import Foundation
import GatehousePluginKit

/// One signing key from the upstream's JWKS (RFC 7517), read with the core's `PublicJWK`: keys of a
/// type it cannot check, encryption keys, RSA keys under 2048 bits, keys with private members and
/// symmetric keys are left out, so a JWKS never makes an HMAC secret out of anything.
struct UpstreamKey: Sendable {
    var kid: String?
    /// The key's own `alg`, when the JWKS names one: then only that algorithm may use it.
    var algorithm: String?
    var key: PublicJWK

    /// Reads one JWK; nil for a key that cannot sign ID tokens here.
    init?(jwk: [String: JSONValue]) {
        if let use = jwk["use"]?.stringValue, use != "sig" { return nil }
        if case .array(let operations)? = jwk["key_ops"], !operations.contains(.string("verify")) { return nil }
        guard let key = try? PublicJWK(.object(jwk)) else { return nil }
        self.kid = jwk["kid"]?.stringValue
        self.algorithm = jwk["alg"]?.stringValue
        self.key = key
    }

    /// Whether this key may check a signature made with `alg`: the key type must be the algorithm's,
    /// and a key that names its algorithm only serves that one.
    func serves(_ alg: String) -> Bool {
        if let algorithm, algorithm != alg { return false }
        return key.algorithms.contains(alg)
    }

    /// Checks a JWS signature over `input` made with `alg` (which `serves` accepted).
    func verifies(_ signature: Data, over input: Data, alg: String) -> Bool {
        key.verifies(signature, over: input, algorithm: alg)
    }

    /// Reads a JWKS document's keys (those usable here).
    static func keys(fromJWKS body: Data) -> [UpstreamKey]? {
        guard case .object(let document)? = try? JSONDecoder().decode(JSONValue.self, from: body), case .array(let keys)? = document["keys"] else { return nil }
        return keys.compactMap { key in
            guard case .object(let jwk) = key else { return nil }
            return UpstreamKey(jwk: jwk)
        }
    }
}
