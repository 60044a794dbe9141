import Crypto
import Foundation
import JWTKit

/// The claims of an OpenID Connect ID token (OIDC Core section 2): who signed in, when, how, for
/// which app, and the profile claims its scopes grant.
public struct IDTokenClaims: JWTPayload, Sendable {
    public var iss: String
    public var sub: String
    public var aud: String
    public var azp: String
    public var exp: Int
    public var iat: Int
    public var authTime: Int
    public var nonce: String?
    /// Left half of the SHA-256 of the access token, base64url (OIDC Core section 3.1.3.6).
    public var atHash: String?
    public var amr: [String]?
    public var idp: String?
    /// The browser session the sign-in belongs to (Back-Channel Logout 1.0 section 2.1).
    public var sid: String?
    /// How strongly the person signed in (`AuthenticationLevel`).
    public var acr: String?
    public var profile: [String: JSONValue]

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, azp, exp, iat, nonce, amr, idp, sid, acr
        case authTime = "auth_time"
        case atHash = "at_hash"
    }

    struct ProfileKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(
        issuer: String, subject: String, audience: String, issuedAt: Date, expiresAt: Date, authTime: Date, nonce: String?, accessToken: String?, amr: [String]?,
        identityProvider: String?, profile: [String: JSONValue], sessionID: String? = nil, acr: String? = nil
    ) {
        self.sid = sessionID
        self.acr = acr
        self.iss = issuer
        self.sub = subject
        self.aud = audience
        self.azp = audience
        self.iat = Int(issuedAt.timeIntervalSince1970)
        self.exp = Int(expiresAt.timeIntervalSince1970)
        self.authTime = Int(authTime.timeIntervalSince1970)
        self.nonce = nonce
        self.atHash = accessToken.map(Self.hash)
        self.amr = amr
        self.idp = identityProvider
        self.profile = profile
    }

    public static func hash(_ accessToken: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(accessToken.utf8))).prefix(16))
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        sub = try container.decode(String.self, forKey: .sub)
        aud = try container.decode(String.self, forKey: .aud)
        azp = try container.decode(String.self, forKey: .azp)
        exp = try container.decode(Int.self, forKey: .exp)
        iat = try container.decode(Int.self, forKey: .iat)
        authTime = try container.decode(Int.self, forKey: .authTime)
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
        atHash = try container.decodeIfPresent(String.self, forKey: .atHash)
        amr = try container.decodeIfPresent([String].self, forKey: .amr)
        idp = try container.decodeIfPresent(String.self, forKey: .idp)
        sid = try container.decodeIfPresent(String.self, forKey: .sid)
        acr = try container.decodeIfPresent(String.self, forKey: .acr)
        let known = Set(["iss", "sub", "aud", "azp", "exp", "iat", "auth_time", "nonce", "at_hash", "amr", "idp", "sid", "acr"])
        let all = try decoder.container(keyedBy: ProfileKey.self)
        var profile: [String: JSONValue] = [:]
        for key in all.allKeys where !known.contains(key.stringValue) {
            profile[key.stringValue] = try all.decode(JSONValue.self, forKey: key)
        }
        self.profile = profile
    }

    public func encode(to encoder: any Encoder) throws {
        var all = encoder.container(keyedBy: ProfileKey.self)
        for (key, value) in profile { try all.encode(value, forKey: ProfileKey(stringValue: key)) }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(sub, forKey: .sub)
        try container.encode(aud, forKey: .aud)
        try container.encode(azp, forKey: .azp)
        try container.encode(exp, forKey: .exp)
        try container.encode(iat, forKey: .iat)
        try container.encode(authTime, forKey: .authTime)
        try container.encodeIfPresent(nonce, forKey: .nonce)
        try container.encodeIfPresent(atHash, forKey: .atHash)
        try container.encodeIfPresent(amr, forKey: .amr)
        try container.encodeIfPresent(idp, forKey: .idp)
        try container.encodeIfPresent(sid, forKey: .sid)
        try container.encodeIfPresent(acr, forKey: .acr)
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
