import Foundation
import GatehousePluginKit

/// What a verified assertion says about the person.
struct SAMLAssertion: Sendable, Equatable {
    /// The assertion's `ID` and `Issuer`: one use each, on every node.
    var id: String
    var issuer: String
    /// The NameID and its format.
    var nameID: String
    var nameIDFormat: String
    /// Attribute values by `Name`, and by `FriendlyName` too where one is given.
    var attributes: [String: [String]]
    var authnInstant: Date?
    var classRef: String?
    /// The latest moment the assertion could still be presented: how long its ID is remembered.
    var usableUntil: Date
}

/// Checks an HTTP-POST `SAMLResponse` as the Web Browser SSO profile (SAML Profiles 4.1.4.3) and SAML
/// Core say, and reads the one assertion it carries. Everything read comes from the elements whose
/// signatures were verified, found by position (the `Response` root, its one `Assertion`), never by
/// searching the document: a wrapped or duplicated element is not looked at, and a duplicated ID is
/// refused.
struct SAMLResponseValidator {
    let config: SAMLConfig
    let idp: SAMLIdPMetadata
    let spEntityID: String
    let acsURL: String

    /// Checks `encoded` (the form field, base64) against the request `requestID` sent at `now`.
    func validate(_ encoded: String, requestID: String, now: Date) throws(SAMLError) -> SAMLAssertion {
        guard let data = Data(base64Encoded: encoded.filter { !$0.isWhitespace }) else { throw SAMLError.malformed("SAMLResponse is not base64") }
        let document = try SAMLXMLDocument(parsing: data)
        // Every SAMLXMLNode below points into the document: it lives until the last one is read.
        defer { withExtendedLifetime(document) {} }
        guard let response = document.root, response.isElement("Response", in: SAMLNamespace.protocolNS) else {
            throw SAMLError.malformed("the message is not a SAML Response")
        }
        guard response.attribute("Version") == "2.0", !(response.attribute("ID") ?? "").isEmpty else {
            throw SAMLError.malformed("the Response is not SAML 2.0 or has no ID")
        }
        guard let responseIssued = response.attribute("IssueInstant").flatMap(SAMLTime.parse) else { throw SAMLError.malformed("the Response has no IssueInstant") }
        try checkIssued(responseIssued, of: "Response", now: now)
        let responseSigned = try SAMLSignature.verify(response, in: document, certificates: idp.certificates, allowSHA1: config.allowSHA1)
        // Profiles 4.1.4.2 and Bindings 3.5.5.2: a signed response names where it was sent; any response that names it must name us.
        if let destination = response.attribute("Destination") {
            guard destination == acsURL else { throw SAMLError.condition("the Response's Destination is not this SP's ACS URL") }
        } else if responseSigned {
            throw SAMLError.condition("the signed Response has no Destination")
        }
        let encrypted = response.children("EncryptedAssertion", in: SAMLNamespace.assertion)
        if let issuer = try response.onlyChild("Issuer", in: SAMLNamespace.assertion) {
            try checkIssuer(issuer, of: "Response")
        } else if responseSigned || !encrypted.isEmpty {
            // Profiles 4.1.4.2: a signed Response, or one with an encrypted assertion, names its issuer.
            throw SAMLError.malformed("the Response has no Issuer")
        }
        try checkStatus(response)
        // Unsolicited (IdP-initiated) responses are refused: InResponseTo binds the answer to the
        // browser and flow that asked.
        guard response.attribute("InResponseTo") == requestID else { throw SAMLError.condition("the Response does not answer this sign-in's request (InResponseTo)") }

        let plain = response.children("Assertion", in: SAMLNamespace.assertion)
        guard plain.count + encrypted.count == 1 else {
            throw SAMLError.malformed("the Response carries \(plain.count + encrypted.count) assertions; exactly one is accepted")
        }
        let assertion: SAMLXMLNode
        if let wrapped = encrypted.first {
            guard let keyPEM = config.keyPEM else { throw SAMLError.malformed("the assertion is encrypted, and this SP has no key to decrypt it") }
            assertion = try SAMLDecryption.decrypt(wrapped, in: document, privateKeyPEM: keyPEM, allowCBC: responseSigned || config.allowUnsignedCBC)
        } else {
            if config.requireEncryptedAssertion { throw SAMLError.condition("the assertion is not encrypted, and encryption is required") }
            assertion = plain[0]
        }
        let assertionSigned = try SAMLSignature.verify(assertion, in: document, certificates: idp.certificates, allowSHA1: config.allowSHA1)
        let satisfied: Bool
        switch config.requireSignature {
        case .assertion: satisfied = assertionSigned
        case .response: satisfied = responseSigned
        case .either: satisfied = assertionSigned || responseSigned
        case .both: satisfied = assertionSigned && responseSigned
        }
        guard satisfied else {
            throw SAMLError.signature(
                "the \(config.requireSignature == .response ? "Response" : "assertion") is not signed as required (\(config.requireSignature.rawValue))")
        }
        return try read(assertion, requestID: requestID, now: now)
    }

