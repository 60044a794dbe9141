import Foundation

/// How an app reaches its broker and who it is there.
public struct GatehouseConfiguration: Sendable {
    /// Where the broker answers (`https://id.example.com`). Proofs and assertions name the broker's
    /// issuer, which the SDK reads from its discovery document.
    public var baseURL: URL
    /// The app's client id.
    public var app: String
    /// Only for a confidential client that runs where a secret can be kept (a server-side tool): an
    /// app on a device is a public client and has none.
    public var clientSecret: String?
    /// The scopes to ask for; nil asks for the app's default scopes.
    public var scopes: [String]?
    /// The return URI a browser flow comes back to: one of the app's registered redirect URIs
    /// (exactly). Nil when the app has only one.
    public var returnURI: String?
    /// This installation of the app, as the broker records it with a device key.
    public var installation: Installation
    /// Whether to send a DPoP proof (RFC 9449) with every flow request, token request and resource
    /// call, made with the installation's device key: where the app's policy binds tokens, they are
    /// then bound to this installation. On by default.
    public var bindTokens: Bool
    /// How long before the access token expires `validAccessToken()` renews it.
    public var renewalMargin: TimeInterval

    public init(
        baseURL: URL, app: String, clientSecret: String? = nil, scopes: [String]? = nil, returnURI: String? = nil, installation: Installation,
        bindTokens: Bool = true, renewalMargin: TimeInterval = 60
    ) {
        self.baseURL = baseURL
        self.app = app
        self.clientSecret = clientSecret
        self.scopes = scopes
        self.returnURI = returnURI
        self.installation = installation
        self.bindTokens = bindTokens
        self.renewalMargin = renewalMargin
    }
}

/// The facts of one installation of the app (docs/devices.md): `id` is random per install and kept
/// by the app (a reinstall is a new installation); the rest describe the device.
public struct Installation: Sendable, Equatable {
    public enum Platform: String, Sendable { case ios, android, web }

    public var id: String
    public var platform: Platform
    /// The platform's vendor id (`identifierForVendor`), where there is one.
    public var vendorID: String?
    public var model: String?
    public var osVersion: String?
    public var appVersion: String?
    /// `release` or `debug`.
    public var buildType: String?
    /// What the person calls the device ("Kim's iPhone").
    public var alias: String?
    public var pushToken: String?
    /// Whether the key is guarded by biometrics.
    public var biometric: Bool?

    public init(
        id: String = "ins-" + UUID().uuidString.lowercased(), platform: Platform, vendorID: String? = nil, model: String? = nil, osVersion: String? = nil,
        appVersion: String? = nil, buildType: String? = nil, alias: String? = nil, pushToken: String? = nil, biometric: Bool? = nil
    ) {
        self.id = id
        self.platform = platform
        self.vendorID = vendorID
        self.model = model
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.buildType = buildType
        self.alias = alias
        self.pushToken = pushToken
        self.biometric = biometric
    }

    /// The facts as a device-key registration or activation answer carries them.
    var answerFields: [String: JSON] {
        var fields: [String: JSON] = ["installationID": .string(id), "platform": .string(platform.rawValue)]
        let optional: [(String, String?)] = [
            ("vendorID", vendorID), ("model", model), ("osVersion", osVersion), ("appVersion", appVersion), ("buildType", buildType), ("alias", alias),
            ("pushToken", pushToken),
        ]
        for (name, value) in optional { if let value { fields[name] = .string(value) } }
        if let biometric { fields["biometric"] = .bool(biometric) }
        return fields
    }
}

/// A device attestation, in one of the formats the broker accepts (docs/plugins/device-attestation.md):
/// `format` (`apple-app-attest`, `apple-devicecheck`, `android-key-attestation`, `play-integrity`,
/// `test`) and that format's fields (`attestationObject` and `keyID`, `deviceToken`,
/// `certificateChain`, `integrityToken`, `token`).
public struct AttestationEvidence: Sendable, Equatable {
    public var format: String
    public var fields: [String: JSON]

    public init(format: String, fields: [String: JSON]) {
        self.format = format
        self.fields = fields
    }

    /// The evidence as the broker takes it: the format's fields with `format` (which wins over a field of that name).
    var answerFields: [String: JSON] {
        fields.merging(["format": .string(format)]) { _, format in format }
    }
}

/// Makes device attestations: only the device can (App Attest, DeviceCheck, Play Integrity, Android
/// key attestation), so the app supplies this.
public protocol AttestationProvider: Sendable {
    /// An attestation for `challenge` (the broker's nonce), in one of `formats`, for `key` when the
    /// format binds a key. `requestHash` is what Play Integrity's request hash must be.
    func attestation(challenge: String, formats: [String], requestHash: String?, key: any DeviceKey) async throws -> AttestationEvidence
}
