import Foundation
import GatehouseAttestation
import GatehousePluginKit

/// What one app accepts as proof of a genuine device (`apps.<app id>` in the instance's config).
/// Secrets (Play Integrity keys, the DeviceCheck key) are not here: administrators set them through
/// the `secrets` resource, and the broker keeps them encrypted. Signing-certificate fingerprints come
/// from here and from the `fingerprints` resource.
public struct AppAttestationSettings: Decodable, Sendable {
    /// The formats the app accepts, among those it is set up for. Default: every format set up below.
    public var formats: [AttestationFormat]
    public var apple: Apple?
    public var android: Android?
    /// Whether the app's test registration keys (the `test-keys` resource) may stand in for a
    /// platform, for test accounts only.
    public var testKeys: Bool

    public struct Apple: Decodable, Sendable {
        /// `TEAMID.bundle.id` of each build that may register.
        public var appIDs: [String]
        /// Which App Attest environment's keys count: `production` (default), `development`, or `both`.
        public var environment: String
        /// Apple DeviceCheck: the developer key's team id and key id (the key itself is the
        /// `devicecheck-private-key` secret) and the environment its tokens come from.
        public var deviceCheck: DeviceCheck?

        public struct DeviceCheck: Decodable, Sendable {
            public var teamID: String
            public var keyID: String
            public var environment: String

            enum CodingKeys: String, CodingKey { case teamID, keyID, environment }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                teamID = try container.decode(String.self, forKey: .teamID)
                keyID = try container.decode(String.self, forKey: .keyID)
                environment = try container.decodeIfPresent(String.self, forKey: .environment) ?? "production"
                if !["production", "development"].contains(environment) {
                    throw ConfigIssue(path: decoder.codingPath + [CodingKeys.environment], "must be production or development, got '\(environment)'")
                }
                for (key, value) in [(CodingKeys.teamID, teamID), (.keyID, keyID)] where value.count != 10 || !value.allSatisfy({ $0.isLetter || $0.isNumber }) {
                    throw ConfigIssue(path: decoder.codingPath + [key], "must be Apple's 10-character identifier, got '\(value)'")
                }
            }
        }

