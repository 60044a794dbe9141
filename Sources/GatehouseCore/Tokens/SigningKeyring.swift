import Crypto
import Foundation
import JWTKit
import Synchronization
import _CryptoExtras

/// The broker's token-signing keys: generated on first start and kept in the store. There is one
/// active key per supported algorithm: access tokens are signed with the configured algorithm, ID
/// tokens with the algorithm each app asks for (RS256 unless it asks otherwise, as OpenID Connect
/// Discovery and Dynamic Registration make RS256 the one every relying party understands). Every key
/// not yet retired past its grace period is published and verifies.
///
/// Signing and verifying are the broker's hottest paths, so they do not queue behind one actor: the
/// keys live in an immutable snapshot swapped under a lock, and jwt-kit's key collection (itself an
/// actor) is built once per core and used round-robin.
///
/// Private keys are stored sealed under the key-encryption key (`SecretSealer`, the row's kid as
/// associated data) and opened only in memory.
public final class SigningKeyring: Sendable {
    /// How long a retired key stays published: the longest access- or ID-token lifetime a policy
    /// allows (one day), so every token it signed expires before its key disappears.
    public static let retiredKeyGrace: TimeInterval = 86_400
    /// How often every node re-reads the keys (and so picks up a rotation made elsewhere).
    public static let reloadInterval: TimeInterval = 5
    /// A rotated-in key is published at once and signs only this much later: by then every node has
    /// re-read the keys (`reloadInterval`) and publishes it, and every JWKS copy a client or cache may
    /// hold (`jwksMaxAge`) has been fetched again, with room for a slow reload. So no token the key
    /// signs meets a JWKS that lacks it. The key it replaces signs until then.
    public static let activationDelay: TimeInterval = jwksMaxAge + reloadInterval + 25
    /// How long clients may cache the JWKS (`Cache-Control: max-age` of `/oauth2/jwks`).
    public static let jwksMaxAge: TimeInterval = 60
    /// Verified access tokens remembered (until they expire) so that a token introspected again and
    /// again is not verified again each time.
    static let verifiedCacheLimit = 10_000
    static let serializer = DefaultJWTSerializer(jsonEncoder: ClaimsJSONEncoder())

    private struct Snapshot: Sendable {
        var collections: [JWTKeyCollection] = [JWTKeyCollection()]
        var loaded: [String: LoadedKey] = [:]
        var schedule = SigningSchedule([])
        var lastReload = Date.distantPast
    }

    private struct LoadedKey: Sendable {
        var record: SigningKeyRecord
        var jwk: JSONWebKey
        /// Signs with the private key directly: no actor to queue behind, so signatures (RS256's
        /// above all, ~0.7 ms of CPU each) run on every core at once.
        var signer: JWSSigningKey
    }

    private let store: any SigningKeyStore
    private let clock: any BrokerClock
    public let sealer: SecretSealer
    /// The algorithm access tokens are signed with (`tokens.signingAlgorithm`).
    public let accessTokenAlgorithm: SigningAlgorithm
    private let snapshot = Mutex(Snapshot())
    private let verified = Mutex([String: AccessTokenClaims]())
    private let publishedJSON = Mutex<(kids: [String], json: [UInt8])?>(nil)
    private let turn = Atomic<Int>(0)
    private let lanes = max(2, ProcessInfo.processInfo.activeProcessorCount)

    public init(store: any SigningKeyStore, clock: any BrokerClock, algorithm: SigningAlgorithm, sealer: SecretSealer) {
        self.store = store
        self.clock = clock
        self.sealer = sealer
        self.accessTokenAlgorithm = algorithm
    }

    /// Loads the stored keys, and makes and stores a key of every supported algorithm that has no
    /// active one.
    public func prepare() async throws {
        try await reload()
        let now = clock.now
        let missing = SigningAlgorithm.allCases.filter { algorithm in snapshot.withLock { $0.schedule.activeKid(algorithm, at: now) } == nil }
        guard !missing.isEmpty else { return }
        for algorithm in missing { try await store.insertSigningKey(try sealed(Self.generate(algorithm, now: clock.now))) }
        try await reload()
    }

