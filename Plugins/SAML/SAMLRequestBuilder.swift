import Foundation
import GatehousePluginKit
import GatehouseSupport
import _CryptoExtras

/// Builds the SP's `AuthnRequest` (SAML Core 3.4.1) and sends it by HTTP-Redirect (deflated in the
/// query, signed over the query string) or HTTP-POST (an enveloped XML signature) as SAML Bindings
/// sections 3.4 and 3.5 say.
struct SAMLRequestBuilder: Sendable {
    let spEntityID: String
    let acsURL: String
    let keyPEM: String?
    let certificateDER: Data?

    /// The request's XML. `id` is kept in the flow: the response must answer it (`InResponseTo`).
    func authnRequest(id: String, destination: String, now: Date, forceAuthn: Bool, nameIDFormat: String?, classRefs: [String]) -> String {
        var xml = "<samlp:AuthnRequest xmlns:samlp=\"\(SAMLNamespace.protocolNS)\" xmlns:saml=\"\(SAMLNamespace.assertion)\""
        xml += " ID=\"\(Self.escape(id))\" Version=\"2.0\" IssueInstant=\"\(SAMLTime.format(now))\" Destination=\"\(Self.escape(destination))\""
        xml += " AssertionConsumerServiceURL=\"\(Self.escape(acsURL))\" ProtocolBinding=\"\(SAMLNamespace.postBinding)\""
        if forceAuthn { xml += " ForceAuthn=\"true\"" }
        xml += "><saml:Issuer>\(Self.escape(spEntityID))</saml:Issuer>"
        xml += "<samlp:NameIDPolicy AllowCreate=\"true\"\(nameIDFormat.map { " Format=\"\(Self.escape($0))\"" } ?? "")/>"
        if !classRefs.isEmpty {
            xml += "<samlp:RequestedAuthnContext Comparison=\"exact\">"
            xml += classRefs.map { "<saml:AuthnContextClassRef>\(Self.escape($0))</saml:AuthnContextClassRef>" }.joined()
            xml += "</samlp:RequestedAuthnContext>"
        }
        return xml + "</samlp:AuthnRequest>"
    }

    /// The HTTP-Redirect URL (Bindings 3.4.4.1): the request deflated and base64'd, the relay
    /// state, and with `sign` the signature over the query string as sent.
    func redirectURL(_ request: String, to destination: String, relayState: String, sign: Bool) throws(SAMLError) -> String {
        var query = "SAMLRequest=" + Self.encode(Data(Self.deflateStored(Data(request.utf8))).base64EncodedString())
        query += "&RelayState=" + Self.encode(relayState)
        if sign {
            guard let keyPEM, let key = try? _RSA.Signing.PrivateKey(pemRepresentation: keyPEM) else {
                throw SAMLError.signature("the SP key cannot sign (an RSA key in PEM is needed)")
            }
            query += "&SigAlg=" + Self.encode(SAMLNamespace.rsaSHA256)
            guard let signature = try? key.signature(for: Data(query.utf8), padding: .insecurePKCS1v1_5) else {
                throw SAMLError.signature("the request could not be signed")
            }
            query += "&Signature=" + Self.encode(signature.rawRepresentation.base64EncodedString())
        }
        return destination + (destination.contains("?") ? "&" : "?") + query
    }

    /// The HTTP-POST form fields (Bindings 3.5.4): the request, enveloped-signed with `sign`, base64'd.
    func postFields(_ request: String, relayState: String, sign: Bool) throws(SAMLError) -> [String: String] {
        var xml = request
        if sign {
            guard let keyPEM else { throw SAMLError.signature("the SP has no key to sign with") }
            let document = try SAMLXMLDocument(parsing: Data(request.utf8))
            guard let root = document.root else { throw SAMLError.malformed("the request is empty") }
            try SAMLSignature.sign(root, in: document, privateKeyPEM: keyPEM, certificateDER: certificateDER)
            xml = document.serialized()
        }
        return ["SAMLRequest": Data(xml.utf8).base64EncodedString(), "RelayState": relayState]
    }

    /// The SP's metadata (SAML Metadata 2.4.4): the entity, where responses go (HTTP-POST), and the
    /// certificate for signing and encryption when the SP has one.
    func metadata(signRequests: Bool, wantAssertionsSigned: Bool, nameIDFormat: String?) -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<md:EntityDescriptor xmlns:md=\"\(SAMLNamespace.metadata)\" xmlns:ds=\"\(SAMLSignature.dsigNamespace)\" entityID=\"\(Self.escape(spEntityID))\">\n"
        xml += "  <md:SPSSODescriptor AuthnRequestsSigned=\"\(signRequests)\" WantAssertionsSigned=\"\(wantAssertionsSigned)\""
        xml += " protocolSupportEnumeration=\"\(SAMLNamespace.protocolNS)\">\n"
        if let certificateDER {
            let body = certificateDER.base64EncodedString()
            for use in ["signing", "encryption"] {
                xml += "    <md:KeyDescriptor use=\"\(use)\"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>\(body)</ds:X509Certificate></ds:X509Data></ds:KeyInfo>"
                if use == "encryption" {
                    for method in [
                        "http://www.w3.org/2009/xmlenc11#aes256-gcm", "http://www.w3.org/2009/xmlenc11#aes128-gcm",
                        "http://www.w3.org/2001/04/xmlenc#aes256-cbc", "http://www.w3.org/2001/04/xmlenc#aes128-cbc",
                        "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p",
                    ] {
                        xml += "<md:EncryptionMethod Algorithm=\"\(method)\"/>"
                    }
                }
                xml += "</md:KeyDescriptor>\n"
            }
        }
        for format in nameIDFormat.map({ [$0] }) ?? [SAMLNamespace.persistentFormat, SAMLNamespace.emailFormat] {
            xml += "    <md:NameIDFormat>\(Self.escape(format))</md:NameIDFormat>\n"
        }
        xml += "    <md:AssertionConsumerService Binding=\"\(SAMLNamespace.postBinding)\" Location=\"\(Self.escape(acsURL))\" index=\"0\" isDefault=\"true\"/>\n"
        xml += "  </md:SPSSODescriptor>\n</md:EntityDescriptor>\n"
        return xml
    }

    /// Text for an XML attribute or element.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Percent-encodes a query value (everything but RFC 3986's unreserved characters).
    static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// DEFLATE (RFC 1951) with stored blocks only: a valid stream every inflater reads, without a
    /// compressor. SAML requests are small; the Redirect binding only asks for DEFLATE.
    static func deflateStored(_ data: Data) -> [UInt8] {
        var output: [UInt8] = []
        let bytes = [UInt8](data)
        var offset = 0
        repeat {
            let length = min(65_535, bytes.count - offset)
            let final = offset + length == bytes.count
            output.append(final ? 1 : 0)
            output += [UInt8(length & 0xff), UInt8(length >> 8), UInt8(~length & 0xff), UInt8((~length >> 8) & 0xff)]
            output += bytes[offset..<offset + length]
            offset += length
        } while offset < bytes.count
        return output
    }
}
