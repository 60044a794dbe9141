import Foundation
import GatehouseAttestation
import GatehousePluginKit

/// The `webauthn` plugin type: passkeys and security keys (W3C Web Authentication Level 3). As an
/// identity provider it signs people in without a username (discoverable credentials) and registers
/// passkeys for new or signed-in accounts; as an authenticator it is a second factor, set up the
/// first time it is asked. The flow API carries the options JSON the browser and the iOS and
/// Android passkey APIs take, and takes back the credential JSON they answer. See
/// docs/plugins/webauthn.md.
public enum WebAuthnPlugin: PluginFactory {
    public static let typeName = "webauthn"

    /// `providers[].config` of a `webauthn` instance.
    public struct Config: Decodable, Sendable {
        /// The relying party id: the registrable domain passkeys are scoped to; nil: the issuer's host.
        public var rpID: String?
        /// The name authenticators show; nil: the relying party id.
        public var rpName: String?
        /// Origins allowed to run ceremonies; nil: the issuer's origin.
        public var origins: [String]?
        /// Whether the authenticator must verify the person (PIN, biometrics).
        public var userVerification: String
        /// Whether registrations ask for a discoverable credential (a passkey) when this instance is
        /// an identity provider: `required` (default) or `preferred`.
        public var residentKey: String
        /// `none` (default): any authenticator; `direct`: only attested ones, anchored in `trustAnchors`,
        /// the FIDO metadata, or the platforms' roots.
        public var attestation: String
        /// The attestation formats accepted with `direct`.
        public var attestationFormats: [String]
        /// PEM certificates of roots trusted for attestations.
        public var trustAnchors: [String]
        /// A FIDO Metadata Service BLOB file and the PEM file of the root it is signed under.
        public var metadataBLOB: String?
        public var metadataRoot: String?
        /// The credential algorithms offered, in order of preference.
        public var algorithms: [String]
        /// How long a ceremony may take.
        public var timeout: Seconds
        /// What a signature counter that did not grow does: `refuse` (default) or `record`.
        public var counterRegression: String
        /// How recent (and through this instance) a sign-in must be to remove a passkey.
        public var freshSignIn: Seconds