    /// Re-reads the stored keys: picks up a rotation made by another node or by `gatehouse keys rotate`.
    public func reload() async throws {
        let now = clock.now
        // Only the keys still published are opened: a retired one that does not open stops nothing.
        let published = try await store.signingKeys().filter { Self.isPublished($0, now: now) }.map(opened)
        let previous = snapshot.withLock { $0.loaded }
        if !previous.isEmpty, Set(published.map(\.kid)) == Set(previous.keys),
            published.allSatisfy({ previous[$0.kid]?.record.retiredAt == $0.retiredAt && previous[$0.kid]?.record.activatesAt == $0.activatesAt })
        {
            // Nothing changed: keep the built key collections.
            snapshot.withLock { $0.lastReload = now }
            return
        }
        var next = Snapshot(collections: [], lastReload: now)
        for record in published {
            next.loaded[record.kid] = LoadedKey(
                record: record, jwk: try previous[record.kid]?.jwk ?? Self.publicJWK(of: record),
                signer: try previous[record.kid]?.signer ?? JWSSigningKey(pem: record.privateKeyPEM)
            )
        }
        // Each PEM is parsed once; every lane's collection gets the same keys.
        var ecdsaKeys: [(JWKIdentifier, ES256PrivateKey)] = []
        var rsaKeys: [(JWKIdentifier, JWTKit.Insecure.RSA.PrivateKey)] = []
        for key in next.loaded.values {
            let kid = JWKIdentifier(string: key.record.kid)
            switch key.record.algorithm {
            case .es256: ecdsaKeys.append((kid, try ES256PrivateKey(pem: key.record.privateKeyPEM)))
            case .rs256: rsaKeys.append((kid, try Insecure.RSA.PrivateKey(pem: key.record.privateKeyPEM)))
            }
        }
        for _ in 0..<lanes {
            let collection = JWTKeyCollection()
            for (kid, key) in ecdsaKeys { await collection.add(ecdsa: key, kid: kid, serializer: Self.serializer) }
            for (kid, key) in rsaKeys { await collection.add(rsa: key, digestAlgorithm: .sha256, kid: kid, serializer: Self.serializer) }
            next.collections.append(collection)
        }
        next.schedule = SigningSchedule(next.loaded.values.map(\.record))
        let replacement = next
        snapshot.withLock { $0 = replacement }
        if Set(previous.keys) != Set(replacement.loaded.keys) {
            verified.withLock { $0.removeAll() }
        }
    }

    /// Makes a new key of every supported algorithm, published at once and signing from
    /// `activationDelay` on; the previous keys sign until then and are retired at that moment, then
    /// stay published for `retiredKeyGrace`, so tokens they signed still verify until they expire.
    /// `immediately` skips the delay (one node, or a key believed compromised: tokens it signs may
    /// then meet a node that does not publish the new key yet for up to `reloadInterval`). Returns
    /// the new keys, the access-token algorithm's first.
    @discardableResult
    public func rotate(immediately: Bool = false) async throws -> [SigningKeyRecord] {
        let now = clock.now
        // A key created in the same second as the one it replaces must still sort after it.
        let newest = snapshot.withLock { $0.loaded.values.map(\.record.createdAt).max() } ?? .distantPast
        let created = max(now, newest.addingTimeInterval(0.001))
        let activates = immediately ? created : created.addingTimeInterval(Self.activationDelay)
        let algorithms = [accessTokenAlgorithm] + SigningAlgorithm.allCases.filter { $0 != accessTokenAlgorithm }
        let records = try algorithms.map { algorithm in
            var record = try Self.generate(algorithm, now: created)
            record.activatesAt = activates
            return record
        }
        for record in records { try await store.insertSigningKey(try sealed(record)) }
        // At once: keys still waiting from an earlier rotation must not take over later either.
        try await store.retireSigningKeys(keeping: records.map(\.kid), now: activates, includingWaiting: immediately)
        try await reload()
        return records
    }

    /// Takes a key believed compromised out of service at once: when it signs (or is waiting to),
    /// new keys of every algorithm replace it immediately; then it is deleted, so no node publishes
    /// or accepts it once it re-reads the keys. Answers the replacement keys (none when the key was
    /// retired already). The caller also puts the kid on the revocation list, which every node reads
    /// within a second, so its tokens are refused before the keys are re-read.
    public func revoke(kid: String) async throws -> [SigningKeyRecord] {
        let records = try await store.signingKeys()
        guard let record = records.first(where: { $0.kid == kid }) else {
            throw BrokerError(.notFound, .notFound, "No signing key '\(kid)'; `gatehouse keys list` shows them.")
        }
        let replacements = record.retiredAt == nil ? try await rotate(immediately: true) : []
        _ = try await store.deleteSigningKey(kid: kid)
        try await reload()
        return replacements
    }

    /// The `kid` in a JWS's protected header, without verifying anything.
    public static func kid(of token: String) -> String? {
        guard let end = token.firstIndex(of: "."), let data = Base64URL.decode(String(token[..<end])) else { return nil }
        return (try? JSONDecoder().decode(Header.self, from: data))?.kid
    }

