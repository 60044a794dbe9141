import Foundation
import GatehousePluginKit
import Testing

@testable import SAML

/// Crafted responses against the validator: signature wrapping (XSW1-8), comments in the NameID, an
/// unsigned assertion where a signature is required, another audience, expiry, a wrong request,
/// SHA-1, RSA PKCS#1 v1.5 key transport, DTDs (XXE, entity expansion). Each refusal is checked for
/// its reason, and each attack starts from a response the same test shows is accepted untouched.
@Suite("SAML attacks")
struct SAMLAttackTests {
    static let idp = TestIdP.shared
    static let sp = "https://broker.test/saml/corp"
    static let acs = "https://broker.test/oauth2/callback/corp"
    static let requestID = "_request-1"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func config(_ extra: [String: Any] = [:]) throws -> SAMLConfig {
        var object: [String: Any] = [
            "idp": ["entityID": TestIdP.entityID, "ssoURL": TestIdP.ssoURL, "certificates": [idp.certificatePEM]],
            "privateKey": idp.spKeyPEM, "certificate": idp.spCertificatePEM,
        ]
        object.merge(extra) { _, new in new }
        return try JSONDecoder().decode(SAMLConfig.self, from: JSONSerialization.data(withJSONObject: object))
    }

    static func validator(_ extra: [String: Any] = [:]) throws -> SAMLResponseValidator {
        let config = try config(extra)
        let metadata = SAMLIdPMetadata(
            entityID: TestIdP.entityID, redirectURL: TestIdP.ssoURL, postURL: nil, wantAuthnRequestsSigned: false,
            certificates: [PEMBlock.der(idp.certificatePEM, label: "CERTIFICATE")!])
        return SAMLResponseValidator(config: config, idp: metadata, spEntityID: sp, acsURL: acs)
    }

    static func parts(_ change: (inout TestIdP.AssertionParts) -> Void = { _ in }) -> TestIdP.AssertionParts {
        var parts = TestIdP.AssertionParts(now: now, audience: sp, recipient: acs, inResponseTo: requestID)
        change(&parts)
        return parts
    }

    static func response(_ content: String, destination: String? = acs, status: String = SAMLNamespace.success, id: String = "_response-1") -> String {
        idp.responseXML(id: id, inResponseTo: requestID, destination: destination, now: now, status: status, content: content)
    }

    static func check(_ xml: String, _ extra: [String: Any] = [:]) throws -> SAMLAssertion {
        try validator(extra).validate(Data(xml.utf8).base64EncodedString(), requestID: requestID, now: now)
    }

    /// The refusal of `xml`, which must be one.
    static func refusal(_ xml: String, _ extra: [String: Any] = [:]) throws -> SAMLError {
        do {
            let accepted = try check(xml, extra)
            Issue.record("accepted, as \(accepted.nameID)")
            return .malformed("accepted")
        } catch let error as SAMLError {
            return error
        }
    }

    static var signedAssertion: String { idp.signed(idp.assertionXML(parts())) }

