import Crypto
import Foundation
import JWTKit
import _CryptoExtras

/// The broker's token-signing keys: generated on first start and kept in the store, the newest active
/// key signs, every key not yet retired past its grace period is published and verifies.
public actor SigningKeyring {
    private let store: any SigningKeyStore
    private let clock: any BrokerClock
    private let algorithm: SigningAlgorithm
    private let keys = JWTKeyCollection()
    private var published: [String: (record: SigningKeyRecord, jwk: JSONWebKey)] = [:]
    private var activeKid: String?

    public init(store: any SigningKeyStore, clock: any BrokerClock, algorithm: SigningAlgorithm) {
        self.store = store
        self.clock = clock
        self.algorithm = algorithm
    }

    /// Loads the stored keys, and makes and stores a key of the configured algorithm when none is active.
    public func prepare() async throws {
        try await load()
        if activeKid == nil {
            try await store.insertSigningKey(try Self.generate(algorithm, now: clock.now))
            try await load()
        }
    }

    private func load() async throws {
        for record in try await store.signingKeys() where published[record.kid] == nil {
            let jwk = try Self.publicJWK(of: record)
            switch record.algorithm {
            case .es256:
                await keys.add(ecdsa: try ES256PrivateKey(pem: record.privateKeyPEM), kid: JWKIdentifier(string: record.kid))
            case .rs256:
                await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: record.privateKeyPEM), digestAlgorithm: .sha256, kid: JWKIdentifier(string: record.kid))
            }
            published[record.kid] = (record, jwk)
        }
        activeKid = published.values
            .filter { $0.record.algorithm == algorithm && $0.record.retiredAt == nil }
            .max { $0.record.createdAt < $1.record.createdAt }?.record.kid
    }

    /// The JWK Set to publish: every loaded key, newest first.
    public func keySet() -> JSONWebKeySet {
        JSONWebKeySet(keys: published.values.sorted { $0.record.createdAt > $1.record.createdAt }.map(\.jwk))
    }

    /// Signs access-token claims with the active key (header `typ: at+jwt`, `kid`).
    public func sign(_ claims: AccessTokenClaims) async throws -> String {
        guard let kid = activeKid else { throw BrokerError.internalFailure("No signing key is loaded.") }
        var header = JWTHeader()
        header.typ = "at+jwt"
        header.alg = algorithm.rawValue
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid), header: header)
    }

    /// Verifies a token the broker issued: the header must name a published key by `kid` and that key's
    /// own algorithm (nothing else is tried), the signature must hold and the token must not be expired.
    public func verify(_ token: String) async throws(BrokerError) -> AccessTokenClaims {
        let invalid = BrokerError(.invalidGrant, .unauthenticated, "The token is not valid.")
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: headerData),
            let kid = header["kid"]?.stringValue, let alg = header["alg"]?.stringValue,
            let key = published[kid], key.record.algorithm.rawValue == alg
        else { throw invalid }
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token, as: AccessTokenClaims.self)
        } catch {
            throw invalid
        }
        // Expiry against the broker's clock, not the library's wall clock.
        guard claims.exp.value > clock.now else { throw invalid }
        return claims
    }

    static func generate(_ algorithm: SigningAlgorithm, now: Date) throws -> SigningKeyRecord {
        let pem: String
        switch algorithm {
        case .es256: pem = P256.Signing.PrivateKey().pemRepresentation
        case .rs256: pem = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
        }
        let record = SigningKeyRecord(kid: "", algorithm: algorithm, privateKeyPEM: pem, createdAt: now)
        return SigningKeyRecord(kid: try publicJWK(of: record).kid, algorithm: algorithm, privateKeyPEM: pem, createdAt: now)
    }

    /// The public half as a JWK whose `kid` is its RFC 7638 thumbprint.
    static func publicJWK(of record: SigningKeyRecord) throws -> JSONWebKey {
        switch record.algorithm {
        case .es256:
            let point = try P256.Signing.PrivateKey(pemRepresentation: record.privateKeyPEM).publicKey.x963Representation
            let x = Base64URL.encode(point[1..<33])
            let y = Base64URL.encode(point[33..<65])
            let thumbprint = #"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
            return JSONWebKey(kty: "EC", kid: digest(thumbprint), alg: "ES256", crv: "P-256", x: x, y: y)
        case .rs256:
            let primitives = try _RSA.Signing.PrivateKey(pemRepresentation: record.privateKeyPEM).publicKey.getKeyPrimitives()
            let n = Base64URL.encode(primitives.modulus)
            let e = Base64URL.encode(primitives.publicExponent)
            let thumbprint = #"{"e":"\#(e)","kty":"RSA","n":"\#(n)"}"#
            return JSONWebKey(kty: "RSA", kid: digest(thumbprint), alg: "RS256", n: n, e: e)
        }
    }

    private static func digest(_ text: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(text.utf8))))
    }
}
