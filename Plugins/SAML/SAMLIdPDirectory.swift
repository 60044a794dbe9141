import Foundation
import GatehousePluginKit
import Logging

/// The IdP's metadata: written out in the config, read from a file, or fetched from a URL and cached
/// for `metadataMaxAge`. Callers arriving while a fetch runs wait for that one; a failed fetch is
/// remembered for `retryAfter` seconds (an outage must not turn sign-ins or metadata requests into a
/// flood of fetches), and meanwhile the last good metadata keeps serving until it is twice
/// `metadataMaxAge` old, so a short outage of the metadata URL does not stop sign-in.
actor SAMLIdPDirectory {
    let config: SAMLConfig
    let http: any OutboundHTTP
    let clock: any BrokerClock
    let logger: Logger

    private var cached: (value: SAMLIdPMetadata, fetchedAt: Date)?
    /// The last failed fetch, stamped when it failed.
    private var failed: (error: SAMLError, at: Date)?
    /// The fetch under way, which every caller shares.
    private var inFlight: Task<Result<SAMLIdPMetadata, SAMLError>, Never>?
    static let retryAfter: TimeInterval = 10

    init(config: SAMLConfig, http: any OutboundHTTP, clock: any BrokerClock, logger: Logger) {
        self.config = config
        self.http = http
        self.clock = clock
        self.logger = logger
    }

    /// The metadata to use now.
    func current() async throws(SAMLError) -> SAMLIdPMetadata {
        let now = clock.now
        if let idp = config.idp {
            return SAMLIdPMetadata(
                entityID: idp.entityID, redirectURL: idp.ssoURL, postURL: idp.ssoURL, wantAuthnRequestsSigned: idp.wantAuthnRequestsSigned ?? false,
                certificates: config.inlineIdPCertificates
            )
        }
        if let cached, now.timeIntervalSince(cached.fetchedAt) < config.metadataMaxAge.timeInterval { return cached.value }
        if let failed, now.timeIntervalSince(failed.at) < Self.retryAfter { return try fallback(failed.error, now: now) }
        let fetch: Task<Result<SAMLIdPMetadata, SAMLError>, Never>
        if let running = inFlight {
            fetch = running
        } else {
            fetch = Task { await self.fetch() }
            inFlight = fetch
        }
        switch await fetch.value {
        case .success(let fresh): return fresh
        case .failure(let error): return try fallback(error, now: clock.now)
        }
    }

    /// One fetch, recorded for everyone when it ends.
    private func fetch() async -> Result<SAMLIdPMetadata, SAMLError> {
        defer { inFlight = nil }
        do {
            let fresh = try await load(now: clock.now)
            cached = (fresh, clock.now)
            failed = nil
            return .success(fresh)
        } catch {
            logger.warning("SAML IdP metadata could not be read", metadata: ["reason": .string(error.reason)])
            failed = (error, clock.now)
            return .failure(error)
        }
    }

    /// The last good metadata while it is not too old, else the failure.
    private func fallback(_ error: SAMLError, now: Date) throws(SAMLError) -> SAMLIdPMetadata {
        if let cached, now.timeIntervalSince(cached.fetchedAt) < 2 * config.metadataMaxAge.timeInterval { return cached.value }
        throw error
    }

    private func load(now: Date) async throws(SAMLError) -> SAMLIdPMetadata {
        let data: Data
        if let file = config.idpMetadataFile {
            guard let contents = FileManager.default.contents(atPath: file) else { throw SAMLError.metadata("cannot read \(file)") }
            data = contents
        } else if let url = config.idpMetadataURL {
            let response: OutboundResponse
            do {
                response = try await http.send(
                    OutboundRequest(
                        method: "GET", url: url, headers: [("Accept", "application/samlmetadata+xml, application/xml")], timeout: config.timeout.timeInterval,
                        maxResponseBytes: SAMLXMLDocument.maximumSize)
                )
            } catch { throw SAMLError.metadata("fetching \(url) failed: \(error)") }
            guard response.status == 200 else { throw SAMLError.metadata("fetching \(url) answered \(response.status)") }
            data = response.body
        } else {
            throw SAMLError.metadata("no metadata source is configured")
        }
        return try SAMLIdPMetadata.parse(data, signer: config.metadataSignerDER, allowSHA1: config.allowSHA1, now: now)
    }
}