    /// The signed assertion, with Alice's NameID turned into Mallory's (its signature now wrong) and a new ID.
    static func evil(_ signed: String, id: String = "_evil") -> String {
        signed.replacingOccurrences(of: ">alice</saml:NameID>", with: ">mallory</saml:NameID>").replacingOccurrences(
            of: #"ID="\#(signed.firstID)""#, with: #"ID="\#(id)""#)
    }

    /// An assertion with its signature taken out.
    static func unsigned(_ signed: String) -> String {
        // xmlsec writes the signature in the default namespace: `<Signature xmlns="…xmldsig#">`.
        guard let start = signed.range(of: "<Signature"), let end = signed.range(of: "</Signature>") else { return signed }
        return signed.replacingCharacters(in: start.lowerBound..<end.upperBound, with: "")
    }

    @Test("the untouched signed assertion is accepted: the attacks below start from something good")
    func untouchedIsAccepted() throws {
        let assertion = try Self.check(Self.response(Self.signedAssertion))
        #expect(assertion.nameID == "alice")
        #expect(assertion.attributes["groups"] == ["staff", "engineers"])
        let signedResponse = Self.idp.signed(Self.response(Self.unsigned(Self.signedAssertion)))
        #expect(try Self.check(signedResponse).nameID == "alice")
    }

    @Test("nothing signed, or only the Response when the assertion must be signed, is refused")
    func unsignedIsRefused() throws {
        #expect(try Self.refusal(Self.response(Self.unsigned(Self.signedAssertion))) == .signature("the assertion is not signed as required (either)"))
        let signedResponse = Self.idp.signed(Self.response(Self.unsigned(Self.signedAssertion)))
        #expect(try Self.refusal(signedResponse, ["requireSignature": "assertion"]) == .signature("the assertion is not signed as required (assertion)"))
        #expect(try Self.refusal(Self.response(Self.signedAssertion), ["requireSignature": "both"]).reason.hasPrefix("signature:"))
    }

    @Test("an unsigned assertion put into a signed response breaks the response's signature")
    func unsignedAssertionInSignedResponse() throws {
        let signedResponse = Self.idp.signed(Self.response(Self.unsigned(Self.signedAssertion)))
        let swapped = signedResponse.replacingOccurrences(of: ">alice</saml:NameID>", with: ">mallory</saml:NameID>")
        #expect(swapped != signedResponse)
        #expect(try Self.refusal(swapped).reason.hasPrefix("signature:"))
        // A second, unsigned assertion beside the first.
        let added = signedResponse.replacingOccurrences(of: "</samlp:Response>", with: Self.unsigned(Self.evil(Self.signedAssertion)) + "</samlp:Response>")
        #expect(try Self.refusal(added).reason.hasPrefix("signature:"))
    }

    @Test("XSW1 and XSW2: the signed Response copied into (or before) an evil one is refused")
    func responseWrapping() throws {
        let original = Self.idp.signed(Self.response(Self.unsigned(Self.signedAssertion)))
        let signature = original.between("<Signature", "</Signature>")
        #expect(signature.contains("<Reference URI=\"#_response-1\""))
        let evilContent = Self.unsigned(Self.evil(Self.signedAssertion))
        // XSW1: the evil Response carries the signature, whose Object holds the original Response.
        let xsw1 = Self.response(
            signature.replacingOccurrences(of: "</Signature>", with: "<Object>\(original)</Object></Signature>") + evilContent, id: "_evil-response")
        #expect(try Self.refusal(xsw1).reason.hasPrefix("signature:"))
        // XSW2: the original Response sits beside the signature, detached.
        let xsw2 = Self.response(signature + original + evilContent, id: "_evil-response")
        #expect(try Self.refusal(xsw2).reason.hasPrefix("signature:") || (try Self.refusal(xsw2).reason.hasPrefix("malformed:")))
    }

    @Test("XSW3-8: the signed assertion moved, wrapped or copied beside an evil one is refused")
    func assertionWrapping() throws {
        let original = Self.signedAssertion
        let id = original.firstID
        let signature = original.between("<Signature", "</Signature>")
        #expect(signature.contains("<Reference URI=\"#\(id)\""))
        #expect(!Self.unsigned(original).contains("Signature"))
        let evilUnsigned = Self.unsigned(Self.evil(original))
        let evilSameID = Self.unsigned(Self.evil(original, id: id))
        func insertingSignature(_ assertion: String, _ signature: String) -> String {
            assertion.replacingOccurrences(of: "</saml:Issuer>", with: "</saml:Issuer>" + signature)
        }
        let variants: [(String, String)] = [
            // XSW3: an evil assertion with the same ID before the original.
            ("XSW3", Self.response(evilSameID + original)),
            // XSW4: the original inside the evil assertion.
            ("XSW4", Self.response(evilUnsigned.replacingOccurrences(of: "</saml:Assertion>", with: original + "</saml:Assertion>"))),
            // XSW5: the evil assertion carries the original's signature; the original goes to the end.
            ("XSW5", Self.response(insertingSignature(evilUnsigned, signature) + "<samlp:Extensions>\(original)</samlp:Extensions>")),
            // XSW6: the original inside the copied signature's Object.
            (
                "XSW6",
                Self.response(insertingSignature(evilUnsigned, signature.replacingOccurrences(of: "</Signature>", with: "<Object>\(original)</Object></Signature>")))
            ),
            // XSW7: the original in an Extensions element, the evil one unsigned.
            ("XSW7", Self.response("<samlp:Extensions>\(original)</samlp:Extensions>" + evilUnsigned)),
            // XSW8: the evil assertion keeps the original's ID and signature; the original sits in its Object.
            (
                "XSW8",
                Self.response(
                    insertingSignature(evilSameID, signature.replacingOccurrences(of: "</Signature>", with: "<Object>\(Self.unsigned(original))</Object></Signature>")))
            ),
        ]
        for (name, xml) in variants {
            let error = try Self.refusal(xml)
            #expect(error.reason.hasPrefix("signature:") || error.reason.hasPrefix("malformed:"), "\(name): \(error.reason)")
            #expect(error != .malformed("accepted"), "\(name) was accepted")
        }
    }

    @Test("a reference xmlsec would evaluate (an XPointer), a second reference or another transform is refused before xmlsec runs")
    func referencesAreCheckedFirst() throws {
        let original = Self.signedAssertion
        let id = original.firstID
        let xpointer = original.replacingOccurrences(of: "URI=\"#\(id)\"", with: "URI=\"#xpointer(//*[count(//*)>0])\"")
        #expect(xpointer != original)
        #expect(try Self.refusal(Self.response(xpointer)) == .signature("the signature does not reference the element it is in"))
        let xslt = original.replacingOccurrences(of: "http://www.w3.org/2000/09/xmldsig#enveloped-signature", with: "http://www.w3.org/TR/1999/REC-xslt-19991116")
        #expect(try Self.refusal(Self.response(xslt)) == .signature("the signature uses a transform that is not allowed"))
        let twinURI = original.replacingOccurrences(of: "<Reference URI=", with: "<Reference xmlns:x=\"urn:x\" x:URI=\"#xpointer(//*)\" URI=")
        #expect(twinURI != original)
        #expect(try Self.refusal(Self.response(twinURI)) == .malformed("the Reference element has two attributes named alike in different namespaces"))
        // The ID itself an expression: xmlsec would evaluate `#xpointer(…)` whatever it matches.
        let expressionID = original.replacingOccurrences(of: id, with: "xpointer(//*[count(//*)>0])")
        #expect(try Self.refusal(Self.response(expressionID)) == .signature("the ID of the signed Assertion is not an NCName"))
        let reference = original.between("<Reference", "</Reference>")
        let twice = original.replacingOccurrences(of: reference, with: reference + reference)
        #expect(try Self.refusal(Self.response(twice)).reason.contains("SignedInfo is not one"))
    }

    @Test("a condition the SP does not understand, and a Response without Issuer around an encrypted assertion, are refused")
    func specRules() throws {
        let unknown = Self.idp.assertionXML(Self.parts()).replacingOccurrences(
            of: "</saml:AudienceRestriction>", with: "</saml:AudienceRestriction><saml:Condition xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"x\"/>"
        )
        #expect(try Self.refusal(Self.response(Self.idp.signed(unknown))).reason.contains("does not understand (Condition)"))
        let noIssuer = Self.response(Self.idp.encrypted(Self.signedAssertion)).replacingOccurrences(
            of: "<saml:Issuer>\(TestIdP.entityID)</saml:Issuer><samlp:Status>", with: "<samlp:Status>")
        #expect(try Self.refusal(noIssuer) == .malformed("the Response has no Issuer"))
    }

    @Test("a comment inside the signed NameID is refused, not read as the text before it")
    func commentInNameID() throws {
        let signed = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.nameID = "alice.evil" }))
        #expect(try Self.check(Self.response(signed)).nameID == "alice.evil")
        let commented = signed.replacingOccurrences(of: ">alice.evil<", with: ">alice<!---->.evil<")
        #expect(try Self.refusal(Self.response(commented)) == .malformed("the NameID element holds more than text"))
    }

    @Test("another audience, a wrong Recipient or Destination, and another request are refused")
    func conditionsAreChecked() throws {
        let otherAudience = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.audience = "https://other-sp.test" }))
        #expect(try Self.refusal(Self.response(otherAudience)) == .condition("the Assertion is meant for another audience"))
        let otherRecipient = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.recipient = "https://other-sp.test/acs" }))
        #expect(try Self.refusal(Self.response(otherRecipient)).reason.contains("SubjectConfirmation"))
        let otherRequest = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.inResponseTo = "_another" }))
        #expect(try Self.refusal(Self.response(otherRequest)).reason.contains("SubjectConfirmation"))
        #expect(try Self.refusal(Self.response(Self.signedAssertion, destination: "https://other-sp.test/acs")).reason.contains("Destination"))
        let unsolicited = Self.idp.responseXML(inResponseTo: "_unsolicited", destination: Self.acs, now: Self.now, content: Self.signedAssertion)
        #expect(try Self.refusal(unsolicited).reason.contains("InResponseTo"))
        let otherIssuer = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.issuer = "https://evil-idp.test" }))
        #expect(try Self.refusal(Self.response(otherIssuer)).reason.contains("Issuer"))
    }

    @Test("an expired assertion, one not yet valid, and one issued too long ago are refused (with the clock skew)")
    func timesAreChecked() throws {
        let expired = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.notOnOrAfter = Self.now.addingTimeInterval(-61) }))
        #expect(try Self.refusal(Self.response(expired)).reason.hasPrefix("condition:"))
        let withinSkew = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.notOnOrAfter = Self.now.addingTimeInterval(-30) }))
        #expect(try Self.check(Self.response(withinSkew)).nameID == "alice")
        let early = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.notBefore = Self.now.addingTimeInterval(120) }))
        #expect(try Self.refusal(Self.response(early)) == .condition("the Assertion is not valid yet (NotBefore)"))
        let old = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.issued = Self.now.addingTimeInterval(-3600) }))
        #expect(try Self.refusal(Self.response(old)) == .condition("the Assertion is older than maxAssertionAge"))
    }

    @Test("a DTD is refused before any entity is declared: XXE and entity expansion never run")
    func doctypesAreRefused() throws {
        let xxe = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>" + Self.response(Self.signedAssertion)
        #expect(try Self.refusal(xxe) == .malformed("the XML document declares a DTD, which SAML never needs"))
        let laughs = "<!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>"
        let bomb = laughs + Self.response(Self.signedAssertion).replacingOccurrences(of: ">alice<", with: ">&c;<")
        #expect(try Self.refusal(bomb) == .malformed("the XML document declares a DTD, which SAML never needs"))
        #expect(try Self.refusal("<samlp:Response") == .malformed("the XML document is not well-formed"))
    }

    @Test("SHA-1 signatures are refused unless allowSHA1 is set")
    func sha1IsRefused() throws {
        let sha1 = Self.idp.signed(Self.idp.assertionXML(Self.parts()), sha1: true)
        #expect(try Self.refusal(Self.response(sha1)).reason.hasPrefix("signature:"))
        #expect(try Self.check(Self.response(sha1), ["allowSHA1": true]).nameID == "alice")
    }

    @Test("an encrypted assertion decrypts; RSA PKCS#1 v1.5 key transport is refused before decryption")
    func encryption() throws {
        let encrypted = Self.idp.encrypted(Self.signedAssertion)
        #expect(try Self.check(Self.response(encrypted)).nameID == "alice")
        let pkcs1 = Self.idp.encrypted(Self.signedAssertion, keyTransport: "http://www.w3.org/2001/04/xmlenc#rsa-1_5")
        #expect(try Self.refusal(Self.response(pkcs1)) == .malformed("the encryption method http://www.w3.org/2001/04/xmlenc#rsa-1_5 is not accepted"))
        #expect(try Self.refusal(Self.response(Self.signedAssertion), ["requireEncryptedAssertion": true]).reason.contains("not encrypted"))
        // Shibboleth's way: the EncryptedKey beside the EncryptedData, named by a RetrievalMethod.
        #expect(try Self.check(Self.response(Self.idp.encrypted(Self.signedAssertion, beside: true))).nameID == "alice")
        // AES-CBC ciphertext no signature covers is refused (a padding oracle); under a signed Response it is read.
        let cbc = Self.idp.encrypted(Self.signedAssertion, cipher: .aes128CBC)
        #expect(try Self.refusal(Self.response(cbc)).reason.contains("AES-CBC is accepted only in a signed Response"))
        #expect(try Self.check(Self.idp.signed(Self.response(cbc))).nameID == "alice")
        #expect(try Self.check(Self.response(cbc), ["allowUnsignedCBC": true]).nameID == "alice")
        // A namespaced twin of an attribute xmlsec reads (it reads by local name) is refused, not
        // checked in its plain form and used in the other.
        let twinMethod = encrypted.replacingOccurrences(
            of: #"<xenc:EncryptionMethod Algorithm="http://www.w3.org/2009/xmlenc11#aes256-gcm"/>"#,
            with:
                #"<xenc:EncryptionMethod xmlns:x="urn:x" x:Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc" Algorithm="http://www.w3.org/2009/xmlenc11#aes256-gcm"/>"#
        )
        #expect(twinMethod != encrypted)
        #expect(try Self.refusal(Self.response(twinMethod)).reason.hasPrefix("malformed:"))
        // Nothing that makes xmlsec fetch, transform or take a key in the clear reaches it.
        let reference = encrypted.replacingOccurrences(
            of: #"<xenc:CipherData><xenc:CipherValue>"#, with: #"<xenc:CipherData><xenc:CipherReference URI="file:///dev/zero"/><xenc:CipherValue>"#)
        #expect(try Self.refusal(Self.response(reference)).reason.contains("cipher data is not one inline CipherValue"))
        let keyValue = encrypted.replacingOccurrences(
            of: "<ds:KeyInfo xmlns:ds=\"\(SAMLSignature.dsigNamespace)\">", with: "<ds:KeyInfo xmlns:ds=\"\(SAMLSignature.dsigNamespace)\"><ds:KeyName>k</ds:KeyName>")
        #expect(keyValue != encrypted)
        #expect(try Self.refusal(Self.response(keyValue)).reason.contains("KeyInfo holds something besides an EncryptedKey"))
        // An unsigned assertion inside the encryption is still unsigned.
        #expect(try Self.refusal(Self.response(Self.idp.encrypted(Self.unsigned(Self.signedAssertion)))).reason.hasPrefix("signature:"))
    }

    @Test("an IdP status other than Success is the IdP's refusal, seen as access_denied")
    func statusIsRead() throws {
        let failed = Self.response("", status: "urn:oasis:names:tc:SAML:2.0:status:Responder").replacingOccurrences(
            of: "<samlp:StatusCode Value=\"urn:oasis:names:tc:SAML:2.0:status:Responder\"/>",
            with:
                "<samlp:StatusCode Value=\"urn:oasis:names:tc:SAML:2.0:status:Responder\"><samlp:StatusCode Value=\"urn:oasis:names:tc:SAML:2.0:status:AuthnFailed\"/></samlp:StatusCode>"
        )
        let error = try Self.refusal(failed)
        #expect(error == .status("urn:oasis:names:tc:SAML:2.0:status:AuthnFailed"))
        #expect(error.brokerError.code == .accessDenied)
    }

    @Test("a transient NameID is refused as a subject unless an attribute is mapped to it")
    func transientNameID() throws {
        let transient = Self.idp.signed(Self.idp.assertionXML(Self.parts { $0.nameIDFormat = SAMLNamespace.transientFormat }))
        let assertion = try Self.check(Self.response(transient))
        #expect(throws: BrokerError.self) { _ = try SAMLIdentityMapper(config: try Self.config()).identity(from: assertion, providerID: "corp") }
        let mapped = try SAMLIdentityMapper(config: try Self.config(["attributeMapping": ["subject": "mail"]])).identity(from: assertion, providerID: "corp")
        #expect(mapped.subject == "alice@corp.test")
    }

    @Test("IdP metadata: read, its signature verified with the configured signer, a tampered copy refused")
    func metadataSignature() throws {
        let body = Self.idp.certificatePEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let metadata = """
            <md:EntityDescriptor xmlns:md="\(SAMLNamespace.metadata)" xmlns:ds="\(SAMLSignature.dsigNamespace)" ID="_meta" entityID="\(TestIdP.entityID)">\
            <md:IDPSSODescriptor protocolSupportEnumeration="\(SAMLNamespace.protocolNS)" WantAuthnRequestsSigned="true">\
            <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>\(body)</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>\
            <md:SingleSignOnService Binding="\(SAMLNamespace.redirectBinding)" Location="\(TestIdP.ssoURL)"/></md:IDPSSODescriptor></md:EntityDescriptor>
            """
        let signer = PEMBlock.der(Self.idp.certificatePEM, label: "CERTIFICATE")
        let parsed = try SAMLIdPMetadata.parse(Data(metadata.utf8), signer: nil, allowSHA1: false, now: Self.now)
        #expect(parsed.entityID == TestIdP.entityID && parsed.redirectURL == TestIdP.ssoURL && parsed.wantAuthnRequestsSigned)
        #expect(throws: SAMLError.self) { _ = try SAMLIdPMetadata.parse(Data(metadata.utf8), signer: signer, allowSHA1: false, now: Self.now) }
        let signed = Self.idp.signed(metadata)
        #expect(try SAMLIdPMetadata.parse(Data(signed.utf8), signer: signer, allowSHA1: false, now: Self.now).certificates.count == 1)
        let tampered = signed.replacingOccurrences(of: TestIdP.ssoURL, with: "https://evil.test/sso")
        #expect(throws: SAMLError.self) { _ = try SAMLIdPMetadata.parse(Data(tampered.utf8), signer: signer, allowSHA1: false, now: Self.now) }
    }
}

extension String {
    /// The value of the first `ID="…"` attribute.
    fileprivate var firstID: String {
        guard let start = range(of: "ID=\"") else { return "" }
        return String(self[start.upperBound...].prefix { $0 != "\"" })
    }

    /// From the first `start` to the end of the first `end` after it, both included.
    fileprivate func between(_ start: String, _ end: String) -> String {
        guard let from = range(of: start), let to = range(of: end, range: from.upperBound..<endIndex) else { return "" }
        return String(self[from.lowerBound..<to.upperBound])
    }
}
