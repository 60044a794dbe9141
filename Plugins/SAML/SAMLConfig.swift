import Foundation
import GatehousePluginKit
import GatehouseSupport
import _CryptoExtras

/// `providers[].config` of a `saml` instance: the SAML 2.0 identity provider (its metadata), this
/// broker's service provider (entity id, keys, how requests go), what a response must carry, and
/// how its subject and attributes become an identity. See docs/plugins/saml.md.
public struct SAMLConfig: Decodable, Sendable {
    /// Where the IdP's metadata comes from: an https URL (fetched, cached `metadataMaxAge`, fetched
    /// again when it fails), a file, or the few values written out.
    public var idpMetadataURL: String?
    public var idpMetadataFile: String?
    public var idp: IdentityProviderSettings?
    /// The certificate (PEM) that must have signed the metadata; without it a signed metadata
    /// document is verified with the signing certificates it lists itself.
    public var metadataSigningCertificate: String?
    public var metadataMaxAge: Seconds
    /// This SP's entity id: the metadata URL by default (`<issuer>/saml/<id>/metadata`).
    public var entityID: String?
    /// The SP's key and certificate (PEM, inline or files): requests are signed with them, and
    /// encrypted assertions are decrypted. Without them the SP neither signs nor accepts encryption.
    public var privateKey: String?
    public var privateKeyFile: String?
    public var certificate: String?
    public var certificateFile: String?
    /// How the AuthnRequest travels: `redirect` (HTTP-Redirect) or `post` (HTTP-POST, browsers only).
    public var requestBinding: Binding
    /// Sign the AuthnRequest (needs the SP key); the IdP's `WantAuthnRequestsSigned` turns it on too.
    public var signRequests: Bool
    /// Which signatures a response must carry: `assertion` (the assertion signed; a signed response
    /// around it is checked too), `response`, `either` (the default), or `both`.
    public var requireSignature: SignatureRequirement
    /// Require the assertion to come encrypted.
    public var requireEncryptedAssertion: Bool
    /// Accept SHA-1 signatures and digests (refused by default: SHA-1 collisions are practical).
    public var allowSHA1: Bool
    /// Accept an AES-CBC encrypted assertion in a Response that is not signed (ADFS's and Entra ID's
    /// default). Off: CBC ciphertext no signature covers is a padding oracle (Jager and Somorovsky,
    /// 2011); have the IdP sign the Response instead, or encrypt with AES-GCM.
    public var allowUnsignedCBC: Bool
    /// The `NameIDPolicy` format asked for; the IdP's choice otherwise.
    public var nameIDFormat: String?
    /// `true`: ask the IdP to authenticate the person again (`ForceAuthn`) on every sign-in, not only
    /// when the app asks (`prompt=login`).
    public var forceAuthn: Bool
    /// `AuthnContextClassRef` values asked for (exact comparison) and required in the answer.
    public var authnContextClassRefs: [String]
    public var clockSkew: Seconds
    /// The longest an assertion is accepted after the IdP issued it, whatever its own conditions say.
    public var maxAssertionAge: Seconds
    /// Which attribute (if any) becomes which part of the identity; the NameID is the subject unless
    /// `subject` names an attribute.
    public var attributeMapping: AttributeMapping
    /// Trust the IdP's `email` attribute as verified (to link accounts by address where the app allows it).
    public var trustEmail: Bool
    public var requiredClaims: [String: [String]]
    public var allowedGroups: [String]
    public var groupsFilter: String?
    public var groupsPrefix: String
    /// Attributes kept as claims besides the mapped ones (their names as the IdP sends them, or the
    /// friendly names).
    public var extraClaims: [String]
    public var timeout: Seconds

    /// The IdP written out, for an IdP that publishes no metadata.
    public struct IdentityProviderSettings: Decodable, Sendable {
        public var entityID: String
        /// The SingleSignOnService URL (both bindings).
        public var ssoURL: String
        /// The IdP's signing certificates (PEM).
        public var certificates: [String]
        public var wantAuthnRequestsSigned: Bool?
    }

    public enum Binding: String, Decodable, Sendable, CaseIterable {
        case redirect
        case post
    }

    public enum SignatureRequirement: String, Decodable, Sendable, CaseIterable {
        case assertion, response, either, both
    }

    /// Attribute names (or friendly names) that become parts of the identity.
    public struct AttributeMapping: Decodable, Sendable {
        public var subject: String?
        public var username: String?
        public var email: String?
        public var name: String?
        public var groups: String?

        public init() {
            subject = nil
            username = nil
            email = nil
            name = nil
            groups = nil
        }