    private func checkIssuer(_ issuer: SAMLXMLNode, of element: String) throws(SAMLError) {
        if let format = issuer.attribute("Format"), format != SAMLNamespace.entityFormat { throw SAMLError.condition("the \(element)'s Issuer is not an entity") }
        guard try issuer.text() == idp.entityID else { throw SAMLError.condition("the \(element)'s Issuer is not the configured IdP") }
    }

    /// An instant not in the future (beyond the skew) and within `maxAssertionAge`.
    private func checkIssued(_ issued: Date, of element: String, now: Date) throws(SAMLError) {
        let skew = config.clockSkew.timeInterval
        guard issued <= now.addingTimeInterval(skew) else { throw SAMLError.condition("the \(element) was issued in the future") }
        guard now.timeIntervalSince(issued) <= config.maxAssertionAge.timeInterval + skew else {
            throw SAMLError.condition("the \(element) is older than maxAssertionAge")
        }
    }

    private func checkStatus(_ response: SAMLXMLNode) throws(SAMLError) {
        guard let status = try response.onlyChild("Status", in: SAMLNamespace.protocolNS), let code = try status.onlyChild("StatusCode", in: SAMLNamespace.protocolNS)
        else {
            throw SAMLError.malformed("the Response has no Status")
        }
        let value = code.attribute("Value") ?? ""
        guard value == SAMLNamespace.success else {
            let detail = (try? code.onlyChild("StatusCode", in: SAMLNamespace.protocolNS))??.attribute("Value")
            throw SAMLError.status(Self.printable(detail ?? value))
        }
    }

