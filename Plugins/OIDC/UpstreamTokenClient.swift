import Foundation
import GatehousePluginKit
import Logging

/// The upstream's answer at its token endpoint (RFC 6749 section 5.1).
struct UpstreamTokens: Sendable {
    var accessToken: String
    var idToken: String?
    var refreshToken: String?
}

/// Talks to the upstream's token and userinfo endpoints as this broker's client: authenticates the
/// configured way, and turns every failure into `upstream_unavailable` with a reason (the upstream's
/// own `error` goes to the log, never to the person).
struct UpstreamTokenClient: Sendable {
    let config: OIDCConfig
    let http: any OutboundHTTP
    let clock: any BrokerClock
    let logger: Logger

    /// Why a token request failed: the upstream refused the grant (`invalid_grant`), or could not be used.
    enum Failure: Error {
        case refused(String)
        case unavailable(String)
    }

    func exchange(code: String, verifier: String, redirectURI: String, endpoint: String) async throws(Failure) -> UpstreamTokens {
        try await request(endpoint, ["grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "code_verifier": verifier])
    }

    func refresh(_ refreshToken: String, endpoint: String) async throws(Failure) -> UpstreamTokens {
        try await request(endpoint, ["grant_type": "refresh_token", "refresh_token": refreshToken])
    }

    /// The client authentication parameters and headers for one request to `endpoint`.
    func authentication(endpoint: String) throws -> (form: [String: String], headers: [(name: String, value: String)]) {
        switch config.clientAuthentication {
        case .clientSecretBasic:
            // RFC 6749 section 2.3.1: both parts form-encoded before base64.
            let secret = try secret(endpoint: endpoint)
            let credentials = "\(FormEncoding.encode(config.clientID)):\(FormEncoding.encode(secret))"
            return ([:], [("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString())])
        case .clientSecretPost:
            return (["client_id": config.clientID, "client_secret": try secret(endpoint: endpoint)], [])
        case .privateKeyJWT:
            guard let key = config.privateKey else { return ([:], []) }
            let assertion = try key.assertion(clientID: config.clientID, tokenEndpoint: endpoint, now: clock.now)
            if key.sendAs == .clientSecret { return (["client_id": config.clientID, "client_secret": assertion], []) }
            return (
                ["client_id": config.clientID, "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", "client_assertion": assertion], []
            )
        }
    }

    /// The configured secret, or a signed JWT made for this request (`privateKey.sendAs: client_secret`).
    private func secret(endpoint: String) throws -> String {
        if let key = config.privateKey, key.sendAs == .clientSecret { return try key.assertion(clientID: config.clientID, tokenEndpoint: endpoint, now: clock.now) }
        return config.clientSecret ?? ""
    }

    /// POSTs a form to the token endpoint; the raw answer (status and body), for `providers test`.
    func post(_ endpoint: String, _ parameters: [String: String]) async throws -> OutboundResponse {
        let (form, headers) = try authentication(endpoint: endpoint)
        let body = FormEncoding.encode(parameters.merging(form) { first, _ in first })
        return try await http.send(
            OutboundRequest(
                method: "POST", url: endpoint,
                headers: headers + [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                body: Data(body.utf8), timeout: config.timeout.timeInterval, maxResponseBytes: 256 * 1024
            )
        )
    }

    private func request(_ endpoint: String, _ parameters: [String: String]) async throws(Failure) -> UpstreamTokens {
        let response: OutboundResponse
        do {
            response = try await post(endpoint, parameters)
        } catch {
            logger.warning("upstream token endpoint failed", metadata: ["error": .string("\(error)")])
            throw .unavailable("token_endpoint_unreachable")
        }
        let document: [String: JSONValue]
        if case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: response.body) { document = object } else { document = [:] }
        guard response.status == 200 else {
            let error = Self.errorCode(in: response) ?? "none"
            logger.warning("upstream token endpoint refused", metadata: ["status": .stringConvertible(response.status), "error": .string(error)])
            if error == "invalid_grant" { throw .refused("token_endpoint_invalid_grant") }
            throw .unavailable("token_endpoint_error")
        }
        guard let accessToken = document["access_token"]?.stringValue, document["token_type"]?.stringValue?.lowercased() == "bearer" else {
            throw .unavailable("token_response_invalid")
        }
        return UpstreamTokens(accessToken: accessToken, idToken: document["id_token"]?.stringValue, refreshToken: document["refresh_token"]?.stringValue)
    }

    /// The userinfo claims (a JSON object; a signed userinfo answer is not supported).
    func userinfo(endpoint: String, accessToken: String) async throws(BrokerError) -> [String: JSONValue] {
        let response: OutboundResponse
        do {
            response = try await http.send(
                OutboundRequest(
                    method: "GET", url: endpoint, headers: [("Authorization", "Bearer \(accessToken)"), ("Accept", "application/json")],
                    timeout: config.timeout.timeInterval, maxResponseBytes: 256 * 1024
                )
            )
        } catch {
            logger.warning("upstream userinfo endpoint failed", metadata: ["error": .string(error.description)])
            throw OIDCError.unavailable("userinfo_unreachable")
        }
        guard response.status == 200, case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: response.body) else {
            logger.warning("upstream userinfo endpoint refused", metadata: ["status": .stringConvertible(response.status)])
            throw OIDCError.unavailable("userinfo_error")
        }
        return claims
    }

    /// The `error` of an OAuth error answer (RFC 6749 section 5.2), printable; nil when there is none.
    static func errorCode(in response: OutboundResponse) -> String? {
        guard case .object(let document)? = try? JSONDecoder().decode(JSONValue.self, from: response.body) else { return nil }
        return document["error"]?.stringValue.map(printable)
    }

    /// An upstream's error code for the log: short, and only the characters RFC 6749 allows in it.
    static func printable(_ text: String) -> String {
        String(text.prefix(64).filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") })
    }
}

/// `application/x-www-form-urlencoded` (the WHATWG URL standard's serializer).
enum FormEncoding {
    static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._*".utf8)

    static func encode(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if unreserved.contains(byte) {
                result.append(Character(UnicodeScalar(byte)))
            } else if byte == 0x20 {
                result.append("+")
            } else {
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    static func encode(_ parameters: [String: String]) -> String {
        parameters.sorted { $0.key < $1.key }.map { "\(encode($0.key))=\(encode($0.value))" }.joined(separator: "&")
    }
}
