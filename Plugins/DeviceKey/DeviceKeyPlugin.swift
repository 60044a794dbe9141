import Foundation
import GatehousePluginKit

/// The `device-key` plugin type: an app registers a key pair made on the device (the broker keeps
/// the public key, with the device and installation it came from), then signs in with assertions
/// signed by the private key, in a flow or with the JWT bearer grant. See docs/plugins/device-key.md.
public enum DeviceKeyPlugin: PluginFactory {
    public static let typeName = "device-key"
    public typealias Settings = DeviceKeySettings

    /// `providers[].config` of a `device-key` instance.
    public struct Config: Decodable, Sendable {
        /// The JWS algorithms keys may use: `ES256` (P-256, the default) and `EdDSA` (Ed25519).
        public var algorithms: [String]
        /// How long a challenge's nonce may be answered.
        public var nonceLifetime: Seconds
        /// How old an assertion (its `iat`) may be, and the longest `exp - iat` it may ask for.
        public var assertionLifetime: Seconds
        /// How far ahead of the broker's clock a device's `iat` may be.
        public var clockSkew: Seconds

        static let supportedAlgorithms = ["ES256", "EdDSA"]

        enum CodingKeys: String, CodingKey { case algorithms, nonceLifetime, assertionLifetime, clockSkew }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let path = decoder.codingPath
            algorithms = try container.decodeIfPresent([String].self, forKey: .algorithms) ?? ["ES256"]
            nonceLifetime = try container.decodeIfPresent(Seconds.self, forKey: .nonceLifetime) ?? .minutes(2)
            assertionLifetime = try container.decodeIfPresent(Seconds.self, forKey: .assertionLifetime) ?? .minutes(5)
            clockSkew = try container.decodeIfPresent(Seconds.self, forKey: .clockSkew) ?? Seconds(30)
            if algorithms.isEmpty { throw ConfigIssue(path: path + [CodingKeys.algorithms], "must name at least one algorithm (ES256 or EdDSA)") }
            for (index, algorithm) in algorithms.enumerated() where !Self.supportedAlgorithms.contains(algorithm) {
                throw ConfigIssue(
                    path: path + [CodingKeys.algorithms, ConfigIssue.Key(index: index)],
                    "'\(algorithm)' is not accepted for device keys (use ES256 or EdDSA; none and HMAC never)"
                )
            }
            for (key, value, range) in [
                (CodingKeys.nonceLifetime, nonceLifetime.value, 10...900), (.assertionLifetime, assertionLifetime.value, 10...900),
                (.clockSkew, clockSkew.value, 0...300),
            ] where !range.contains(value) {
                throw ConfigIssue(path: path + [key], "must be between \(range.lowerBound) and \(range.upperBound) seconds, got \(value)")
            }
        }
    }

    public static let challenges = [DeviceKeyProvider.registerChallenge, DeviceKeyProvider.assertionChallenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> DeviceKeyProvider {
        guard let devices = environment.devices else { throw ConfigIssue(path: "", "device-key needs the broker's device store") }
        return DeviceKeyProvider(id: id, config: config, environment: environment, devices: devices)
    }
}