    /// The assertion's own checks (Core 2.3-2.7, Profiles 4.1.4.2), then what it says.
    private func read(_ assertion: SAMLXMLNode, requestID: String, now: Date) throws(SAMLError) -> SAMLAssertion {
        let skew = config.clockSkew.timeInterval
        guard assertion.attribute("Version") == "2.0", let id = assertion.attribute("ID"), !id.isEmpty else {
            throw SAMLError.malformed("the Assertion has no ID or is not 2.0")
        }
        guard let issuer = try assertion.onlyChild("Issuer", in: SAMLNamespace.assertion) else { throw SAMLError.malformed("the Assertion has no Issuer") }
        try checkIssuer(issuer, of: "Assertion")
        guard let issued = assertion.attribute("IssueInstant").flatMap(SAMLTime.parse) else { throw SAMLError.malformed("the Assertion has no IssueInstant") }
        try checkIssued(issued, of: "Assertion", now: now)

        // Subject: the NameID, and a bearer confirmation for this SP, this request, still valid.
        guard let subject = try assertion.onlyChild("Subject", in: SAMLNamespace.assertion) else { throw SAMLError.malformed("the Assertion has no Subject") }
        if !subject.children("EncryptedID", in: SAMLNamespace.assertion).isEmpty { throw SAMLError.malformed("an encrypted NameID is not supported") }
        guard let nameIDNode = try subject.onlyChild("NameID", in: SAMLNamespace.assertion) else { throw SAMLError.malformed("the Subject has no NameID") }
        let nameID = try nameIDNode.text().trimmingCharacters(in: .whitespacesAndNewlines)
        let format = nameIDNode.attribute("Format") ?? SAMLNamespace.unspecifiedFormat
        var confirmedUntil: Date?
        for confirmation in subject.children("SubjectConfirmation", in: SAMLNamespace.assertion) where confirmation.attribute("Method") == SAMLNamespace.bearer {
            guard let data = try confirmation.onlyChild("SubjectConfirmationData", in: SAMLNamespace.assertion),
                data.attribute("Recipient") == acsURL, data.attribute("InResponseTo") == requestID,
                let notOnOrAfter = data.attribute("NotOnOrAfter").flatMap(SAMLTime.parse), now < notOnOrAfter.addingTimeInterval(skew)
            else { continue }
            if let notBefore = data.attribute("NotBefore") {
                guard let date = SAMLTime.parse(notBefore), now.addingTimeInterval(skew) >= date else { continue }
            }
            confirmedUntil = notOnOrAfter
            break
        }
        guard confirmedUntil != nil else {
            throw SAMLError.condition("no bearer SubjectConfirmation names this SP's ACS URL and request, unexpired")
        }

        // Conditions: the time window, and an audience restriction naming us (each one present must).
        guard let conditions = try assertion.onlyChild("Conditions", in: SAMLNamespace.assertion) else { throw SAMLError.malformed("the Assertion has no Conditions") }
        if let notBefore = conditions.attribute("NotBefore") {
            guard let date = SAMLTime.parse(notBefore), now.addingTimeInterval(skew) >= date else {
                throw SAMLError.condition("the Assertion is not valid yet (NotBefore)")
            }
        }
        if let notOnOrAfter = conditions.attribute("NotOnOrAfter") {
            guard let date = SAMLTime.parse(notOnOrAfter), now < date.addingTimeInterval(skew) else {
                throw SAMLError.condition("the Assertion has expired (NotOnOrAfter)")
            }
        }
        // Core 2.5.1: a condition the SP does not understand makes the assertion Indeterminate.
        for condition in conditions.elementChildren
        where !(condition.namespace == SAMLNamespace.assertion && ["AudienceRestriction", "OneTimeUse", "ProxyRestriction"].contains(condition.name)) {
            throw SAMLError.condition("the Assertion carries a condition this SP does not understand (\(condition.name))")
        }
        let restrictions = conditions.children("AudienceRestriction", in: SAMLNamespace.assertion)
        guard !restrictions.isEmpty else { throw SAMLError.condition("the Assertion has no AudienceRestriction") }
        for restriction in restrictions {
            let audiences = restriction.children("Audience", in: SAMLNamespace.assertion).compactMap { try? $0.text().trimmingCharacters(in: .whitespacesAndNewlines) }
            guard audiences.contains(spEntityID) else { throw SAMLError.condition("the Assertion is meant for another audience") }
        }

        // The authentication statement: when, and how.
        let statements = assertion.children("AuthnStatement", in: SAMLNamespace.assertion)
        guard let statement = statements.first else { throw SAMLError.malformed("the Assertion has no AuthnStatement") }
        let authnInstant = statement.attribute("AuthnInstant").flatMap(SAMLTime.parse).map { min($0, now) }
        let classRef = try statement.onlyChild("AuthnContext", in: SAMLNamespace.assertion)?.onlyChild("AuthnContextClassRef", in: SAMLNamespace.assertion)?.text()
        if !config.authnContextClassRefs.isEmpty {
            guard let classRef, config.authnContextClassRefs.contains(classRef) else {
                throw SAMLError.condition("the IdP did not authenticate the person with an asked AuthnContextClassRef")
            }
        }

        var attributes: [String: [String]] = [:]
        var friendly: [String: [String]] = [:]
        for statement in assertion.children("AttributeStatement", in: SAMLNamespace.assertion) {
            if !statement.children("EncryptedAttribute", in: SAMLNamespace.assertion).isEmpty { throw SAMLError.malformed("encrypted attributes are not supported") }
            for attribute in statement.children("Attribute", in: SAMLNamespace.assertion) {
                guard let name = attribute.attribute("Name"), !name.isEmpty else { continue }
                // A value that is not text (an eduPersonTargetedID's NameID) is left out, not fatal.
                let values = attribute.children("AttributeValue", in: SAMLNamespace.assertion).compactMap { try? $0.text() }
                attributes[name, default: []] += values
                if let alias = attribute.attribute("FriendlyName"), !alias.isEmpty, alias != name { friendly[alias, default: []] += values }
            }
        }
        // A friendly name never adds to (or stands in for) an attribute of that Name.
        for (alias, values) in friendly where attributes[alias] == nil { attributes[alias] = values }
        return SAMLAssertion(
            id: id, issuer: idp.entityID, nameID: nameID, nameIDFormat: format, attributes: attributes, authnInstant: authnInstant, classRef: classRef,
            // Remembered as long as the checks above could still pass: acceptance ends at the issue
            // instant plus maxAssertionAge (and the skew), whatever far-off time the IdP wrote.
            usableUntil: issued.addingTimeInterval(config.maxAssertionAge.timeInterval + skew)
        )
    }

    /// An IdP's status code for the log: its last URN segment, printable characters only.
    static func printable(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0.value > 0x20 && $0.value < 0x7f }.map(Character.init).prefix(120))
    }
}