        enum CodingKeys: String, CodingKey { case appIDs, environment, deviceCheck }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            appIDs = try container.decodeIfPresent([String].self, forKey: .appIDs) ?? []
            environment = try container.decodeIfPresent(String.self, forKey: .environment) ?? "production"
            deviceCheck = try container.decodeIfPresent(DeviceCheck.self, forKey: .deviceCheck)
            if !["production", "development", "both"].contains(environment) {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.environment], "must be production, development or both, got '\(environment)'")
            }
            for (index, appID) in appIDs.enumerated() {
                let parts = appID.split(separator: ".", maxSplits: 1)
                if parts.count != 2 || parts[0].count != 10 {
                    throw ConfigIssue(
                        path: decoder.codingPath + [CodingKeys.appIDs, ConfigIssue.Key(index: index)], "must be TEAMID.bundle.id (a 10-character team id), got '\(appID)'"
                    )
                }
            }
        }

        var environments: AppAttestVerifier.Environments {
            AppAttestVerifier.Environments(production: environment != "development", development: environment != "production")
        }
    }

    public struct Android: Decodable, Sendable {
        /// The package names the app ships as.
        public var packageNames: [String]
        /// SHA-256 fingerprints of the app's signing certificates (`AB:CD:...` or base64); more are
        /// added at run time through the `fingerprints` resource.
        public var signingCertificates: [String]
        /// Where an attested key must live at least: `tee` (default) or `strongbox`.
        public var minimumSecurityLevel: String
        /// Whether the device must have a locked bootloader and verified boot (default true).
        public var requireVerifiedBoot: Bool
        public var playIntegrity: PlayIntegrity?

        public struct PlayIntegrity: Decodable, Sendable {
            /// `local`: the broker decrypts and verifies the token with the app's keys (the
            /// `play-integrity-decryption-key` and `play-integrity-verification-key` secrets);
            /// `google`: the broker asks Google's `decodeIntegrityToken` with the app's service account
            /// (the `play-integrity-service-account` secret).
            public var decode: String
            /// The weakest device verdict accepted: none, basic, device (default) or strong.
            var deviceIntegrity: PlayIntegrityVerifier.DeviceIntegrity
            public var requirePlayRecognized: Bool
            public var requireLicensed: Bool
            /// How old a verdict may be.
            public var maxAge: Seconds

            enum CodingKeys: String, CodingKey { case decode, deviceIntegrity, requirePlayRecognized, requireLicensed, maxAge }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                decode = try container.decodeIfPresent(String.self, forKey: .decode) ?? "local"
                let integrity = try container.decodeIfPresent(String.self, forKey: .deviceIntegrity) ?? "device"
                guard let level = PlayIntegrityVerifier.DeviceIntegrity(rawValue: integrity) else {
                    throw ConfigIssue(path: decoder.codingPath + [CodingKeys.deviceIntegrity], "must be none, basic, device or strong, got '\(integrity)'")
                }
                deviceIntegrity = level
                requirePlayRecognized = try container.decodeIfPresent(Bool.self, forKey: .requirePlayRecognized) ?? true
                requireLicensed = try container.decodeIfPresent(Bool.self, forKey: .requireLicensed) ?? false
                maxAge = try container.decodeIfPresent(Seconds.self, forKey: .maxAge) ?? .minutes(5)
                if !["local", "google"].contains(decode) {
                    throw ConfigIssue(path: decoder.codingPath + [CodingKeys.decode], "must be local or google, got '\(decode)'")
                }
                if !(10...3600).contains(maxAge.value) { throw ConfigIssue(path: decoder.codingPath + [CodingKeys.maxAge], "must be between 10 and 3600 seconds") }
            }
        }

        enum CodingKeys: String, CodingKey { case packageNames, signingCertificates, minimumSecurityLevel, requireVerifiedBoot, playIntegrity }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            packageNames = try container.decodeIfPresent([String].self, forKey: .packageNames) ?? []
            signingCertificates = try container.decodeIfPresent([String].self, forKey: .signingCertificates) ?? []
            minimumSecurityLevel = try container.decodeIfPresent(String.self, forKey: .minimumSecurityLevel) ?? "tee"
            requireVerifiedBoot = try container.decodeIfPresent(Bool.self, forKey: .requireVerifiedBoot) ?? true
            playIntegrity = try container.decodeIfPresent(PlayIntegrity.self, forKey: .playIntegrity)
            if packageNames.isEmpty { throw ConfigIssue(path: decoder.codingPath + [CodingKeys.packageNames], "must name at least one package") }
            if !["tee", "strongbox"].contains(minimumSecurityLevel) {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.minimumSecurityLevel], "must be tee or strongbox, got '\(minimumSecurityLevel)'")
            }
            for (index, fingerprint) in signingCertificates.enumerated() where SigningCertificateDigest.bytes(fingerprint) == nil {
                throw ConfigIssue(
                    path: decoder.codingPath + [CodingKeys.signingCertificates, ConfigIssue.Key(index: index)],
                    "must be a SHA-256 fingerprint (AB:CD:... with 32 bytes, hex or base64), got '\(fingerprint)'"
                )
            }
        }

        var securityLevel: KeyDescription.SecurityLevel { minimumSecurityLevel == "strongbox" ? .strongBox : .trustedEnvironment }
    }

    enum CodingKeys: String, CodingKey { case formats, apple, android, testKeys }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        apple = try container.decodeIfPresent(Apple.self, forKey: .apple)
        android = try container.decodeIfPresent(Android.self, forKey: .android)
        testKeys = try container.decodeIfPresent(Bool.self, forKey: .testKeys) ?? false
        var configured: [AttestationFormat] = []
        if let apple, !apple.appIDs.isEmpty { configured.append(.appleAppAttest) }
        if apple?.deviceCheck != nil { configured.append(.appleDeviceCheck) }
        if android != nil { configured.append(.androidKeyAttestation) }
        if android?.playIntegrity != nil { configured.append(.playIntegrity) }
        if testKeys { configured.append(.test) }
        if let names = try container.decodeIfPresent([String].self, forKey: .formats) {
            formats = []
            for (index, name) in names.enumerated() {
                let path = decoder.codingPath + [CodingKeys.formats, ConfigIssue.Key(index: index)]
                guard let format = AttestationFormat(rawValue: name) else {
                    throw ConfigIssue(path: path, "unknown format '\(name)' (known: \(AttestationFormat.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                guard configured.contains(format) else { throw ConfigIssue(path: path, "'\(name)' is not set up for this app (\(format.setUpBy))") }
                formats.append(format)
            }
        } else {
            formats = configured
        }
    }
}

/// The evidence formats the plugin checks.
public enum AttestationFormat: String, Sendable, Hashable, CaseIterable {
    case appleAppAttest = "apple-app-attest"
    case appleDeviceCheck = "apple-devicecheck"
    case androidKeyAttestation = "android-key-attestation"
    case playIntegrity = "play-integrity"
    /// Signed with one of the app's test registration keys: for test accounts only.
    case test

    var setUpBy: String {
        switch self {
        case .appleAppAttest: "apple.appIDs sets it up"
        case .appleDeviceCheck: "apple.deviceCheck sets it up"
        case .androidKeyAttestation: "android sets it up"
        case .playIntegrity: "android.playIntegrity sets it up"
        case .test: "testKeys: true sets it up"
        }
    }
}
