import Foundation
import GatehousePluginKit
import GatehouseSupport

/// The `device-attestation` plugin type: proves that a sign-in key (or, as an extra factor, a
/// request) comes from a genuine app on a genuine device, with Apple App Attest, Apple DeviceCheck,
/// Google Play Integrity or Android key attestation. `device-key` registration consults it (the
/// app's `deviceRegistration.attestation`); apps may also require it as a factor. See
/// docs/plugins/device-attestation.md.
public enum DeviceAttestationPlugin: PluginFactory {
    public static let typeName = "device-attestation"

    /// `providers[].config` of a `device-attestation` instance.
    public struct Config: Decodable, Sendable {
        /// How long a factor challenge may be answered.
        public var challengeLifetime: Seconds
        /// Google's attestation certificate status list.
        public var revocationList: RevocationListSettings
        /// Apple's and Google's service addresses (tests point them at local stand-ins).
        public var services: ServiceURLs
        /// What each app (by id) accepts.
        public var apps: [String: AppAttestationSettings]

        enum CodingKeys: String, CodingKey { case challengeLifetime, revocationList, services, apps }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            challengeLifetime = try container.decodeIfPresent(Seconds.self, forKey: .challengeLifetime) ?? .minutes(2)
            revocationList = try container.decodeIfPresent(RevocationListSettings.self, forKey: .revocationList) ?? RevocationListSettings()
            services = try container.decodeIfPresent(ServiceURLs.self, forKey: .services) ?? ServiceURLs()
            apps = try container.decodeIfPresent([String: AppAttestationSettings].self, forKey: .apps) ?? [:]
            if !(10...900).contains(challengeLifetime.value) {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.challengeLifetime], "must be between 10 and 900 seconds, got \(challengeLifetime.value)")
            }
        }
    }

    /// Where the revocation status list comes from.
    public struct RevocationListSettings: Decodable, Sendable {
        /// Fetched when the copy is older than `refreshInterval`; empty: never fetched.
        public var url: String = "https://android.googleapis.com/attestation/status"
        /// A local copy read at start (for machines that cannot reach Google).
        public var file: String?
        public var refreshInterval: Seconds = .hours(1)

        init() {}

        enum CodingKeys: String, CodingKey { case url, file, refreshInterval }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            url = try container.decodeIfPresent(String.self, forKey: .url) ?? url
            file = try container.decodeIfPresent(String.self, forKey: .file)
            refreshInterval = try container.decodeIfPresent(Seconds.self, forKey: .refreshInterval) ?? refreshInterval
            if !url.isEmpty, !LoopbackHost.allowsWebURL(url) {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.url], "must be an https URL (or http on the loopback interface), got '\(url)'")
            }
            if let file, !FileManager.default.isReadableFile(atPath: file) {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.file], "cannot read '\(file)'")
            }
            if url.isEmpty, file == nil {
                throw ConfigIssue(path: decoder.codingPath, "needs a url or a file: without the status list, revoked attestation keys would pass")
            }
        }
    }

    /// Base URLs of the platform services.
    public struct ServiceURLs: Decodable, Sendable {
        public var deviceCheckProduction = "https://api.devicecheck.apple.com/v1"
        public var deviceCheckDevelopment = "https://api.development.devicecheck.apple.com/v1"
        public var playIntegrity = "https://playintegrity.googleapis.com"

        init() {}

        enum CodingKeys: String, CodingKey { case deviceCheckProduction, deviceCheckDevelopment, playIntegrity }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            for key in [CodingKeys.deviceCheckProduction, .deviceCheckDevelopment, .playIntegrity] {
                guard let url = try container.decodeIfPresent(String.self, forKey: key) else { continue }
                guard LoopbackHost.allowsWebURL(url) else {
                    throw ConfigIssue(path: decoder.codingPath + [key], "must be an https URL (or http on the loopback interface), got '\(url)'")
                }
                switch key {
                case .deviceCheckProduction: deviceCheckProduction = url
                case .deviceCheckDevelopment: deviceCheckDevelopment = url
                case .playIntegrity: playIntegrity = url
                }
            }
        }
    }

    public static let challenges = [DeviceAttestationProvider.attestationChallenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> DeviceAttestationProvider {
        guard let devices = environment.devices else { throw ConfigIssue(path: "", "device-attestation needs the broker's device store") }
        return try DeviceAttestationProvider(id: id, config: config, environment: environment, devices: devices)
    }
}
