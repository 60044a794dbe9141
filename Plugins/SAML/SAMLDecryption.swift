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
    static let digestMethods: Set = [
        "http://www.w3.org/2000/09/xmldsig#sha1", "http://www.w3.org/2001/04/xmlenc#sha256", "http://www.w3.org/2001/04/xmldsig-more#sha384",
        "http://www.w3.org/2001/04/xmlenc#sha512",
    ]

    /// Replaces the `EncryptedData` inside `encryptedAssertion` with what it decrypts to, and answers
    /// the `Assertion` that results.
    static func decrypt(_ encryptedAssertion: SAMLXMLNode, in document: SAMLXMLDocument, privateKeyPEM: String) throws(SAMLError) -> SAMLXMLNode {
        guard let data = try encryptedAssertion.onlyChild("EncryptedData", in: encryptionNamespace) else {
            throw SAMLError.malformed("the EncryptedAssertion has no EncryptedData")
        }
        // The methods are read before xmlsec runs: a refused one never reaches a key.
        func check(_ node: SAMLXMLNode) throws(SAMLError) {
            for child in node.elementChildren {
                if child.name == "EncryptionMethod", child.namespace == encryptionNamespace {
                    let method = child.attribute("Algorithm") ?? ""
                    let allowed = child.parent?.name == "EncryptedKey" ? keyMethods : dataMethods
                    guard allowed.contains(method) else { throw SAMLError.malformed("the encryption method \(method) is not accepted") }
                }
                if child.name == "DigestMethod", !digestMethods.contains(child.attribute("Algorithm") ?? "") {
                    throw SAMLError.malformed("the key transport digest is not accepted")
                }
                if child.name == "RetrievalMethod" || child.name == "AgreementMethod" {
                    throw SAMLError.malformed("the encrypted assertion's \(child.name) is not supported")
                }
                try check(child)
            }
        }
        try check(encryptedAssertion)
        guard data.children("EncryptionMethod", in: encryptionNamespace).count == 1 else {
            throw SAMLError.malformed("the EncryptedData names no encryption method")
        }
        // Some IdPs (Shibboleth) put the EncryptedKey beside the EncryptedData rather than in its
        // KeyInfo: it moves inside, where xmlsec looks for it.
        let siblingKeys = encryptedAssertion.children("EncryptedKey", in: encryptionNamespace)
        if !siblingKeys.isEmpty {
            guard siblingKeys.count == 1 else { throw SAMLError.malformed("the EncryptedAssertion has several EncryptedKey elements") }
            let keyInfo: xmlNodePtr
            if let existing = try data.onlyChild("KeyInfo", in: SAMLSignature.dsigNamespace) {
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
