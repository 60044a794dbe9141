import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport

/// An app's test registration keys (the mechanism of the FSSO plugin's test keys): an administrator
/// generates one, downloads its private key once, and the app's integration tests sign `test`
/// attestations with it instead of a platform's. Such a verdict is marked as a test: it registers
/// test accounts only, and never vouches for a real one.
struct TestRegistrationKeys: Sendable {
    struct Entry: Codable, Sendable {
        var kid: String
        var publicKey: JSONValue
        var createdAt: Date
        var createdBy: String
        var revokedAt: Date?
    }

    let storage: PluginStorage
    let clock: any BrokerClock

    static func key(app: String, kid: String) -> String { "test-key/\(app)/\(kid)" }

    func entries(app: String) async throws -> [Entry] {
        try await storage.all(Entry.self, keyPrefix: "test-key/\(app)/").map(\.value)
    }

    /// Makes a new P-256 key; answers its entry and the private key (PKCS#8 PEM), shown once.
    func generate(app: String, by admin: String) async throws -> (Entry, String) {
        let privateKey = P256.Signing.PrivateKey()
        let jwk = try DeviceAttestationProvider.jwk(point: Array(privateKey.publicKey.x963Representation))
        let entry = Entry(kid: RandomToken.make(byteCount: 12), publicKey: jwk.json, createdAt: clock.now, createdBy: admin)
        guard try await storage.insert(entry, key: Self.key(app: app, kid: entry.kid)) else { throw BrokerError(.conflict, .conflict, "Try again.") }
        return (entry, privateKey.pemRepresentation)
    }

    /// Revokes a key (kept, so that the audit trail and the list show it); nil when there is none.
    func revoke(app: String, kid: String) async throws -> Entry? {
        guard var current = try await storage.get(Entry.self, key: Self.key(app: app, kid: kid)) else { return nil }
        if current.value.revokedAt != nil { return current.value }
        current.value.revokedAt = clock.now
        guard try await storage.replace(current.value, key: Self.key(app: app, kid: kid), version: current.version) else {
            throw BrokerError(.conflict, .conflict, "The key changed meanwhile; try again.")
        }
        return current.value
    }

    func removeAll(app: String) async throws {
        for entry in try await entries(app: app) { try await storage.delete(key: Self.key(app: app, kid: entry.kid)) }
    }

    /// A `test` attestation: a compact JWS (ES256, `kid` of one of the app's live test keys) with
    /// `aud` = the broker's issuer, `nonce` = the challenge, `jkt` = the registered key's thumbprint
    /// (when a key is registered), and an `iat` within the last five minutes.
    func verify(_ evidence: AttestationEvidence, app: AppView, audience: String, now: Date) async throws -> AttestationVerdict {
        guard let text = evidence.fields["token"]?.stringValue, let token = CompactJWS(text) else {
            throw AttestationRefusal(.malformed, "A test attestation needs 'token': a compact JWS signed with one of the app's test registration keys.")
        }
        guard let kid = token.header["kid"]?.stringValue, !kid.contains("/"), let entry = try await storage.get(Entry.self, key: Self.key(app: app.id, kid: kid))?.value,
            entry.revokedAt == nil, let key = try? PublicJWK(entry.publicKey)
        else { throw AttestationRefusal(.unknownTestKey, "The token's kid is not a live test registration key of this app.") }
        guard token.isSigned(by: key, allowed: ["ES256"]) else { throw AttestationRefusal(.invalidSignature, "The token is not signed by that test key.") }
        guard token.claims["aud"]?.stringValue == audience else { throw AttestationRefusal(.malformed, "The token's aud must be the broker's issuer (\(audience)).") }
        guard let nonce = token.claims["nonce"]?.stringValue, SecretDigest.constantTimeEquals(nonce, evidence.challenge) else {
            throw AttestationRefusal(.challengeMismatch, "The token's nonce is not this flow's challenge.")
        }
        if let registered = evidence.key, token.claims["jkt"]?.stringValue != registered.thumbprint {
            throw AttestationRefusal(.keyMismatch, "The token's jkt is not the thumbprint of the key being registered.")
        }
        guard let issuedAt = token.time("iat"), issuedAt <= now.addingTimeInterval(30), now.timeIntervalSince(issuedAt) <= 300 else {
            throw AttestationRefusal(.stale, "The token's iat must be within the last five minutes.")
        }
        return AttestationVerdict(format: AttestationFormat.test.rawValue, facts: ["testKey": kid], isTest: true)
    }
}
