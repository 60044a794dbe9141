import Foundation
import GatehousePluginKit
import Logging

/// What the upstream's discovery document (OpenID Connect Discovery 1.0) says, as far as the plugin uses it.
struct UpstreamMetadata: Sendable {
    var issuer: String
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var userinfoEndpoint: String?
    var jwksURI: String
    /// RFC 9207: the upstream adds `iss` to its authorization responses, so a missing one is refused.
    var sendsIssuerInResponse: Bool

    /// Reads a discovery document; the reason it is refused, if it is.
    static func read(_ body: Data, expectedIssuer: String) throws(BrokerError) -> UpstreamMetadata {
        guard case .object(let document)? = try? JSONDecoder().decode(JSONValue.self, from: body) else {
            throw OIDCError.unavailable("discovery_invalid")
        }
        // OpenID Connect Discovery section 4.3: the issuer must be exactly the one configured.
        guard document["issuer"]?.stringValue == expectedIssuer else { throw OIDCError.unavailable("discovery_issuer_mismatch") }
        guard let authorization = document["authorization_endpoint"]?.stringValue, OIDCConfig.isUsableURL(authorization),
            let token = document["token_endpoint"]?.stringValue, OIDCConfig.isUsableURL(token),
            let jwks = document["jwks_uri"]?.stringValue, OIDCConfig.isUsableURL(jwks)
        else { throw OIDCError.unavailable("discovery_invalid") }
        let userinfo = document["userinfo_endpoint"]?.stringValue.flatMap { OIDCConfig.isUsableURL($0) ? $0 : nil }
        return UpstreamMetadata(
            issuer: expectedIssuer, authorizationEndpoint: authorization, tokenEndpoint: token, userinfoEndpoint: userinfo, jwksURI: jwks,
            sendsIssuerInResponse: document["authorization_response_iss_parameter_supported"] == .bool(true)
        )
    }
}

/// The upstream's discovery document and signing keys, cached for `metadataMaxAge`. A failed fetch is
/// not cached (the next sign-in tries again); an ID token with a key id the cache does not know makes
/// one fetch of the key set, at most one per `keyRefetchInterval`, so forged key ids cannot make the
/// broker hammer the upstream.
actor UpstreamDirectory {
    let config: OIDCConfig
    let http: any OutboundHTTP
    let clock: any BrokerClock
    let logger: Logger

    private var metadata: (value: UpstreamMetadata, fetchedAt: Date)?
    private var keys: (value: [UpstreamKey], fetchedAt: Date)?
    /// The last fetch an unknown key id caused.
    private var lastKeyRefetch: Date?

    static let keyRefetchInterval: TimeInterval = 10

    init(config: OIDCConfig, http: any OutboundHTTP, clock: any BrokerClock, logger: Logger) {
        self.config = config
        self.http = http
        self.clock = clock
        self.logger = logger
    }

    var discoveryURL: String {
        (config.issuer.hasSuffix("/") ? String(config.issuer.dropLast()) : config.issuer) + "/.well-known/openid-configuration"
    }

    func currentMetadata() async throws(BrokerError) -> UpstreamMetadata {
        let now = clock.now
        if let metadata, now.timeIntervalSince(metadata.fetchedAt) < config.metadataMaxAge.timeInterval { return metadata.value }
        let body = try await get(discoveryURL, failure: "discovery_unreachable")
        let fresh: UpstreamMetadata
        do {
            fresh = try UpstreamMetadata.read(body, expectedIssuer: config.issuer)
        } catch {
            logger.warning("upstream discovery document refused", metadata: ["reason": .string(error.reason ?? "")])
            throw error
        }
        metadata = (fresh, now)
        return fresh
    }

    /// Forgets the discovery document, after an endpoint it named failed: the next use reads it again.
    func forgetMetadata() { metadata = nil }

    /// The keys that may check a signature by `kid` with `alg`. An unknown `kid` (a rotation upstream)
    /// fetches the key set again, once, rate-limited.
    func keys(kid: String?, alg: String) async throws(BrokerError) -> [UpstreamKey] {
        let now = clock.now
        if let keys, now.timeIntervalSince(keys.fetchedAt) < config.metadataMaxAge.timeInterval {
            let matching = Self.matching(keys.value, kid: kid, alg: alg)
            if !matching.isEmpty { return matching }
            if let lastKeyRefetch, now.timeIntervalSince(lastKeyRefetch) < Self.keyRefetchInterval { return [] }
            lastKeyRefetch = now
        }
        let metadata = try await currentMetadata()
        let body = try await get(metadata.jwksURI, failure: "jwks_unreachable")
        guard let fresh = UpstreamKey.keys(fromJWKS: body) else { throw OIDCError.unavailable("jwks_invalid") }
        keys = (fresh, now)
        return Self.matching(fresh, kid: kid, alg: alg)
    }

    /// With a `kid`, the keys with that id; without, every key (the signature picks).
    static func matching(_ keys: [UpstreamKey], kid: String?, alg: String) -> [UpstreamKey] {
        keys.filter { (kid == nil || $0.kid == kid) && $0.serves(alg) }
    }

    private func get(_ url: String, failure reason: String) async throws(BrokerError) -> Data {
        let response: OutboundResponse
        do {
            response = try await http.send(
                OutboundRequest(method: "GET", url: url, headers: [("Accept", "application/json")], timeout: config.timeout.timeInterval, maxResponseBytes: 512 * 1024)
            )
        } catch {
            logger.warning("upstream request failed", metadata: ["url": .string(url), "error": .string(error.description)])
            throw OIDCError.unavailable(reason)
        }
        guard response.status == 200 else {
            logger.warning("upstream request failed", metadata: ["url": .string(url), "status": .stringConvertible(response.status)])
            throw OIDCError.unavailable(reason)
        }
        return response.body
    }
}
