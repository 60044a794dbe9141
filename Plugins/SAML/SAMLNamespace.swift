/// The SAML 2.0 names the plugin reads and writes (SAML Core and Bindings, OASIS 2005).
enum SAMLNamespace {
    static let protocolNS = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let assertion = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let metadata = "urn:oasis:names:tc:SAML:2.0:metadata"

    static let redirectBinding = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
    static let postBinding = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"

    static let success = "urn:oasis:names:tc:SAML:2.0:status:Success"
    static let bearer = "urn:oasis:names:tc:SAML:2.0:cm:bearer"

    static let persistentFormat = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"
    static let transientFormat = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient"
    static let emailFormat = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
    static let unspecifiedFormat = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"
    static let entityFormat = "urn:oasis:names:tc:SAML:2.0:nameid-format:entity"

    static let rsaSHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
}
