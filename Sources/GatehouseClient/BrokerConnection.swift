import Crypto
import Foundation

/// The SDK's one way to the broker: it knows the issuer, authenticates a confidential client, signs a
/// DPoP proof for each request that should carry one, keeps the latest `DPoP-Nonce` of each server
/// (the broker and the app's resource servers, each its own: RFC 9449 section 9), and turns the
/// broker's error answers into `GatehouseError`.
actor BrokerConnection {
    let configuration: GatehouseConfiguration
    let transport: any HTTPTransport
    let keys: any DeviceKeyStore
    private var discoveredIssuer: String?
    /// The latest `DPoP-Nonce` of each server, by origin: a nonce goes back only to the server that gave it.
    private var dpopNonces: [String: String] = [:]

    /// The name of the installation's key in the `DeviceKeyStore`: its device key, also its DPoP key.
    static let deviceKeyName = "device"

    init(configuration: GatehouseConfiguration, transport: any HTTPTransport, keys: any DeviceKeyStore) {
        self.configuration = configuration
        self.transport = transport
        self.keys = keys
    }

    /// The broker's issuer, from its discovery document (read once).
    func issuer() async throws -> String {
        if let discoveredIssuer { return discoveredIssuer }
        let response = try await send(HTTPRequest(method: "GET", url: url("/.well-known/openid-configuration")))
        guard response.status == 200, let issuer = (try? JSON.decode(response.body))?["issuer"]?.string else {
            throw GatehouseError.transport("no discovery document at \(configuration.baseURL)")
        }
        discoveredIssuer = issuer
        return issuer
    }

    func url(_ path: String, query: [(String, String)] = []) -> URL {
        var components = URLComponents(url: configuration.baseURL.appendingPathComponent(String(path.dropFirst())), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        return components.url!
    }

    /// What a request needs besides its body.
    struct Options: Sendable {
        /// Sign a DPoP proof with the installation's key.
        var dpop = false
        /// The access token to present (`Authorization: DPoP` when `bound`, else `Bearer`).
        var accessToken: String? = nil
        var bound = false
        /// Authenticate a confidential client with HTTP Basic.
        var clientAuthentication = false
    }

    /// A JSON request to the broker; the answer's JSON (or `null` for an empty body) on success.
    func json(_ method: String, _ path: String, query: [(String, String)] = [], body: JSON? = nil, _ options: Options) async throws -> (JSON, HTTPResponse) {
        var headers: [String: String] = ["Accept": "application/json"]
        if body != nil { headers["Content-Type"] = "application/json" }
        return try await call(method, path, query: query, headers: headers, body: try body.map { try $0.compactData() }, options)
    }

    /// A form request (the token and revocation endpoints take forms only).
    func form(_ path: String, _ fields: [(String, String)], _ options: Options) async throws -> (JSON, HTTPResponse) {
        var all = fields
        if configuration.clientSecret == nil { all.append(("client_id", configuration.app)) }
        let body = all.map { "\(Self.formEncode($0.0))=\(Self.formEncode($0.1))" }.joined(separator: "&")
        var options = options
        options.clientAuthentication = true
        return try await call(
            "POST", path, headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"], body: Data(body.utf8), options
        )
    }

    private func call(
        _ method: String, _ path: String, query: [(String, String)] = [], headers: [String: String], body: Data?, _ options: Options
    ) async throws -> (JSON, HTTPResponse) {
        // One retry when the broker asks for a (new) DPoP nonce (RFC 9449 section 8).
        for attempt in 0..<2 {
            var request = HTTPRequest(method: method, url: url(path, query: query), headers: headers, body: body)
            if options.clientAuthentication, let secret = configuration.clientSecret {
                let credentials = "\(Self.formEncode(configuration.app)):\(Self.formEncode(secret))"
                request.headers["Authorization"] = "Basic " + Data(credentials.utf8).base64EncodedString()
            }
            if let token = options.accessToken {
                request.headers["Authorization"] = (options.bound ? "DPoP " : "Bearer ") + token
            }
            if options.dpop || options.bound {
                request.headers["DPoP"] = try await proof(
                    method: method, url: try await issuer() + path, accessToken: options.accessToken, nonce: dpopNonces[Self.origin(of: request.url)]
                )
            }
            let response = try await send(request)
            remember(response, from: request.url)
            if (200..<300).contains(response.status) {
                return (response.body.isEmpty ? .null : try JSON.decode(response.body), response)
            }
            let error = GatehouseError.from(status: response.status, body: response.body, headers: response.headers)
            if attempt == 0, error.code == "use_dpop_nonce", response.headers["dpop-nonce"] != nil { continue }
            throw error
        }
        throw GatehouseError.transport("the broker kept asking for a new DPoP nonce")
    }

    /// A DPoP proof (RFC 9449 section 4.2) for `method` and `url`, made with the installation's key,
    /// with the nonce `url`'s server gave last.
    func proof(method: String, url: URL, accessToken: String?) async throws -> String {
        try await proof(method: method, url: url.absoluteString, accessToken: accessToken, nonce: dpopNonces[Self.origin(of: url)])
    }

    /// Keeps the `DPoP-Nonce` a server answered with, for its next proof.
    func remember(_ response: HTTPResponse, from url: URL) {
        if let nonce = response.headers["dpop-nonce"] { dpopNonces[Self.origin(of: url)] = nonce }
    }

    /// scheme://host:port, the unit a nonce belongs to.
    static func origin(of url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80))"
    }

    private func proof(method: String, url: String, accessToken: String?, nonce dpopNonce: String?) async throws -> String {
        let key = try await keys.existingOrNewKey(named: Self.deviceKeyName)
        var claims: [String: JSON] = [
            "htm": .string(method), "htu": .string(Self.withoutQuery(url)), "iat": .number(Date().timeIntervalSince1970.rounded(.down)),
            "jti": .string(UUID().uuidString),
        ]
        if let accessToken { claims["ath"] = .string(Base64URL.encode(SHA256.hash(data: Data(accessToken.utf8)))) }
        if let dpopNonce { claims["nonce"] = .string(dpopNonce) }
        return try await key.jws(header: ["typ": "dpop+jwt", "jwk": key.publicJWK], claims: claims)
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch let error as GatehouseError {
            throw error
        } catch {
            throw GatehouseError.transport("\(request.url.host ?? "the broker"): \(error.localizedDescription)")
        }
    }

    static func withoutQuery(_ url: String) -> String {
        String(url.prefix { $0 != "?" && $0 != "#" })
    }

    /// `application/x-www-form-urlencoded` (and HTTP Basic's client id and secret, RFC 6749 section 2.3.1).
    static func formEncode(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._*")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
