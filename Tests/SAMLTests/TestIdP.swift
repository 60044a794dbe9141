import Crypto
import Foundation
import GatehouseTesting
import _CryptoExtras

@testable import SAML

/// A SAML identity provider inside the test: its key and certificate (and the SP's) made by the
/// `openssl` command, and responses written out as text, signed with xmlsec (the plugin's own
/// signing code, which SimpleSAMLphp's answers in Tests/e2e cross-check) and encrypted with
/// swift-crypto, so that each test can change exactly one thing, or wrap, move and copy elements the
/// way signature-wrapping attacks do.
struct TestIdP: Sendable {
    static let entityID = "https://idp.corp.test/metadata"
    static let ssoURL = "https://idp.corp.test/sso"

    let keyPEM: String
    let certificatePEM: String
    let spKeyPEM: String
    let spCertificatePEM: String

    /// One key pair per test run (RSA-2048 takes a moment).
    static let shared: TestIdP = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("saml-test-keys-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func pair(_ name: String) -> (key: String, certificate: String) {
            let key = directory.appendingPathComponent("\(name).key").path, certificate = directory.appendingPathComponent("\(name).crt").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-subj", "/CN=\(name)", "-keyout", key, "-out", certificate]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try! process.run()
            process.waitUntilExit()
            return (try! String(contentsOfFile: key, encoding: .utf8), try! String(contentsOfFile: certificate, encoding: .utf8))
        }
        let idp = pair("idp"), sp = pair("sp")
        return TestIdP(keyPEM: idp.key, certificatePEM: idp.certificate, spKeyPEM: sp.key, spCertificatePEM: sp.certificate)
    }()

    /// What one assertion says; each test changes what it attacks.
    struct AssertionParts {
        var id = "_a" + UUID().uuidString
        var issuer = TestIdP.entityID
        var issued: Date
        var nameID = "alice"
        var nameIDFormat = SAMLNamespace.persistentFormat
        var audience: String
        var recipient: String
        var inResponseTo: String
        var notBefore: Date
        var notOnOrAfter: Date
        var attributes: [String: [String]] = ["mail": ["alice@corp.test"], "displayName": ["Alice Liddell"], "groups": ["staff", "engineers"]]
        /// Put inside NameID verbatim (after signing), to test comments.
        var authnInstant: Date

        init(now: Date, audience: String, recipient: String, inResponseTo: String) {
            issued = now
            self.audience = audience
            self.recipient = recipient
            self.inResponseTo = inResponseTo
            notBefore = now.addingTimeInterval(-30)
            notOnOrAfter = now.addingTimeInterval(300)
            authnInstant = now
        }
    }

    /// The assertion as text, with its own namespace declarations (so it can be signed alone and
    /// moved anywhere: exclusive canonicalisation makes its signature independent of where it sits).
    func assertionXML(_ parts: AssertionParts) -> String {
        let e = SAMLRequestBuilder.escape
        var xml = "<saml:Assertion xmlns:saml=\"\(SAMLNamespace.assertion)\" ID=\"\(parts.id)\" Version=\"2.0\" IssueInstant=\"\(SAMLTime.format(parts.issued))\">"
        xml += "<saml:Issuer>\(e(parts.issuer))</saml:Issuer>"
        xml += "<saml:Subject><saml:NameID Format=\"\(parts.nameIDFormat)\">\(e(parts.nameID))</saml:NameID>"
        xml += "<saml:SubjectConfirmation Method=\"\(SAMLNamespace.bearer)\"><saml:SubjectConfirmationData NotOnOrAfter=\"\(SAMLTime.format(parts.notOnOrAfter))\""
        xml += " Recipient=\"\(e(parts.recipient))\" InResponseTo=\"\(e(parts.inResponseTo))\"/></saml:SubjectConfirmation></saml:Subject>"
        xml += "<saml:Conditions NotBefore=\"\(SAMLTime.format(parts.notBefore))\" NotOnOrAfter=\"\(SAMLTime.format(parts.notOnOrAfter))\">"
        xml += "<saml:AudienceRestriction><saml:Audience>\(e(parts.audience))</saml:Audience></saml:AudienceRestriction></saml:Conditions>"
        xml += "<saml:AuthnStatement AuthnInstant=\"\(SAMLTime.format(parts.authnInstant))\" SessionIndex=\"_s1\"><saml:AuthnContext>"
        xml +=
            "<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>"
        if !parts.attributes.isEmpty {
            xml += "<saml:AttributeStatement>"
            for (name, values) in parts.attributes.sorted(by: { $0.key < $1.key }) {
                xml += "<saml:Attribute Name=\"\(e(name))\">" + values.map { "<saml:AttributeValue>\(e($0))</saml:AttributeValue>" }.joined() + "</saml:Attribute>"
            }
            xml += "</saml:AttributeStatement>"
        }
        return xml + "</saml:Assertion>"
    }

    /// `xml` (one element with its namespaces) signed by the IdP: the signed element as text.
    func signed(_ xml: String, sha1: Bool = false) -> String {
        let document = try! SAMLXMLDocument(parsing: Data(xml.utf8))
        try! SAMLSignature.sign(document.root!, in: document, privateKeyPEM: keyPEM, certificateDER: PEMBlock.der(certificatePEM, label: "CERTIFICATE"), sha1: sha1)
        return Self.element(of: document.serialized())
    }

    /// A document's text without its XML declaration.
    static func element(of serialized: String) -> String {
        guard serialized.hasPrefix("<?xml"), let end = serialized.range(of: "?>") else { return serialized }
        return serialized[end.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A Response around `content` (assertions, or anything an attack puts there).
    func responseXML(
        id: String = "_r" + UUID().uuidString, inResponseTo: String, destination: String?, now: Date, status: String = SAMLNamespace.success, content: String
    ) -> String {
        var xml = "<samlp:Response xmlns:samlp=\"\(SAMLNamespace.protocolNS)\" xmlns:saml=\"\(SAMLNamespace.assertion)\" ID=\"\(id)\" Version=\"2.0\""
        xml += " IssueInstant=\"\(SAMLTime.format(now))\" InResponseTo=\"\(inResponseTo)\""
        if let destination { xml += " Destination=\"\(destination)\"" }
        xml += "><saml:Issuer>\(TestIdP.entityID)</saml:Issuer><samlp:Status><samlp:StatusCode Value=\"\(status)\"/></samlp:Status>"
        return xml + content + "</samlp:Response>"
    }

    enum ContentCipher { case aes256GCM, aes128CBC }

    /// `assertion` (text) as an EncryptedAssertion to the SP's certificate: the content key wrapped
    /// with RSA-OAEP (or, to test its refusal, RSA PKCS#1 v1.5).
    /// `beside`: the EncryptedKey beside the EncryptedData, pointed at by a RetrievalMethod (Shibboleth's way).
    func encrypted(
        _ assertion: String, cipher: ContentCipher = .aes256GCM, keyTransport: String = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p", beside: Bool = false
    ) -> String {
        let plaintext = Data(assertion.utf8)
        let cipherValue: Data
        let method: String
        let key: SymmetricKey
        switch cipher {
        case .aes256GCM:
            key = SymmetricKey(size: .bits256)
            let box = try! AES.GCM.seal(plaintext, using: key)
            cipherValue = Data(box.nonce) + box.ciphertext + box.tag
            method = "http://www.w3.org/2009/xmlenc11#aes256-gcm"
        case .aes128CBC:
            key = SymmetricKey(size: .bits128)
            let iv = try! AES._CBC.IV(ivBytes: (0..<16).map { _ in UInt8.random(in: 0...255) })
            cipherValue = Data(iv) + (try! AES._CBC.encrypt(plaintext, using: key, iv: iv))
            method = "http://www.w3.org/2001/04/xmlenc#aes128-cbc"
        }
        let publicKey = try! _RSA.Encryption.PrivateKey(pemRepresentation: spKeyPEM).publicKey
        let wrapped = try! key.withUnsafeBytes { try publicKey.encrypt(Data($0), padding: .PKCS1_OAEP) }
        let xenc = "xmlns:xenc=\"http://www.w3.org/2001/04/xmlenc#\""
        var keyXML = "<xenc:EncryptedKey \(xenc) Id=\"_k1\"><xenc:EncryptionMethod Algorithm=\"\(keyTransport)\"/>"
        keyXML += "<xenc:CipherData><xenc:CipherValue>\(wrapped.base64EncodedString())</xenc:CipherValue></xenc:CipherData>"
        // OpenSAML (Okta, Shibboleth) links a peer key back to what it encrypts.
        keyXML += (beside ? "<xenc:ReferenceList><xenc:DataReference URI=\"#_d1\"/></xenc:ReferenceList>" : "") + "</xenc:EncryptedKey>"
        var xml = "<saml:EncryptedAssertion><xenc:EncryptedData \(xenc) Id=\"_d1\" Type=\"http://www.w3.org/2001/04/xmlenc#Element\">"
        xml += "<xenc:EncryptionMethod Algorithm=\"\(method)\"/><ds:KeyInfo xmlns:ds=\"\(SAMLSignature.dsigNamespace)\">"
        xml += beside ? "<ds:RetrievalMethod Type=\"http://www.w3.org/2001/04/xmlenc#EncryptedKey\" URI=\"#_k1\"/>" : keyXML
        xml += "</ds:KeyInfo>"
        xml += "<xenc:CipherData><xenc:CipherValue>\(cipherValue.base64EncodedString())</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>"
        return xml + (beside ? keyXML : "") + "</saml:EncryptedAssertion>"
    }
}