        enum CodingKeys: String, CodingKey { case subject, username, email, name, groups }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            subject = try container.decodeIfPresent(String.self, forKey: .subject)
            username = try container.decodeIfPresent(String.self, forKey: .username)
            email = try container.decodeIfPresent(String.self, forKey: .email)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            groups = try container.decodeIfPresent(String.self, forKey: .groups)
            for (key, value) in [(CodingKeys.subject, subject), (.username, username), (.email, email), (.name, name), (.groups, groups)] where value?.isEmpty == true {
                throw ConfigIssue(path: decoder.codingPath + [key], "must name an attribute")
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case idpMetadataURL, idpMetadataFile, idp, metadataSigningCertificate, metadataMaxAge, entityID, privateKey, privateKeyFile, certificate
        case certificateFile, requestBinding, signRequests, requireSignature, requireEncryptedAssertion, allowSHA1, allowUnsignedCBC, nameIDFormat, forceAuthn
        case authnContextClassRefs, clockSkew, maxAssertionAge, attributeMapping, trustEmail, requiredClaims, allowedGroups
        case groupsFilter, groupsPrefix, extraClaims, timeout
    }

    /// The SP's key in PEM, as read at start.
    public var keyPEM: String?
    /// The SP's certificate in DER, as read at start.
    public var certificateDER: Data?
    /// The IdP written out, its certificates in DER.
    var inlineIdPCertificates: [Data] = []
    /// The metadata signer's certificate in DER.
    var metadataSignerDER: Data?

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath
        func optional<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T { try container.decodeIfPresent(T.self, forKey: key) ?? fallback }
        idpMetadataURL = try container.decodeIfPresent(String.self, forKey: .idpMetadataURL)
        idpMetadataFile = try container.decodeIfPresent(String.self, forKey: .idpMetadataFile)
        idp = try container.decodeIfPresent(IdentityProviderSettings.self, forKey: .idp)
        metadataSigningCertificate = try container.decodeIfPresent(String.self, forKey: .metadataSigningCertificate)
        metadataMaxAge = try optional(.metadataMaxAge, .hours(24))
        entityID = try container.decodeIfPresent(String.self, forKey: .entityID)
        privateKey = try container.decodeIfPresent(String.self, forKey: .privateKey)
        privateKeyFile = try container.decodeIfPresent(String.self, forKey: .privateKeyFile)
        certificate = try container.decodeIfPresent(String.self, forKey: .certificate)
        certificateFile = try container.decodeIfPresent(String.self, forKey: .certificateFile)
        requestBinding = try optional(.requestBinding, .redirect)
        signRequests = try optional(.signRequests, false)
        requireSignature = try optional(.requireSignature, .either)
        requireEncryptedAssertion = try optional(.requireEncryptedAssertion, false)
        allowSHA1 = try optional(.allowSHA1, false)
        allowUnsignedCBC = try optional(.allowUnsignedCBC, false)
        nameIDFormat = try container.decodeIfPresent(String.self, forKey: .nameIDFormat)
        forceAuthn = try optional(.forceAuthn, false)
        authnContextClassRefs = try optional(.authnContextClassRefs, [])
        clockSkew = try optional(.clockSkew, Seconds(60))
        maxAssertionAge = try optional(.maxAssertionAge, .minutes(10))
        attributeMapping = try optional(.attributeMapping, AttributeMapping())
        trustEmail = try optional(.trustEmail, false)
        requiredClaims = try optional(.requiredClaims, [:])
        allowedGroups = try optional(.allowedGroups, [])
        groupsFilter = try container.decodeIfPresent(String.self, forKey: .groupsFilter)
        groupsPrefix = try optional(.groupsPrefix, "")
        extraClaims = try optional(.extraClaims, [])
        timeout = try optional(.timeout, Seconds(10))

