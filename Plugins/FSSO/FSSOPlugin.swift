import Foundation
import GatehousePluginKit
import _CryptoExtras

/// The `fsso-jwt` plugin type: federated sign-in with a JWT that an app's own back end signs for one
/// of its users (Sudo Platform's custom federated sign-in). RS256 only, keys chosen by (iss, kid).
public enum FSSOPlugin: PluginFactory {
    public static let typeName = "fsso-jwt"

    /// `providers[].config` of an `fsso-jwt` instance.
    public struct Config: Decodable, Sendable {
        public var audience: String
        public var clockSkew: Seconds
        public var maxLifetime: Seconds
        public var maxTokenBytes: Int
        public var issuers: [Issuer]
        /// Apps that require their own `aud` (app id → audience): an assertion for such an app must
        /// carry that audience, and the instance's `audience` is not enough.
        public var appAudiences: [String: String]

        /// The `aud` an assertion for this app must carry.
        func audience(for appID: String) -> String { appAudiences[appID] ?? audience }

        /// One registered issuer: its public keys, the apps it may sign people into, and the custom
        /// claims it may set on accounts.
        public struct Issuer: Decodable, Sendable {
            public var issuer: String
            public var keys: [Key]
            /// The apps whose sign-ins this issuer may assert. An app that shares the instance with
            /// another app's issuer does not accept that issuer's assertions.
            public var apps: [String]
            public var allowedClaims: [String]

            enum CodingKeys: String, CodingKey { case issuer, keys, apps, allowedClaims }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                issuer = try container.decode(String.self, forKey: .issuer)
                apps = try container.decodeIfPresent([String].self, forKey: .apps) ?? []
                keys = try container.decodeIfPresent([Key].self, forKey: .keys) ?? []
                allowedClaims = try container.decodeIfPresent([String].self, forKey: .allowedClaims) ?? []
                if issuer.isEmpty { throw ConfigIssue(path: decoder.codingPath + [CodingKeys.issuer], "must not be empty") }
                if apps.isEmpty {
                    throw ConfigIssue(path: decoder.codingPath + [CodingKeys.apps], "is required: name the apps this issuer may sign people into")
                }
                if FSSOKey.isReserved(issuer) {
                    throw ConfigIssue(path: decoder.codingPath + [CodingKeys.issuer], "issuers starting with gatehouse-test are reserved for test keys")
                }
                var seen: Set<String> = []
                for (index, key) in keys.enumerated() where !seen.insert(key.kid).inserted {
                    throw ConfigIssue(
                        path: decoder.codingPath + [CodingKeys.keys, ConfigIssue.Key(index: index), Key.CodingKeys.kid], "'\(key.kid)' is used by an earlier key")
                }
            }
        }

        /// One RSA public key, PKCS#1 (`BEGIN RSA PUBLIC KEY`) or SPKI (`BEGIN PUBLIC KEY`) PEM.
        public struct Key: Decodable, Sendable {
            public var kid: String
            public var publicKey: _RSA.Signing.PublicKey

            enum CodingKeys: String, CodingKey { case kid, pem }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                kid = try container.decode(String.self, forKey: .kid)
                let pem = try container.decode(String.self, forKey: .pem)
                publicKey = try Self.parse(pem, path: decoder.codingPath + [CodingKeys.pem])
            }

            /// Reads a PEM public key and refuses keys under 2048 bits with a clear message.
            public static func parse(_ pem: String, path: [any CodingKey]) throws -> _RSA.Signing.PublicKey {
                let key: _RSA.Signing.PublicKey
                do {
                    key = try _RSA.Signing.PublicKey(unsafePEMRepresentation: pem)
                } catch {
                    throw ConfigIssue(path: path, "not an RSA public key in PEM (BEGIN RSA PUBLIC KEY or BEGIN PUBLIC KEY)")
                }
                guard key.keySizeInBits >= 2048 else {
                    throw ConfigIssue(path: path, "the key has \(key.keySizeInBits) bits; at least 2048 are required")
                }
                return key
            }
        }

        enum CodingKeys: String, CodingKey { case audience, appAudiences, clockSkew, maxLifetime, maxTokenBytes, issuers }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            audience = try container.decodeIfPresent(String.self, forKey: .audience) ?? "identity-service"
            clockSkew = try container.decodeIfPresent(Seconds.self, forKey: .clockSkew) ?? Seconds(30)
            maxLifetime = try container.decodeIfPresent(Seconds.self, forKey: .maxLifetime) ?? .minutes(5)
            maxTokenBytes = try container.decodeIfPresent(Int.self, forKey: .maxTokenBytes) ?? 8192
            appAudiences = try container.decodeIfPresent([String: String].self, forKey: .appAudiences) ?? [:]
            issuers = try container.decodeIfPresent([Issuer].self, forKey: .issuers) ?? []
            let path = decoder.codingPath
            if !(0...300).contains(clockSkew.value) { throw ConfigIssue(path: path + [CodingKeys.clockSkew], "must be between 0 and 300 seconds") }
            if !(10...3600).contains(maxLifetime.value) { throw ConfigIssue(path: path + [CodingKeys.maxLifetime], "must be between 10 and 3600 seconds") }
            if !(512...65536).contains(maxTokenBytes) { throw ConfigIssue(path: path + [CodingKeys.maxTokenBytes], "must be between 512 and 65536") }
        }
    }

    public static let challenges = [FSSOProvider.challenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> FSSOProvider {
        FSSOProvider(id: id, config: config, environment: environment)
    }
}