    /// Re-reads the keys when the last reload is `reloadInterval` old (the maintenance loop calls it).
    public func reloadIfStale() async throws {
        let now = clock.now
        let last = snapshot.withLock { $0.lastReload }
        if now.timeIntervalSince(last) >= Self.reloadInterval || now < last { try await reload() }
    }

    /// The associated data of a key's sealed private key: its row.
    static func sealingContext(kid: String) -> String { "signing_keys:\(kid)" }

    /// The record as it is stored: the private key sealed.
    func sealed(_ record: SigningKeyRecord) throws -> SigningKeyRecord {
        var stored = record
        stored.privateKeyPEM = try sealer.seal(record.privateKeyPEM, context: Self.sealingContext(kid: record.kid))
        return stored
    }

    /// The record as it is used: the private key opened. A key in clear is refused: the start seals
    /// every key an older version stored in clear (`SecretRewrap`) before the keyring reads them, so a
    /// clear one can only have been planted in the database since.
    func opened(_ record: SigningKeyRecord) throws -> SigningKeyRecord {
        guard SecretSealer.isSealed(record.privateKeyPEM) else {
            throw BrokerError.internalFailure("The signing key \(record.kid) is stored in clear; restart the broker to encrypt it, or remove it.")
        }
        var open = record
        do {
            open.privateKeyPEM = try sealer.openText(record.privateKeyPEM, context: Self.sealingContext(kid: record.kid))
        } catch let error as SecretSealerError {
            throw BrokerError.internalFailure("The signing key \(record.kid) cannot be opened: \(error)")
        }
        return open
    }

    static func isPublished(_ record: SigningKeyRecord, now: Date) -> Bool {
        guard let retired = record.retiredAt else { return true }
        return retired.addingTimeInterval(retiredKeyGrace) > now
    }

    /// The JWK Set to publish: the active keys and every retired key still in its grace period, newest
    /// first (keys made together in kid order, so every node publishes the same document).
    public func keySet() -> JSONWebKeySet {
        let now = clock.now
        let loaded = snapshot.withLock { $0.loaded }
        return JSONWebKeySet(
            keys: loaded.values.filter { Self.isPublished($0.record, now: now) }
                .sorted { ($0.record.createdAt, $1.record.kid) > ($1.record.createdAt, $0.record.kid) }.map(\.jwk)
        )
    }

