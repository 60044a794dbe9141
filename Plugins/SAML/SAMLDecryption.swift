import CXMLSec
import Foundation

/// Decrypts an `EncryptedAssertion` (XML Encryption) with our SP private key, by xmlsec. Only the
/// methods SAML IdPs use and that stand today: the content key wrapped with RSA-OAEP, the assertion
/// under AES-GCM or AES-CBC. RSA PKCS#1 v1.5 key transport (Bleichenbacher's oracle) is refused
/// before anything is decrypted.
enum SAMLDecryption {
    static let encryptionNamespace = "http://www.w3.org/2001/04/xmlenc#"

    /// The content encryption methods accepted.
    static let dataMethods: Set = [
        "http://www.w3.org/2009/xmlenc11#aes128-gcm", "http://www.w3.org/2009/xmlenc11#aes192-gcm", "http://www.w3.org/2009/xmlenc11#aes256-gcm",
        "http://www.w3.org/2001/04/xmlenc#aes128-cbc", "http://www.w3.org/2001/04/xmlenc#aes192-cbc", "http://www.w3.org/2001/04/xmlenc#aes256-cbc",
    ]
    /// The key transport methods accepted.
    static let keyMethods: Set = ["http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"]
    /// Digests an OAEP key transport may name.
    /// The OAEP digest: xmlsec 1.2's `rsa-oaep-mgf1p` takes SHA-1 only (as the algorithm's name says).
    static let digestMethods: Set = ["http://www.w3.org/2000/09/xmldsig#sha1"]

    /// The one `EncryptionMethod` of `element` (first child), its algorithm in `allowed`, and only a
    /// digest, key size or OAEP parameters inside it.
    static func checkedMethod(of element: SAMLXMLNode, allowed: Set<String>) throws(SAMLError) -> String {
        let methods = element.children("EncryptionMethod", in: encryptionNamespace)
        guard methods.count == 1, element.elementChildren.first?.pointer == methods[0].pointer else {
            throw SAMLError.malformed("the \(element.name) names no single encryption method")
        }
        let method = methods[0].attribute("Algorithm") ?? ""
        guard allowed.contains(method) else { throw SAMLError.malformed("the encryption method \(method) is not accepted") }
        for child in methods[0].elementChildren {
            switch (child.name, child.namespace) {
            case ("DigestMethod", SAMLSignature.dsigNamespace?):
                guard digestMethods.contains(child.attribute("Algorithm") ?? "") else { throw SAMLError.malformed("the key transport digest is not accepted") }
            case ("OAEPparams", encryptionNamespace?): break
            case ("KeySize", encryptionNamespace?) where !keyMethods.contains(method): break
            default: throw SAMLError.malformed("the encryption method holds \(child.name), which is not accepted")
            }
        }
        return method
    }

    /// An EncryptedKey's back-link to what it encrypts (OpenSAML adds it): xmlsec ignores it, and it is
    /// taken out.
    static func isReferenceList(_ node: SAMLXMLNode) -> Bool {
        node.isElement("ReferenceList", in: encryptionNamespace)
            && node.elementChildren.allSatisfy { $0.isElement("DataReference", in: encryptionNamespace) || $0.isElement("KeyReference", in: encryptionNamespace) }
    }

    /// The parts of an EncryptedData or EncryptedKey the plugin accepts, in their namespaces.
    static func isEncryptedTypePart(_ node: SAMLXMLNode) -> Bool {
        node.isElement("EncryptionMethod", in: encryptionNamespace) || node.isElement("KeyInfo", in: SAMLSignature.dsigNamespace)
            || node.isElement("CipherData", in: encryptionNamespace)
    }

    /// `CipherData` holding one inline `CipherValue` (never a `CipherReference`).
    static func checkCipherData(of element: SAMLXMLNode) throws(SAMLError) {
        let cipherData = element.children("CipherData", in: encryptionNamespace)
        guard cipherData.count == 1, cipherData[0].elementChildren.count == 1,
            cipherData[0].elementChildren[0].isElement("CipherValue", in: encryptionNamespace)
        else { throw SAMLError.malformed("the \(element.name)'s cipher data is not one inline CipherValue") }
    }

    static var gcmContentTransforms: [xmlSecTransformId] {
        [xmlSecOpenSSLTransformAes128GcmGetKlass(), xmlSecOpenSSLTransformAes192GcmGetKlass(), xmlSecOpenSSLTransformAes256GcmGetKlass()]
    }
    static var allContentTransforms: [xmlSecTransformId] {
        gcmContentTransforms + [xmlSecOpenSSLTransformAes128CbcGetKlass(), xmlSecOpenSSLTransformAes192CbcGetKlass(), xmlSecOpenSSLTransformAes256CbcGetKlass()]
    }