        enum CodingKeys: String, CodingKey {
            case rpID, rpName, origins, userVerification, residentKey, attestation, attestationFormats, trustAnchors, metadataBLOB, metadataRoot, algorithms, timeout,
                counterRegression, freshSignIn
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func issue(_ key: CodingKeys, _ message: String) -> ConfigIssue { ConfigIssue(path: decoder.codingPath + [key], message) }
            rpID = try container.decodeIfPresent(String.self, forKey: .rpID)
            rpName = try container.decodeIfPresent(String.self, forKey: .rpName)
            origins = try container.decodeIfPresent([String].self, forKey: .origins)
            userVerification = try container.decodeIfPresent(String.self, forKey: .userVerification) ?? "preferred"
            residentKey = try container.decodeIfPresent(String.self, forKey: .residentKey) ?? "required"
            attestation = try container.decodeIfPresent(String.self, forKey: .attestation) ?? "none"
            attestationFormats = try container.decodeIfPresent([String].self, forKey: .attestationFormats) ?? AttestationStatementVerifier.formats.filter { $0 != "none" }
            trustAnchors = try container.decodeIfPresent([String].self, forKey: .trustAnchors) ?? []
            metadataBLOB = try container.decodeIfPresent(String.self, forKey: .metadataBLOB)
            metadataRoot = try container.decodeIfPresent(String.self, forKey: .metadataRoot)
            algorithms = try container.decodeIfPresent([String].self, forKey: .algorithms) ?? COSEKey.Algorithm.allCases.map(\.name)
            timeout = try container.decodeIfPresent(Seconds.self, forKey: .timeout) ?? .minutes(5)
            counterRegression = try container.decodeIfPresent(String.self, forKey: .counterRegression) ?? "refuse"
            freshSignIn = try container.decodeIfPresent(Seconds.self, forKey: .freshSignIn) ?? .minutes(5)
            if let rpID, rpID.isEmpty || rpID.contains("/") || rpID.contains(":") { throw issue(.rpID, "must be a domain name, such as example.com") }
            guard UserVerification(rawValue: userVerification) != nil else {
                throw issue(.userVerification, "must be required, preferred or discouraged, got '\(userVerification)'")
            }
            guard ["required", "preferred"].contains(residentKey) else { throw issue(.residentKey, "must be required or preferred, got '\(residentKey)'") }
            guard ["none", "direct"].contains(attestation) else { throw issue(.attestation, "must be none or direct, got '\(attestation)'") }
            for (index, format) in attestationFormats.enumerated() where !AttestationStatementVerifier.formats.contains(format) || format == "none" {
                throw ConfigIssue(
                    path: decoder.codingPath + [CodingKeys.attestationFormats, IndexKey(index)], "'\(format)' is not one of packed, fido-u2f, android-key, apple, tpm")
            }
            for (index, name) in algorithms.enumerated() where COSEKey.Algorithm(name: name) == nil {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.algorithms, IndexKey(index)], "'\(name)' is not one of ES256, EdDSA, RS256")
            }
            if algorithms.isEmpty { throw issue(.algorithms, "must name at least one algorithm") }
            for (index, origin) in (origins ?? []).enumerated() where !RelyingParty.isOrigin(origin) {
                throw ConfigIssue(
                    path: decoder.codingPath + [CodingKeys.origins, IndexKey(index)],
                    "must be an https:// origin (scheme, host and port only: no path, query or fragment), or android:apk-key-hash:<base64url SHA-256>, got '\(origin)'"
                )
            }
            guard ["refuse", "record"].contains(counterRegression) else { throw issue(.counterRegression, "must be refuse or record, got '\(counterRegression)'") }
            if (metadataBLOB == nil) != (metadataRoot == nil) {
                throw issue(metadataBLOB == nil ? .metadataBLOB : .metadataRoot, "metadataBLOB and metadataRoot go together")
            }
            if timeout.value < 30 || timeout > .minutes(10) { throw issue(.timeout, "must be between 30s and 10m, got \(timeout)") }
            if freshSignIn.value < 30 || freshSignIn > .hours(1) { throw issue(.freshSignIn, "must be between 30s and 1h, got \(freshSignIn)") }
        }
    }

    /// A position in a config list, for issue paths.
    struct IndexKey: CodingKey {
        var stringValue: String { "\(intValue ?? 0)" }
        var intValue: Int?
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    public static let challenges = [WebAuthnProvider.usernameChallenge, WebAuthnProvider.createChallenge, WebAuthnProvider.getChallenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> WebAuthnProvider {
        let issuer = URL(string: environment.issuer)
        let rpID = config.rpID ?? issuer?.host ?? "localhost"
        let origin = issuer.flatMap { url -> String? in
            guard let scheme = url.scheme, let host = url.host else { return nil }
            return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
        }
        let origins = config.origins ?? origin.map { [$0] } ?? []
        var anchors: [AttestationCertificate] = []
        // Each entry is PEM text, or the path of a PEM file (as metadataBLOB and metadataRoot are).
        for (index, entry) in config.trustAnchors.enumerated() {
            let isText = entry.contains("-----BEGIN")
            guard let pem = isText ? entry : try? String(contentsOfFile: entry, encoding: .utf8) else {
                throw ConfigIssue(path: "trustAnchors[\(index)]", "is neither PEM text nor a readable file: \(entry)")
            }
            guard let certificates = try? AttestationCertificate.certificates(pem: pem), !certificates.isEmpty else {
                throw ConfigIssue(path: "trustAnchors[\(index)]", isText ? "is not a PEM certificate" : "\(entry) holds no PEM certificate")
            }
            anchors += certificates
        }
        var metadata: MetadataBLOB?
        if let blobPath = config.metadataBLOB, let rootPath = config.metadataRoot {
            guard let blob = try? String(contentsOfFile: blobPath, encoding: .utf8) else { throw ConfigIssue(path: "metadataBLOB", "cannot read \(blobPath)") }
            guard let rootPEM = try? String(contentsOfFile: rootPath, encoding: .utf8), let root = try? AttestationCertificate.certificates(pem: rootPEM).first else {
                throw ConfigIssue(path: "metadataRoot", "cannot read a PEM certificate from \(rootPath)")
            }
            do { metadata = try MetadataBLOB(jws: blob, root: root, now: environment.clock.now) } catch { throw ConfigIssue(path: "metadataBLOB", "\(error)") }
        }
        let relyingParty = RelyingParty(id: rpID, name: config.rpName ?? rpID, origins: origins)
        return WebAuthnProvider(
            id: id, config: config, relyingParty: relyingParty,
            trust: config.attestation == "direct" ? AttestationTrust(anchors: anchors, metadata: metadata) : nil, environment: environment
        )
    }
}
