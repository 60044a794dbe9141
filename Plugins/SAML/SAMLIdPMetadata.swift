import Foundation
import GatehousePluginKit

/// What the plugin needs of an IdP's metadata (SAML Metadata, OASIS 2005): its entity id, where its
/// single sign-on service listens for each binding, whether it wants signed requests, and the
/// certificates it signs with.
struct SAMLIdPMetadata: Sendable, Equatable {
    var entityID: String
    var redirectURL: String?
    var postURL: String?
    var wantAuthnRequestsSigned: Bool
    /// The signing certificates (DER).
    var certificates: [Data]

    /// Reads an `EntityDescriptor` (or an `EntitiesDescriptor` holding exactly one IdP). A signed
    /// document is verified with `signer` (DER) when given, else with the signing certificates it
    /// lists; with `signer` given, an unsigned document is refused. `now` checks `validUntil`.
    static func parse(_ data: Data, signer: Data?, allowSHA1: Bool, now: Date) throws(SAMLError) -> SAMLIdPMetadata {
        let document: SAMLXMLDocument
        do { document = try SAMLXMLDocument(parsing: data) } catch { throw SAMLError.metadata(error.reason) }
        defer { withExtendedLifetime(document) {} }
        guard let root = document.root else { throw SAMLError.metadata("empty document") }
        let entity: SAMLXMLNode
        if root.isElement("EntityDescriptor", in: SAMLNamespace.metadata) {
            entity = root
        } else if root.isElement("EntitiesDescriptor", in: SAMLNamespace.metadata) {
            let idps = root.children("EntityDescriptor", in: SAMLNamespace.metadata).filter { !$0.children("IDPSSODescriptor", in: SAMLNamespace.metadata).isEmpty }
            guard idps.count == 1 else { throw SAMLError.metadata("the EntitiesDescriptor holds \(idps.count) identity providers; give the one to use") }
            entity = idps[0]
        } else {
            throw SAMLError.metadata("the document is not SAML metadata (EntityDescriptor)")
        }
        guard let entityID = entity.attribute("entityID"), !entityID.isEmpty else { throw SAMLError.metadata("the EntityDescriptor has no entityID") }
        let descriptors = entity.children("IDPSSODescriptor", in: SAMLNamespace.metadata).filter {
            ($0.attribute("protocolSupportEnumeration") ?? "").split(separator: " ").contains { $0 == SAMLNamespace.protocolNS }
        }
        guard descriptors.count == 1 else { throw SAMLError.metadata("the entity has no single SAML 2.0 IDPSSODescriptor") }
        let descriptor = descriptors[0]
        var certificates: [Data] = []
        for key in descriptor.children("KeyDescriptor", in: SAMLNamespace.metadata) where (key.attribute("use") ?? "signing") == "signing" {
            for keyInfo in key.children("KeyInfo", in: SAMLSignature.dsigNamespace) {
                for x509 in keyInfo.children("X509Data", in: SAMLSignature.dsigNamespace) {
                    for certificate in x509.children("X509Certificate", in: SAMLSignature.dsigNamespace) {
                        let text = (try? certificate.text())?.filter { !$0.isWhitespace } ?? ""
                        guard let der = Data(base64Encoded: text), !der.isEmpty else { throw SAMLError.metadata("an X509Certificate is not base64") }
                        certificates.append(der)
                    }
                }
            }
        }
        guard !certificates.isEmpty else { throw SAMLError.metadata("the IdP lists no signing certificate") }
        // The signature is checked before anything read from the document is used.
        let signedNode = try root.onlyChild("Signature", in: SAMLSignature.dsigNamespace) != nil ? root : entity
        let signed: Bool
        do {
            signed = try SAMLSignature.verify(signedNode, in: document, certificates: signer.map { [$0] } ?? certificates, allowSHA1: allowSHA1)
        } catch { throw SAMLError.metadata("its signature does not verify (\(error.reason))") }
        if signer != nil, !signed { throw SAMLError.metadata("it is not signed, and metadataSigningCertificate requires a signature") }
        for node in [root, entity, descriptor] {
            guard let validUntil = node.attribute("validUntil") else { continue }
            guard let date = SAMLTime.parse(validUntil) else { throw SAMLError.metadata("its validUntil '\(validUntil)' is not a time") }
            if date < now { throw SAMLError.metadata("it expired at \(validUntil) (validUntil)") }
        }
        var redirect: String?
        var post: String?
        for service in descriptor.children("SingleSignOnService", in: SAMLNamespace.metadata) {
            guard let location = service.attribute("Location") else { continue }
            switch service.attribute("Binding") {
            case SAMLNamespace.redirectBinding?: redirect = redirect ?? location
            case SAMLNamespace.postBinding?: post = post ?? location
            default: break
            }
        }
        guard redirect != nil || post != nil else { throw SAMLError.metadata("the IdP has no SingleSignOnService for HTTP-Redirect or HTTP-POST") }
        return SAMLIdPMetadata(
            entityID: entityID, redirectURL: redirect, postURL: post, wantAuthnRequestsSigned: descriptor.attribute("WantAuthnRequestsSigned") == "true",
            certificates: certificates
        )
    }
}

/// SAML's `xs:dateTime` values, always UTC.
enum SAMLTime {
    /// Parses `2026-12-07T10:00:00Z` (with or without fractional seconds).
    static func parse(_ text: String) -> Date? {
        let plain = Date.ISO8601FormatStyle(includingFractionalSeconds: false)
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return (try? plain.parse(text)) ?? (try? fractional.parse(text))
    }

    /// `2026-12-07T10:00:00Z`.
    static func format(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: false).format(date)
    }
}
