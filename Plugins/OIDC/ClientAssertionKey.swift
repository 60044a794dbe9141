import Foundation
import GatehousePluginKit
import GatehouseSupport

/// The private key the broker signs its client assertions with (RFC 7523 section 2.2, OIDC Core
/// section 9 `private_key_jwt`). Sign in with Apple takes the same kind of JWT (ES256, `iss` = the
/// team id, `aud` = `https://appleid.apple.com`) as its `client_secret`: `sendAs: client_secret`.
public struct ClientAssertionKey: Decodable, Sendable {
    public enum Algorithm: String, Decodable, Sendable { case es256 = "ES256", rs256 = "RS256" }
    public enum SendAs: String, Decodable, Sendable { case clientAssertion = "client_assertion", clientSecret = "client_secret" }

    let signer: JWSSigningKey
    public var algorithm: Algorithm
    public var keyID: String?
    /// The assertion's `iss`; the client id when not set (Apple: the team id).
    public var issuer: String?
    /// The assertion's `aud`; the token endpoint when not set (Apple: `https://appleid.apple.com`).
    public var audience: String?
    public var sendAs: SendAs
    public var lifetime: Seconds

    enum CodingKeys: String, CodingKey { case pem, keyID, issuer, audience, sendAs, lifetime }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath
        let pem = try container.decode(String.self, forKey: .pem)
        do {
            signer = try JWSSigningKey(pem: pem)
        } catch .rsaTooShort(let bits) {
            throw ConfigIssue(path: path + [CodingKeys.pem], "the RSA key has \(bits) bits; at least 2048 are required")
        } catch {
            throw ConfigIssue(path: path + [CodingKeys.pem], "not a P-256 or RSA private key in PEM (BEGIN PRIVATE KEY, BEGIN EC PRIVATE KEY or BEGIN RSA PRIVATE KEY)")
        }
        algorithm = Algorithm(rawValue: signer.algorithm)!
        keyID = try container.decodeIfPresent(String.self, forKey: .keyID)
        issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
        audience = try container.decodeIfPresent(String.self, forKey: .audience)
        sendAs = try container.decodeIfPresent(SendAs.self, forKey: .sendAs) ?? .clientAssertion
        lifetime = try container.decodeIfPresent(Seconds.self, forKey: .lifetime) ?? Seconds(60)
        if !(10...3600).contains(lifetime.value) { throw ConfigIssue(path: path + [CodingKeys.lifetime], "must be between 10 and 3600 seconds") }
    }

    /// A fresh, short-lived assertion for one request: `iss` and `sub` name the client, `aud` the
    /// token endpoint (or the configured audience), and `jti` makes it single-use.
    func assertion(clientID: String, tokenEndpoint: String, now: Date) throws -> String {
        var header: [String: JSONValue] = ["typ": "JWT"]
        if let keyID { header["kid"] = .string(keyID) }
        let issued = now.timeIntervalSince1970.rounded(.down)
        let claims: [String: JSONValue] = [
            "iss": .string(issuer ?? clientID), "sub": .string(clientID), "aud": .string(audience ?? tokenEndpoint),
            "iat": .number(issued), "exp": .number(issued + lifetime.timeInterval), "jti": .string(RandomToken.make()),
        ]
        return try signer.sign(claims, header: header)
    }
}