        let sources = [idpMetadataURL != nil, idpMetadataFile != nil, idp != nil].filter { $0 }.count
        guard sources == 1 else {
            throw ConfigIssue(path: path + [CodingKeys.idpMetadataURL], "give exactly one of idpMetadataURL, idpMetadataFile or idp")
        }
        if let idpMetadataURL, !LoopbackHost.allowsWebURL(idpMetadataURL) {
            throw ConfigIssue(path: path + [CodingKeys.idpMetadataURL], "must be an https URL (http only on this machine's loopback), got '\(idpMetadataURL)'")
        }
        if let idpMetadataFile, !FileManager.default.isReadableFile(atPath: idpMetadataFile) {
            throw ConfigIssue(path: path + [CodingKeys.idpMetadataFile], "cannot read '\(idpMetadataFile)'")
        }
        if let idp {
            let idpPath = path + [CodingKeys.idp]
            if idp.entityID.isEmpty { throw ConfigIssue(path: idpPath + [ConfigIssue.Key("entityID")], "must not be empty") }
            if !LoopbackHost.allowsWebURL(idp.ssoURL) {
                throw ConfigIssue(path: idpPath + [ConfigIssue.Key("ssoURL")], "must be an https URL (http only on loopback), got '\(idp.ssoURL)'")
            }
            if idp.certificates.isEmpty { throw ConfigIssue(path: idpPath + [ConfigIssue.Key("certificates")], "must list the IdP's signing certificate") }
            for (index, pem) in idp.certificates.enumerated() {
                guard let der = PEMBlock.der(pem, label: "CERTIFICATE") else {
                    throw ConfigIssue(path: idpPath + [ConfigIssue.Key("certificates"), ConfigIssue.Key(index: index)], "not a certificate in PEM (BEGIN CERTIFICATE)")
                }
                inlineIdPCertificates.append(der)
            }
        }
        if let metadataSigningCertificate {
            guard let der = PEMBlock.der(metadataSigningCertificate, label: "CERTIFICATE") else {
                throw ConfigIssue(path: path + [CodingKeys.metadataSigningCertificate], "not a certificate in PEM (BEGIN CERTIFICATE)")
            }
            metadataSignerDER = der
        }
        keyPEM = try Self.read(inline: privateKey, file: privateKeyFile, path: path, inlineKey: .privateKey, fileKey: .privateKeyFile)
        let certificatePEM = try Self.read(inline: certificate, file: certificateFile, path: path, inlineKey: .certificate, fileKey: .certificateFile)
        if (keyPEM == nil) != (certificatePEM == nil) {
            throw ConfigIssue(
                path: path + [keyPEM == nil ? CodingKeys.privateKey : CodingKeys.certificate], "the SP key and certificate go together: give both or neither")
        }
        if let keyPEM {
            // RSA: the Redirect binding's signature is RSA-SHA256, and IdPs encrypt to RSA keys.
            guard keyPEM.contains("PRIVATE KEY-----"), (try? _RSA.Signing.PrivateKey(pemRepresentation: keyPEM)) != nil, SAMLSignature.isUsablePrivateKey(keyPEM) else {
                throw ConfigIssue(path: path + [privateKey == nil ? CodingKeys.privateKeyFile : CodingKeys.privateKey], "not an RSA private key in PEM")
            }
        }
        if let certificatePEM {
            guard let der = PEMBlock.der(certificatePEM, label: "CERTIFICATE") else {
                throw ConfigIssue(path: path + [certificate == nil ? CodingKeys.certificateFile : CodingKeys.certificate], "not a certificate in PEM (BEGIN CERTIFICATE)")
            }
            certificateDER = der
        }
        if signRequests, keyPEM == nil { throw ConfigIssue(path: path + [CodingKeys.signRequests], "needs the SP's privateKey and certificate") }
        if requireEncryptedAssertion, keyPEM == nil {
            throw ConfigIssue(path: path + [CodingKeys.requireEncryptedAssertion], "needs the SP's privateKey and certificate (the IdP encrypts to its certificate)")
        }
        if let entityID, entityID.isEmpty { throw ConfigIssue(path: path + [CodingKeys.entityID], "must not be empty") }
        if !(0...300).contains(clockSkew.value) { throw ConfigIssue(path: path + [CodingKeys.clockSkew], "must be between 0 and 300 seconds") }
        if !(60...86_400).contains(maxAssertionAge.value) { throw ConfigIssue(path: path + [CodingKeys.maxAssertionAge], "must be between 60 and 86400 seconds") }
        if !(300...604_800).contains(metadataMaxAge.value) { throw ConfigIssue(path: path + [CodingKeys.metadataMaxAge], "must be between 300 and 604800 seconds") }
        if !(1...60).contains(timeout.value) { throw ConfigIssue(path: path + [CodingKeys.timeout], "must be between 1 and 60 seconds") }
        if let groupsFilter, (try? Regex(groupsFilter)) == nil { throw ConfigIssue(path: path + [CodingKeys.groupsFilter], "not a valid regular expression") }
        if nameIDFormat == SAMLNamespace.transientFormat {
            throw ConfigIssue(
                path: path + [CodingKeys.nameIDFormat],
                "a transient NameID changes at every sign-in and cannot be a subject; map `subject` to an attribute and ask for another format")
        }
    }

    private static func read(inline: String?, file: String?, path: [any CodingKey], inlineKey: CodingKeys, fileKey: CodingKeys) throws -> String? {
        if inline != nil, file != nil { throw ConfigIssue(path: path + [fileKey], "give \(inlineKey.rawValue) or \(fileKey.rawValue), not both") }
        if let inline { return inline }
        guard let file else { return nil }
        guard let data = FileManager.default.contents(atPath: file) else { throw ConfigIssue(path: path + [fileKey], "cannot read '\(file)'") }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Reads one PEM block.
enum PEMBlock {
    /// The DER bytes of the first `label` block in `pem`.
    static func der(_ pem: String, label: String) -> Data? {
        let begin = "-----BEGIN \(label)-----", end = "-----END \(label)-----"
        guard let start = pem.range(of: begin), let stop = pem.range(of: end, range: start.upperBound..<pem.endIndex) else { return nil }
        let body = pem[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(body))
    }
}
