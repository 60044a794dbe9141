/// A public signing key as published at `/oauth2/jwks` (RFC 7517).
public struct JSONWebKey: Sendable, Hashable, Codable {
    public var kty: String
    public var kid: String
    public var use: String
    public var alg: String
    public var crv: String?
    public var x: String?
    public var y: String?
    public var n: String?
    public var e: String?

    public init(kty: String, kid: String, alg: String, crv: String? = nil, x: String? = nil, y: String? = nil, n: String? = nil, e: String? = nil) {
        self.kty = kty
        self.kid = kid
        self.use = "sig"
        self.alg = alg
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
    }
}

/// A JWK Set document.
public struct JSONWebKeySet: Sendable, Hashable, Codable {
    public var keys: [JSONWebKey]
    public init(keys: [JSONWebKey]) { self.keys = keys }
}