    /// `keySet()` as JSON (sorted keys), encoded once per set of published keys: the JWKS is the
    /// most requested document, and encoding it was most of what serving it cost.
    public func keySetJSON() -> [UInt8] {
        let set = keySet()
        let kids = set.keys.map(\.kid)
        if let cached = publishedJSON.withLock({ $0 }), cached.kids == kids { return cached.json }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = Array((try? encoder.encode(set)) ?? Data(#"{"keys":[]}"#.utf8))
        publishedJSON.withLock { $0 = (kids, json) }
        return json
    }

    /// The algorithms ID tokens can be signed with (for discovery): every algorithm with an active key.
    public func idTokenAlgorithms() -> [String] {
        let now = clock.now
        let active = snapshot.withLock { $0.schedule.activeKids(at: now) }
        // RS256 first: the default, and the one OpenID Connect Discovery requires.
        return SigningAlgorithm.allCases.sorted { $0 == .rs256 && $1 != .rs256 }.filter { active[$0] != nil }.map(\.rawValue)
    }

    /// One of the jwt-kit key collections verification uses, in turn: each is an actor, so one per
    /// core lets verifications run in parallel. (Signing does not go through them.)
    private func verifyingCollection() -> JWTKeyCollection {
        let index = turn.wrappingAdd(1, ordering: .relaxed).oldValue
        return snapshot.withLock { $0.collections[abs(index) % $0.collections.count] }
    }

    /// Signs access-token claims with the active key of the access-token algorithm (header
    /// `typ: at+jwt`, RFC 9068).
    public func sign(_ claims: AccessTokenClaims) async throws -> String {
        try await sign(payload: claims.json.serialized(), type: "at+jwt", algorithm: accessTokenAlgorithm)
    }

    /// Signs ID-token claims with the active key of `algorithm` (header `typ: JWT`).
    public func sign(_ claims: IDTokenClaims, algorithm: SigningAlgorithm) async throws -> String {
        try await sign(payload: claims.json.serialized(), type: "JWT", algorithm: algorithm)
    }

    /// Signs a back-channel logout token with the active key of `algorithm` (header `typ: logout+jwt`,
    /// Back-Channel Logout 1.0 section 2.4, so it cannot pass for an ID token).
    public func sign(_ claims: LogoutTokenClaims, algorithm: SigningAlgorithm) async throws -> String {
        try await sign(payload: Array(JSONEncoder().encode(claims)), type: "logout+jwt", algorithm: algorithm)
    }

    /// Verifies an ID token the broker issued, whatever its age (an `id_token_hint` at logout may have
    /// expired, RP-Initiated Logout 1.0 section 2): header `typ: JWT`, a published key by `kid` with its
    /// own algorithm, the signature, and `iss`. Nil for anything else.
    public func verifyIDTokenHint(_ token: String, issuer: String) async -> IDTokenClaims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode(Header.self, from: headerData), let kid = header.kid, let alg = header.alg, header.typ == "JWT"
        else { return nil }
        guard let key = snapshot.withLock({ $0.loaded[kid] }), key.record.algorithm.rawValue == alg else { return nil }
        guard let claims = try? await verifyingCollection().verify(token, as: IDTokenClaims.self), claims.iss == issuer else { return nil }
        return claims
    }

    /// The active key of an algorithm, with its kid.
    private func activeSigner(_ algorithm: SigningAlgorithm) -> (signer: JWSSigningKey, kid: String)? {
        let now = clock.now
        return snapshot.withLock { snapshot in
            snapshot.schedule.activeKid(algorithm, at: now).flatMap { kid in snapshot.loaded[kid].map { ($0.signer, kid) } }
        }
    }

    /// A compact JWS of `payload` (JSON bytes) with the active key of `algorithm`; the header is
    /// `{"alg", "kid", "typ"}`. Written here rather than through jwt-kit, whose key collection is an
    /// actor (one signature at a time per collection) and which encodes the header with Foundation's
    /// `JSONEncoder` on every call.
    private func sign(payload: [UInt8], type: String, algorithm: SigningAlgorithm) async throws -> String {
        var active = activeSigner(algorithm)
        if active == nil {
            // Every key of the algorithm was retired elsewhere (an older node's or CLI's rotation):
            // make a new one rather than fail every sign-in until a restart.
            try await prepare()
            active = activeSigner(algorithm)
        }
        guard let (signer, kid) = active else { throw BrokerError.internalFailure("No \(algorithm.rawValue) signing key is loaded.") }
        let header: JSONValue = ["alg": .string(algorithm.rawValue), "kid": .string(kid), "typ": .string(type)]
        let input = Base64URL.encode(bytes: header.serialized()) + "." + Base64URL.encode(bytes: payload)
        let signature = try signer.signature(over: Data(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    /// The `typ` of a JWT's header, unverified (nil when it is not a JWT with one).
    public static func type(of token: String) -> String? {
        guard let head = token.split(separator: ".", omittingEmptySubsequences: false).first, let data = Base64URL.decode(String(head)) else { return nil }
        return (try? JSONDecoder().decode(Header.self, from: data))?.typ
    }

    /// The header fields verification looks at.
    private struct Header: Decodable {
        var kid: String?
        var alg: String?
        var typ: String?
    }

    /// Verifies an access token the broker issued: the header must be `typ: at+jwt`, name a published
    /// key by `kid` and that key's own algorithm (nothing else is tried), the signature must hold and
    /// the token must not be expired. An ID token is not an access token and is refused.
    public func verify(_ token: String) async throws(BrokerError) -> AccessTokenClaims {
        try await verify(token, expiredGrace: 0)
    }

    /// `expiredGrace`: a token that expired at most this long ago still verifies (to tell an app its
    /// token needs renewing rather than that it has none).
    public func verify(_ token: String, expiredGrace: TimeInterval) async throws(BrokerError) -> AccessTokenClaims {
        let invalid = BrokerError(.invalidToken, .unauthenticated, "The access token is not valid.")
        let now = clock.now
        let oldestExpiry = now.addingTimeInterval(-expiredGrace)
        if let known = verified.withLock({ $0[token] }) {
            guard known.exp.value > oldestExpiry else { throw invalid }
            return known
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            let kid = header.kid, let alg = header.alg, header.typ == "at+jwt"
        else { throw invalid }
        var key = snapshot.withLock { $0.loaded[kid] }
        if key == nil, now.timeIntervalSince(snapshot.withLock { $0.lastReload }) > 1 {
            // A key this node has not seen yet: another node or the CLI may have rotated.
            try? await reload()
            key = snapshot.withLock { $0.loaded[kid] }
        }
        guard let key, key.record.algorithm.rawValue == alg, Self.isPublished(key.record, now: now) else { throw invalid }
        let claims: AccessTokenClaims
        do {
            claims = try await verifyingCollection().verify(token, as: AccessTokenClaims.self)
        } catch {
            throw invalid
        }
        // Expiry against the broker's clock, not the library's wall clock.
        guard claims.exp.value > oldestExpiry else { throw invalid }
        verified.withLock { cache in
            if cache.count >= Self.verifiedCacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[token] = claims
        }
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
        Base64URL.sha256(text)
    }
}