    /// Lets a transform context run only `transforms` (as EncryptionMethods; xmlsec adds base64
    /// decoding itself), on no URI.
    static func restrict(_ context: inout xmlSecTransformCtx, to transforms: [xmlSecTransformId]) -> Bool {
        context.enabledUris = xmlSecTransformUriType(xmlSecTransformUriTypeNone)
        return withUnsafeMutablePointer(to: &context.enabledTransforms) { list in
            transforms.allSatisfy { xmlSecPtrListAdd(list, UnsafeMutableRawPointer(mutating: $0)) >= 0 }
        }
    }

    /// Replaces the `EncryptedData` inside `encryptedAssertion` with what it decrypts to, and answers
    /// the `Assertion` that results.
    /// `allowCBC`: AES-CBC is accepted only when a verified signature covers the ciphertext (the
    /// Response's): unsigned CBC ciphertext can be altered and replayed as a padding oracle.
    static func decrypt(_ encryptedAssertion: SAMLXMLNode, in document: SAMLXMLDocument, privateKeyPEM: String, allowCBC: Bool) throws(SAMLError) -> SAMLXMLNode {
        guard let data = try encryptedAssertion.onlyChild("EncryptedData", in: encryptionNamespace) else {
            throw SAMLError.malformed("the EncryptedAssertion has no EncryptedData")
        }
        // The shape is checked before xmlsec runs, exactly: one EncryptedData with its method, a
        // KeyInfo holding one EncryptedKey (RSA-OAEP), and inline cipher values. Nothing else — no
        // CipherReference (xmlsec would fetch its URI), no transforms, no key carried in the clear
        // (KeyValue), no RetrievalMethod — ever reaches xmlsec or a key.
        guard encryptedAssertion.elementChildren.allSatisfy({ $0.pointer == data.pointer || $0.isElement("EncryptedKey", in: encryptionNamespace) }) else {
            throw SAMLError.malformed("the EncryptedAssertion holds something besides EncryptedData and EncryptedKey")
        }
        let siblingKeys = encryptedAssertion.children("EncryptedKey", in: encryptionNamespace)
        guard siblingKeys.count <= 1 else { throw SAMLError.malformed("the EncryptedAssertion has several EncryptedKey elements") }
        let method = try checkedMethod(of: data, allowed: dataMethods)
        guard allowCBC || method.hasSuffix("-gcm") else {
            throw SAMLError.malformed(
                "AES-CBC is accepted only in a signed Response: have the IdP sign the Response, encrypt with AES-GCM, or set allowUnsignedCBC")
        }
        let dataChildren = data.elementChildren
        let keyInfos = dataChildren.filter { $0.isElement("KeyInfo", in: SAMLSignature.dsigNamespace) }
        guard dataChildren.allSatisfy(isEncryptedTypePart), keyInfos.count <= 1 else {
            throw SAMLError.malformed("the EncryptedData holds an element that is not accepted")
        }
        try checkCipherData(of: data)
        var keys = siblingKeys
        if let keyInfo = keyInfos.first {
            // Shibboleth points at the EncryptedKey beside the EncryptedData with a RetrievalMethod:
            // accepted only then, and taken out (the key moves in below; xmlsec never resolves a URI).
            let pointers = keyInfo.elementChildren.filter {
                $0.isElement("RetrievalMethod", in: SAMLSignature.dsigNamespace) && $0.attribute("Type") == encryptionNamespace + "EncryptedKey"
                    && $0.elementChildren.isEmpty && siblingKeys.count == 1 && siblingKeys[0].attribute("Id").map { "#" + $0 } != nil
                    && $0.attribute("URI") == siblingKeys[0].attribute("Id").map { "#" + $0 }
            }
            guard keyInfo.elementChildren.allSatisfy({ $0.isElement("EncryptedKey", in: encryptionNamespace) || pointers.map(\.pointer).contains($0.pointer) })
            else {
                throw SAMLError.malformed("the EncryptedData's KeyInfo holds something besides an EncryptedKey")
            }
            for pointer in pointers {
                xmlUnlinkNode(pointer.pointer)
                xmlFreeNode(pointer.pointer)
            }
            keys += keyInfo.elementChildren
        }
        guard keys.count == 1 else { throw SAMLError.malformed("the assertion's key comes in \(keys.count) EncryptedKey elements; one is accepted") }
        let key = keys[0]
        guard key.elementChildren.allSatisfy({ isEncryptedTypePart($0) || isReferenceList($0) }) else {
            throw SAMLError.malformed("the EncryptedKey holds an element that is not accepted")
        }
        for list in key.elementChildren where isReferenceList(list) {
            xmlUnlinkNode(list.pointer)
            xmlFreeNode(list.pointer)
        }
        _ = try checkedMethod(of: key, allowed: keyMethods)
        try checkCipherData(of: key)
        // The EncryptedKey's own KeyInfo names our certificate at most: the key is ours anyway.
        for keyInfo in key.children("KeyInfo", in: SAMLSignature.dsigNamespace) {
            xmlUnlinkNode(keyInfo.pointer)
            xmlFreeNode(keyInfo.pointer)
        }
        // Some IdPs (Shibboleth) put the EncryptedKey beside the EncryptedData rather than in its
        // KeyInfo: it moves inside, where xmlsec looks for it.
        if !siblingKeys.isEmpty {
            let keyInfo: xmlNodePtr
            if let existing = keyInfos.first {
                keyInfo = existing.pointer
            } else {
                guard let made = xmlSecAddChild(data.pointer, "KeyInfo", SAMLSignature.dsigNamespace) else {
                    throw SAMLError.malformed("the EncryptedData cannot take its key")
                }
                keyInfo = made
            }
            // KeyInfo comes right after EncryptionMethod; a KeyInfo added at the end is moved there.
            if let method = data.children("EncryptionMethod", in: encryptionNamespace).first, method.pointer.pointee.next != keyInfo {
                xmlUnlinkNode(keyInfo)
                xmlAddNextSibling(method.pointer, keyInfo)
            }
            xmlUnlinkNode(siblingKeys[0].pointer)
            xmlAddChild(keyInfo, siblingKeys[0].pointer)
        }
        guard XMLSecurityLibrary.ensureInitialised(), let manager = xmlSecKeysMngrCreate() else { throw SAMLError.malformed("xmlsec could not be initialised") }
        defer { xmlSecKeysMngrDestroy(manager) }
        guard xmlSecOpenSSLAppDefaultKeysMngrInit(manager) >= 0 else { throw SAMLError.malformed("xmlsec could not make a key manager") }
        guard let key = SAMLSignature.loadPrivateKey(privateKeyPEM, certificateDER: nil) else {
            throw SAMLError.malformed("the SP decryption key is not a private key in PEM")
        }
        guard xmlSecOpenSSLAppDefaultKeysMngrAdoptKey(manager, key) >= 0 else {
            xmlSecKeyDestroy(key)
            throw SAMLError.malformed("xmlsec could not take the SP key")
        }
        guard let context = xmlSecEncCtxCreate(manager) else { throw SAMLError.malformed("xmlsec could not make a decryption context") }
        defer { xmlSecEncCtxDestroy(context) }
        // The only key the KeyInfo may bring is the EncryptedKey.
        let added = withUnsafeMutablePointer(to: &context.pointee.keyInfoReadCtx.enabledKeyData) { list in
            xmlSecPtrListAdd(list, UnsafeMutableRawPointer(mutating: xmlSecKeyDataEncryptedKeyGetKlass()))
        }
        guard added >= 0 else { throw SAMLError.malformed("xmlsec could not restrict the key data") }
        // xmlsec enforces the methods too: AES for the assertion, RSA-OAEP for its key, in a key
        // context made here (xmlsec reuses it) that dereferences nothing either.
        guard restrict(&context.pointee.transformCtx, to: allowCBC ? allContentTransforms : gcmContentTransforms),
            xmlSecKeyInfoCtxCreateEncCtx(&context.pointee.keyInfoReadCtx) >= 0, let keyContext = context.pointee.keyInfoReadCtx.encCtx,
            restrict(&keyContext.pointee.transformCtx, to: [xmlSecOpenSSLTransformRsaOaepGetKlass()])
        else { throw SAMLError.malformed("xmlsec could not restrict the decryption methods") }
        // The EncryptedKey decrypts with the SP key from the manager: no key inside it may be read.
        keyContext.pointee.keyInfoReadCtx.maxEncryptedKeyLevel = 0
        guard xmlSecEncCtxDecrypt(context, data.pointer) >= 0, context.pointee.resultReplaced != 0 else {
            throw SAMLError.malformed("the assertion does not decrypt with the SP's key")
        }
        let assertions = encryptedAssertion.children("Assertion", in: SAMLNamespace.assertion)
        guard assertions.count == 1, encryptedAssertion.elementChildren.count == 1 else {
            throw SAMLError.malformed("the EncryptedAssertion does not hold exactly one Assertion")
        }
        return assertions[0]
    }
}
