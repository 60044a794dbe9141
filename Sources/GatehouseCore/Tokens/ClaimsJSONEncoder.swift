import Foundation
import JWTKit

/// The JSON encoder jwt-kit uses for our tokens: the broker's own claims go through the direct JSON
/// writer (Foundation's `JSONEncoder` was the largest cost of a client_credentials grant after the
/// signature itself); anything else, the header included, through jwt-kit's default.
struct ClaimsJSONEncoder: JWTJSONEncoder {
    private let fallback: any JWTJSONEncoder = .defaultForJWT

    func encode<T: Encodable>(_ value: T) throws -> Data {
        if let claims = value as? AccessTokenClaims { return Data(claims.json.serialized()) }
        if let claims = value as? IDTokenClaims { return Data(claims.json.serialized()) }
        return try fallback.encode(value)
    }
}

extension AccessTokenClaims {
    /// The claims as a JSON object, exactly as `Encodable` would write them.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "iss": .string(iss.value), "sub": .string(sub.value), "aud": .string(clientID), "client_id": .string(clientID),
            "exp": .number(exp.value.timeIntervalSince1970.rounded(.down)), "iat": .number(iat.value.timeIntervalSince1970.rounded(.down)),
            "jti": .string(jti.value), "scope": .string(scope), "stateless": .bool(stateless),
        ]
        if aud.value.count != 1 || aud.value.first != clientID {
            members["aud"] = aud.value.count == 1 ? .string(aud.value[0]) : .array(aud.value.map(JSONValue.string))
        }
        if let authTime { members["auth_time"] = .number(Double(authTime)) }
        if let amr { members["amr"] = .array(amr.map(JSONValue.string)) }
        if let idp { members["idp"] = .string(idp) }
        if let cnf { members["cnf"] = ["jkt": .string(cnf.jkt)] }
        if let deviceKey { members["device_key"] = .string(deviceKey) }
        if let fid { members["fid"] = .string(fid) }
        if let ins { members["ins"] = .string(ins) }
        if let act { members["act"] = act }
        return .object(members)
    }
}

extension IDTokenClaims {
    var json: JSONValue {
        var members = profile
        members["iss"] = .string(iss)
        members["sub"] = .string(sub)
        members["aud"] = .string(aud)
        members["azp"] = .string(azp)
        members["exp"] = .number(Double(exp))
        members["iat"] = .number(Double(iat))
        members["auth_time"] = .number(Double(authTime))
        if let nonce { members["nonce"] = .string(nonce) }
        if let atHash { members["at_hash"] = .string(atHash) }
        if let amr { members["amr"] = .array(amr.map(JSONValue.string)) }
        if let idp { members["idp"] = .string(idp) }
        if let sid { members["sid"] = .string(sid) }
        if let acr { members["acr"] = .string(acr) }
        return .object(members)
    }
}
