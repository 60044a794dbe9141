import Foundation

/// What a device tells about itself when it registers a sign-in key.
public struct DeviceFacts: Sendable, Hashable, Codable {
    /// The random id the app made at its first launch (8 to 128 printable characters).
    public var installationID: String
    /// The vendor's id of the hardware, where the platform has one.
    public var vendorID: String?
    /// iOS, Android or the web.
    public var platform: DevicePlatform
    /// The model the device says it is.
    public var model: String?
    /// The operating system's version.
    public var osVersion: String?
    /// The app's version.
    public var appVersion: String?
    /// `release` or `debug`.
    public var buildType: String?
    /// The name the person gives the device.
    public var alias: String?
    /// The installation's push token (APNs or FCM), for the app's back end.
    public var pushToken: String?
    /// Whether a biometric factor is enrolled on the installation.
    public var biometric: Bool?

    /// The facts a device states about itself when it registers a key.
    public init(
        installationID: String, vendorID: String? = nil, platform: DevicePlatform, model: String? = nil, osVersion: String? = nil, appVersion: String? = nil,
        buildType: String? = nil, alias: String? = nil, pushToken: String? = nil, biometric: Bool? = nil
    ) {
        self.pushToken = pushToken
        self.biometric = biometric
        self.installationID = installationID
        self.vendorID = vendorID
        self.platform = platform
        self.model = model
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.buildType = buildType
        self.alias = alias
    }
}

extension DeviceFacts {
    /// What an installation id looks like wherever it is named (a registration, a flow's start, the
    /// registration state): 8 to 128 printable ASCII characters, no spaces.
    public static func isValidInstallationID(_ text: String) -> Bool {
        (8...128).contains(text.count) && text.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }
    }

    /// The answer fields of an installation's facts, as `init(answer:)` reads them: declared once for
    /// every challenge that takes them (`register_key`, `activation`).
    public static let challengeInputs: [ChallengeElement] = [
        .text("installationID", label: "Installation id", maxLength: 128),
        .text("vendorID", label: "Vendor id", maxLength: 128),
        .text("platform", label: "Platform", maxLength: 16),
        .text("model", label: "Model", maxLength: 128),
        .text("osVersion", label: "OS version", maxLength: 128),
        .text("appVersion", label: "App version", maxLength: 128),
        .text("buildType", label: "Build type", maxLength: 16),
        .text("alias", label: "Device name", maxLength: 256),
        .text("pushToken", label: "Push token", maxLength: 4096),
        .json("biometric", label: "Biometric factor enrolled", maxLength: 8),
    ]

    /// The installation facts of a challenge's answer (`installationID`, `platform`, `vendorID`,
    /// `model`, `osVersion`, `appVersion`, `buildType`, `alias`, `pushToken`, `biometric`), each
    /// checked for shape; refusals are `invalid_answer` naming the field.
    public init(answer: ChallengeResponse) throws(BrokerError) {
        func optional(_ name: String, max: Int = 128) throws(BrokerError) -> String? {
            guard let value = answer.values[name], value != .null else { return nil }
            guard let text = value.stringValue, !text.isEmpty, text.count <= max, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw BrokerError.invalidAnswer("'\(name)' must be a string of 1 to \(max) printable characters.")
            }
            return text
        }
        guard let installationID = answer.values["installationID"]?.stringValue, Self.isValidInstallationID(installationID) else {
            throw BrokerError.invalidAnswer("The answer needs 'installationID': the random id (8 to 128 printable ASCII characters) the app made on its first launch.")
        }
        let platformName = try answer.string("platform")
        guard let platform = DevicePlatform(rawValue: platformName) else { throw BrokerError.invalidAnswer("'platform' must be ios, android or web.") }
        let buildType = try optional("buildType")
        if let buildType, !["release", "debug"].contains(buildType) { throw BrokerError.invalidAnswer("'buildType' must be release or debug.") }
        var biometric: Bool?
        switch answer.values["biometric"] {
        case nil, .null?: break
        case .bool(let flag)?: biometric = flag
        case .string(let flag)? where ["true", "false"].contains(flag): biometric = flag == "true"
        default: throw BrokerError.invalidAnswer("'biometric' must be true or false.")
        }
        self.init(
            installationID: installationID, vendorID: try optional("vendorID"), platform: platform, model: try optional("model"), osVersion: try optional("osVersion"),
            appVersion: try optional("appVersion"), buildType: buildType, alias: try optional("alias", max: 64), pushToken: try optional("pushToken", max: 4096),
            biometric: biometric
        )
    }
}

/// A sign-in key a provider has verified (proof of possession, attestation where asked) and that the
/// engine registers once the flow knows the account: its id, public key and the device's facts.
public struct NewSignInKey: Sendable, Hashable, Codable {
    /// The key's id: its JWK thumbprint, or App Attest's key id.
    public var keyID: String
    /// The public key, as a JWK.
    public var publicKey: JSONValue
    /// The RFC 7638 thumbprint of the public key.
    public var thumbprint: String
    /// The JWS algorithm it signs with.
    public var algorithm: String
    /// App Attest's counter, for keys whose assertions carry one.
    public var counter: Int?
    /// The attestation format that vouched for the key, if one did.
    public var attestation: String?
    /// The device and installation it comes from.
    public var device: DeviceFacts
    /// What the attestation established (app id, environment, security level...), for the audit log.
    public var attestationFacts: [String: String]?

    /// A key a provider identified as new, for the engine to store with its device.
    public init(
        keyID: String, publicKey: JSONValue, thumbprint: String, algorithm: String, counter: Int? = nil, attestation: String? = nil, device: DeviceFacts,
        attestationFacts: [String: String]? = nil
    ) {
        self.attestationFacts = attestationFacts
        self.keyID = keyID
        self.publicKey = publicKey
        self.thumbprint = thumbprint
        self.algorithm = algorithm
        self.counter = counter
        self.attestation = attestation
        self.device = device
    }
}

extension DeviceFacts {
    /// The longest alias a device may have.
    public static let maxAliasLength = 64

    /// A trimmed alias of 1 to 64 characters without control characters.
    public static func checkedAlias(_ alias: String) throws(BrokerError) -> String {
        let trimmed = alias.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...maxAliasLength).contains(trimmed.count), !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw BrokerError(
                .invalidRequest, .badRequest, "The alias must have 1 to \(maxAliasLength) characters and no control characters.",
                issues: [ConfigIssue(path: "alias", "must have 1 to \(maxAliasLength) characters")]
            )
        }
        return trimmed
    }
}
