import CXMLSec
import Foundation

/// XML signatures (XML-DSig) of SAML elements, by xmlsec: verifying an IdP's enveloped signature on
/// the Response or the Assertion, and signing our own AuthnRequest (and, in tests, an IdP's answer).
///
/// What is accepted is narrow on purpose (SAML's interoperability profile): one reference, to the
/// signed element's own `ID` (`#id`, same document), the enveloped-signature and exclusive
/// canonicalisation transforms only, SHA-256/384/512 digests and RSA or ECDSA signatures (SHA-1 only
/// when configured), and the key is the IdP's certificate from metadata or config, never one the
/// signature's own `KeyInfo` brings.
enum SAMLSignature {
    static let dsigNamespace = "http://www.w3.org/2000/09/xmldsig#"

    /// Verifies the signature that is a direct child of `element`. Nil when the element carries none;
    /// `.signature` when it does not verify with any of `certificates` (DER), references anything
    /// other than this element, or uses a method not allowed.
    static func verify(_ element: SAMLXMLNode, in document: SAMLXMLDocument, certificates: [Data], allowSHA1: Bool) throws(SAMLError) -> Bool {
        guard let signature = try element.onlyChild("Signature", in: dsigNamespace) else { return false }
        guard let id = element.attribute("ID"), !id.isEmpty else { throw SAMLError.signature("the signed \(element.name) has no ID") }
        // An XML ID is an NCName: anything else (`xpointer(…)`, a quote) would be an expression to xmlsec.
        guard isNCName(id) else { throw SAMLError.signature("the ID of the signed \(element.name) is not an NCName") }
        // Signature wrapping hides a second element with the same ID for the reference to find: one only.
        guard document.elementsWithID(id) == 1 else { throw SAMLError.signature("the ID of the signed \(element.name) is not unique") }
        // What xmlsec will process is checked first: xmlsec digests every reference before it checks
        // the signature value, so a reference to anything else (an XPointer expression) is refused
        // before it costs anything.
        try checkSignedInfo(of: signature, referencing: id)
        try document.registerID(of: element)
        guard XMLSecurityLibrary.ensureInitialised() else { throw SAMLError.signature("xmlsec could not be initialised") }
        guard !certificates.isEmpty else { throw SAMLError.signature("no IdP signing certificate is known") }
        var lastFailure = "the signature does not verify with the IdP's certificate"
        for certificate in certificates {
            guard
                let key = certificate.withUnsafeBytes({ raw in
                    xmlSecOpenSSLAppKeyLoadMemory(raw.bindMemory(to: UInt8.self).baseAddress, CUnsignedInt(raw.count), xmlSecKeyDataFormatCertDer, nil, nil, nil)
                })
            else { continue }
            guard let context = xmlSecDSigCtxCreate(nil) else {
                xmlSecKeyDestroy(key)
                throw SAMLError.signature("xmlsec could not make a signature context")
            }
            defer { xmlSecDSigCtxDestroy(context) }
            context.pointee.signKey = key
            context.pointee.enabledReferenceUris = xmlSecTransformUriType(xmlSecTransformUriTypeSameDocument)
            enableTransforms(context, allowSHA1: allowSHA1)
            guard xmlSecDSigCtxVerify(context, signature.pointer) >= 0 else {
                lastFailure = "the signature uses a method or form that is not allowed"
                continue
            }
            guard context.pointee.status == xmlSecDSigStatusSucceeded else { continue }
            // The one reference must be this element: a signature over something else proves nothing here.
            let uris = withUnsafeMutablePointer(to: &context.pointee.signedInfoReferences) { list in
                (0..<xmlSecPtrListGetSize(list)).compactMap { index -> String? in
                    guard let item = xmlSecPtrListGetItem(list, index) else { return nil }
                    return item.assumingMemoryBound(to: xmlSecDSigReferenceCtx.self).pointee.uri.map { String(cString: $0) }
                }
            }
            guard uris == ["#" + id], document.elementOwningID(id) == element.pointer else {
                throw SAMLError.signature("the signature does not reference the \(element.name) it is in")
            }
            return true
        }
        throw SAMLError.signature(lastFailure)
    }

