import Foundation

/// A request object (RFC 9101): the authorization request's parameters as the claims of a JWT the
/// client signed with one of its registered keys (`Policy.requestObjectKeys`). Only signed objects
/// are taken (never `alg: none`, never an HMAC), from the client itself (`iss` and `client_id`), for
/// this broker (`aud`), fresh (`exp` required, at most an hour after `nbf`/`iat`, RFC 9101 section
/// 10.1 and FAPI 2.0). Its parameters replace the request's own (section 6.3): only `client_id` may
/// also appear outside, and must be the same.
public enum RequestObject {
    /// The algorithms a request object may be signed with.
    public static let algorithms = ["ES256", "EdDSA", "RS256", "PS256"]
    /// The longest a request object may be valid for.
    static let longestLifetime: TimeInterval = 3600

    static func refused(_ message: String) -> BrokerError { BrokerError(.invalidRequestObject, .badRequest, message) }

    /// The authorization parameters of `jwt`, signed by `app`'s key and meant for `issuer` at `now`.
    public static func parameters(of jwt: String, app: App, issuer: String, now: Date) throws(BrokerError) -> [String: String] {
        guard let object = CompactJWS(jwt) else { throw refused("The request object is not a signed JWT.") }
        guard let algorithm = object.algorithm, algorithms.contains(algorithm) else {
            throw refused("The request object must be signed with one of \(algorithms.joined(separator: ", ")).")
        }
        // RFC 7515 section 4.1.11: no extension is understood here. RFC 9101 section 10.8: a JWT of
        // another kind is not a request object.
        guard object.header["crit"] == nil else { throw refused("The request object's header names critical extensions this broker does not know.") }
        if let type = object.header["typ"]?.stringValue, !["oauth-authz-req+jwt", "JWT", "jwt"].contains(type) {
            throw refused("The request object's typ must be oauth-authz-req+jwt.")
        }
        // A key registered for encryption, or for another algorithm, signs nothing here.
        let keys = app.policy.requestObjectKeys.compactMap { value -> (kid: String?, key: PublicJWK)? in
            guard let key = try? PublicJWK(value), case .object(let members) = value else { return nil }
            if let use = members["use"]?.stringValue, use != "sig" { return nil }
            if let alg = members["alg"]?.stringValue, alg != algorithm { return nil }
            return (members["kid"]?.stringValue, key)
        }
        guard !keys.isEmpty else { throw refused("This client has no registered key for request objects (policy.requestObjectKeys).") }
        let kid = object.header["kid"]?.stringValue
        let candidates = kid.map { kid in keys.filter { $0.kid == kid } } ?? keys
        guard candidates.contains(where: { object.isSigned(by: $0.key, allowed: [algorithm]) }) else {
            throw refused("The request object's signature does not verify with the client's registered keys.")
        }
        let claims = object.claims
        guard claims["iss"]?.stringValue == app.id, claims["client_id"]?.stringValue == app.id else {
            throw refused("The request object's iss and client_id must be the client's id.")
        }
        let audiences: [String] = claims["aud"].map { $0.stringValue.map { [$0] } ?? ($0.arrayValue?.compactMap(\.stringValue) ?? []) } ?? []
        guard audiences.contains(issuer) else { throw refused("The request object's aud must be the issuer (\(issuer)).") }
        guard let expires = object.time("exp"), expires > now else { throw refused("The request object has no exp, or it has expired.") }
        let from = object.time("nbf") ?? object.time("iat") ?? now
        if let notBefore = object.time("nbf"), notBefore > now.addingTimeInterval(60) { throw refused("The request object is not valid yet (nbf).") }
        if let issued = object.time("iat"), issued > now.addingTimeInterval(60) { throw refused("The request object was issued in the future (iat).") }
        // At most an hour from its start, and from now: a start put in the future stretches nothing.
        guard expires.timeIntervalSince(from) <= longestLifetime, expires.timeIntervalSince(now) <= longestLifetime + 60 else {
            throw refused("The request object may be valid for an hour at most.")
        }
        if claims["request"] != nil || claims["request_uri"] != nil { throw refused("A request object may not hold another request.") }
        var parameters: [String: String] = [:]
        let registered: Set = ["iss", "aud", "exp", "nbf", "iat", "jti", "sub"]
        for (name, value) in claims where !registered.contains(name) {
            switch value {
            case .string(let text): parameters[name] = text
            case .number(let number) where number.rounded() == number && abs(number) < 1e15: parameters[name] = String(Int(number))
            default: throw refused("The request object's '\(name)' must be a string.")
            }
        }
        return parameters
    }
}
