import Foundation
import GatehousePluginKit

/// The `custom-api` plugin type: an app proves who someone is through its own back end (a national
/// eID hand-off, a bank's customer check). Gatehouse relays the client's custom data to the app's
/// registration API, signed, and signs the person in; statelessly when the app's policy allows it.
/// See docs/plugins/custom-api.md.
public enum CustomAPIPlugin: PluginFactory {
    public static let typeName = "custom-api"

    /// `providers[].config` of a `custom-api` instance.
    public struct Config: Decodable, Sendable {
        /// The app's registration endpoint. HTTPS, except in a development deployment.
        public var url: String
        public var mode: Mode
        public var authentication: Authentication
        /// The bearer token, or the HMAC key; at least 32 characters.
        public var secret: String
        public var timeout: Seconds
        public var maxResponseBytes: Int
        public var maxCustomDataBytes: Int
        /// Retryable refusals in one flow before it ends with `too_many_attempts`.
        public var maxRetries: Int
        /// The claims of the API's answer that reach the identity; anything else is dropped.
        public var allowedClaims: [String]

        /// One call (`register`), or two (`init`, whose answer goes to the client, then `finish`).
        public enum Mode: String, Decodable, Sendable {
            case oneStep = "one-step"
            case twoStep = "two-step"
        }

        /// How the app's API knows the call comes from Gatehouse.
        public enum Authentication: String, Decodable, Sendable {
            /// `Authorization: Bearer <secret>`.
            case bearer
            /// `X-Gatehouse-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`, with the
            /// timestamp in `X-Gatehouse-Timestamp`: the body cannot be changed or replayed later.
            case hmac
        }

        public static let defaultClaims = ["email", "email_verified", "name", "given_name", "family_name", "preferred_username", "locale", "groups"]

        enum CodingKeys: String, CodingKey { case url, mode, authentication, secret, timeout, maxResponseBytes, maxCustomDataBytes, maxRetries, allowedClaims }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let path = decoder.codingPath
            url = try container.decode(String.self, forKey: .url)
            mode = try Self.choice(container, .mode, default: .oneStep, path: path)
            authentication = try Self.choice(container, .authentication, default: .hmac, path: path)
            secret = try container.decode(String.self, forKey: .secret)
            timeout = try container.decodeIfPresent(Seconds.self, forKey: .timeout) ?? Seconds(5)
            maxResponseBytes = try container.decodeIfPresent(Int.self, forKey: .maxResponseBytes) ?? 65536
            maxCustomDataBytes = try container.decodeIfPresent(Int.self, forKey: .maxCustomDataBytes) ?? 16384
            maxRetries = try container.decodeIfPresent(Int.self, forKey: .maxRetries) ?? 5
            allowedClaims = try container.decodeIfPresent([String].self, forKey: .allowedClaims) ?? Self.defaultClaims

            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme), parsed.host?.isEmpty == false else {
                throw ConfigIssue(path: path + [CodingKeys.url], "'\(url)' is not an http(s) URL")
            }
            if secret.count < 32 {
                throw ConfigIssue(path: path + [CodingKeys.secret], "must have at least 32 characters (got \(secret.count)); generate one with `openssl rand -base64 32`")
            }
            if !(1...120).contains(timeout.value) { throw ConfigIssue(path: path + [CodingKeys.timeout], "must be between 1 and 120 seconds") }
            if !(1024...(1 << 22)).contains(maxResponseBytes) { throw ConfigIssue(path: path + [CodingKeys.maxResponseBytes], "must be between 1024 and 4194304") }
            if !(0...Self.customDataLimit).contains(maxCustomDataBytes) {
                throw ConfigIssue(path: path + [CodingKeys.maxCustomDataBytes], "must be between 0 and \(Self.customDataLimit)")
            }
            if !(0...20).contains(maxRetries) { throw ConfigIssue(path: path + [CodingKeys.maxRetries], "must be between 0 and 20") }
            if let reserved = allowedClaims.first(where: { Self.reservedClaims.contains($0) }) {
                throw ConfigIssue(path: path + [CodingKeys.allowedClaims], "'\(reserved)' is set by Gatehouse and cannot come from the app's API")
            }
        }

        /// The most custom data an instance may accept: it travels in a flow API body, which is read
        /// up to 256 KiB.
        public static let customDataLimit = 192 * 1024

        /// Claims the broker sets itself; an app's API may never supply them.
        static let reservedClaims: Set<String> = [
            "iss", "sub", "aud", "exp", "iat", "nbf", "jti", "amr", "acr", "auth_time", "nonce", "azp", "client_id", "scope", "idp", "stateless",
        ]

        private static func choice<T: RawRepresentable & Sendable>(
            _ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys, default value: T, path: [any CodingKey]
        ) throws -> T where T.RawValue == String {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return value }
            guard let choice = T(rawValue: text) else {
                let options = key == .mode ? "'one-step' or 'two-step'" : "'bearer' or 'hmac'"
                throw ConfigIssue(path: path + [key], "must be \(options), got '\(text)'")
            }
            return choice
        }
    }

    public static let challenges = [CustomAPIProvider.challenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> CustomAPIProvider {
        if !config.url.lowercased().hasPrefix("https://") {
            guard environment.development else {
                throw ConfigIssue(path: [Config.CodingKeys.url], "must be https:// (plain http:// only with `environment: development`)")
            }
            environment.logger.warning("the app's API is called over plain HTTP: development only", metadata: ["url": .string(config.url)])
        }
        return CustomAPIProvider(id: id, config: config, environment: environment)
    }
}