    /// `_id-1.2`: a letter or underscore, then letters, digits, `.`, `-`, `_` (the ASCII NCNames every IdP uses).
    static func isNCName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)) }
    }

    static let exclusiveC14N = "http://www.w3.org/2001/10/xml-exc-c14n#"
    static let envelopedSignature = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"

    /// The shape of a signature xmlsec may process: `SignedInfo` with exclusive canonicalisation, a
    /// signature method, and exactly one `Reference` whose URI is `#id`, with at most the enveloped
    /// and exclusive canonicalisation transforms (their inclusive-namespaces list only) and a digest.
    static func checkSignedInfo(of signature: SAMLXMLNode, referencing id: String) throws(SAMLError) {
        let ds = dsigNamespace
        guard let signedInfo = try signature.onlyChild("SignedInfo", in: ds) else { throw SAMLError.signature("the signature has no SignedInfo") }
        let parts = signedInfo.elementChildren
        guard parts.count == 3, parts[0].isElement("CanonicalizationMethod", in: ds), parts[1].isElement("SignatureMethod", in: ds),
            parts[2].isElement("Reference", in: ds)
        else { throw SAMLError.signature("the signature's SignedInfo is not one canonicalisation method, signature method and reference") }
        guard parts[0].attribute("Algorithm") == exclusiveC14N else { throw SAMLError.signature("the signature is not canonicalised exclusively") }
        let reference = parts[2]
        guard reference.attribute("URI") == "#" + id else { throw SAMLError.signature("the signature does not reference the element it is in") }
        for child in reference.elementChildren {
            switch (child.name, child.namespace) {
            case ("Transforms", ds?):
                for transform in child.elementChildren {
                    guard transform.isElement("Transform", in: ds), [envelopedSignature, exclusiveC14N].contains(transform.attribute("Algorithm") ?? ""),
                        transform.elementChildren.allSatisfy({ $0.name == "InclusiveNamespaces" && $0.namespace == exclusiveC14N })
                    else { throw SAMLError.signature("the signature uses a transform that is not allowed") }
                }
            case ("DigestMethod", ds?), ("DigestValue", ds?): break
            default: throw SAMLError.signature("the signature's reference holds \(child.name), which is not allowed")
            }
        }
    }

    /// The methods a verification accepts.
    private static func enableTransforms(_ context: xmlSecDSigCtxPtr, allowSHA1: Bool) {
        var reference = [xmlSecTransformEnvelopedGetKlass(), xmlSecTransformExclC14NGetKlass()]
        reference += [xmlSecOpenSSLTransformSha256GetKlass(), xmlSecOpenSSLTransformSha384GetKlass(), xmlSecOpenSSLTransformSha512GetKlass()]
        var signing = [xmlSecTransformExclC14NGetKlass()]
        signing += [xmlSecOpenSSLTransformRsaSha256GetKlass(), xmlSecOpenSSLTransformRsaSha384GetKlass(), xmlSecOpenSSLTransformRsaSha512GetKlass()]
        signing += [xmlSecOpenSSLTransformEcdsaSha256GetKlass(), xmlSecOpenSSLTransformEcdsaSha384GetKlass(), xmlSecOpenSSLTransformEcdsaSha512GetKlass()]
        if allowSHA1 {
            reference.append(xmlSecOpenSSLTransformSha1GetKlass())
            signing += [xmlSecOpenSSLTransformRsaSha1GetKlass(), xmlSecOpenSSLTransformEcdsaSha1GetKlass()]
        }
        for transform in reference { _ = xmlSecDSigCtxEnableReferenceTransform(context, transform) }
        for transform in signing { _ = xmlSecDSigCtxEnableSignatureTransform(context, transform) }
    }

    /// Signs `element` with an enveloped signature placed after its `Issuer` (where SAML's schema
    /// wants it): exclusive canonicalisation, RSA-SHA256 (RSA-SHA1 with `sha1`, for tests of its
    /// refusal), and the certificate in `KeyInfo`. `privateKeyPEM` is an RSA key in PEM.
    static func sign(_ element: SAMLXMLNode, in document: SAMLXMLDocument, privateKeyPEM: String, certificateDER: Data?, sha1: Bool = false) throws(SAMLError) {
        guard XMLSecurityLibrary.ensureInitialised() else { throw SAMLError.signature("xmlsec could not be initialised") }
        guard let id = element.attribute("ID") else { throw SAMLError.malformed("the element to sign has no ID") }
        try document.registerID(of: element)
        let method = sha1 ? xmlSecOpenSSLTransformRsaSha1GetKlass() : xmlSecOpenSSLTransformRsaSha256GetKlass()
        let digest = sha1 ? xmlSecOpenSSLTransformSha1GetKlass() : xmlSecOpenSSLTransformSha256GetKlass()
        guard let signature = xmlSecTmplSignatureCreate(document.doc, xmlSecTransformExclC14NGetKlass(), method, nil) else {
            throw SAMLError.signature("xmlsec could not make a signature template")
        }
        if let issuer = element.elementChildren.first(where: { $0.name == "Issuer" }) {
            xmlAddNextSibling(issuer.pointer, signature)
        } else if let first = element.elementChildren.first {
            xmlAddPrevSibling(first.pointer, signature)
        } else {
            xmlAddChild(element.pointer, signature)
        }
        guard let reference = xmlSecTmplSignatureAddReference(signature, digest, nil, "#" + id, nil),
            xmlSecTmplReferenceAddTransform(reference, xmlSecTransformEnvelopedGetKlass()) != nil,
            xmlSecTmplReferenceAddTransform(reference, xmlSecTransformExclC14NGetKlass()) != nil
        else { throw SAMLError.signature("xmlsec could not make a signature reference") }
        if certificateDER != nil, let keyInfo = xmlSecTmplSignatureEnsureKeyInfo(signature, nil) {
            _ = xmlSecTmplKeyInfoAddX509Data(keyInfo)
        }
        guard let key = loadPrivateKey(privateKeyPEM, certificateDER: certificateDER) else { throw SAMLError.signature("the signing key is not an RSA key in PEM") }
        guard let context = xmlSecDSigCtxCreate(nil) else {
            xmlSecKeyDestroy(key)
            throw SAMLError.signature("xmlsec could not make a signature context")
        }
        defer { xmlSecDSigCtxDestroy(context) }
        context.pointee.signKey = key
        guard xmlSecDSigCtxSign(context, signature) >= 0 else { throw SAMLError.signature("xmlsec could not sign") }
    }

    /// Whether xmlsec reads `pem` as a private key.
    static func isUsablePrivateKey(_ pem: String) -> Bool {
        guard XMLSecurityLibrary.ensureInitialised(), let key = loadPrivateKey(pem, certificateDER: nil) else { return false }
        xmlSecKeyDestroy(key)
        return true
    }

    /// A private key (PEM) for xmlsec, with its certificate (DER) attached when given.
    static func loadPrivateKey(_ pem: String, certificateDER: Data?) -> xmlSecKeyPtr? {
        let bytes = Array(pem.utf8)
        // An empty password, never none: OpenSSL would ask for an encrypted key's on the terminal.
        guard let key = xmlSecOpenSSLAppKeyLoadMemory(bytes, CUnsignedInt(bytes.count), xmlSecKeyDataFormatPem, "", nil, nil) else { return nil }
        if let certificateDER {
            let loaded = certificateDER.withUnsafeBytes { raw in
                xmlSecOpenSSLAppKeyCertLoadMemory(key, raw.bindMemory(to: UInt8.self).baseAddress, CUnsignedInt(raw.count), xmlSecKeyDataFormatCertDer)
            }
            if loaded < 0 {
                xmlSecKeyDestroy(key)
                return nil
            }
        }
        return key
    }
}
