import Foundation
import GatehousePluginKit

/// Turns a verified assertion into an identity: the NameID (or the attribute `subject` names) is the
/// subject, attributes become the profile and groups by `attributeMapping`, and the sign-in filters
/// (`requiredClaims`, `allowedGroups`) apply as they do for `oidc`.
struct SAMLIdentityMapper {
    let config: SAMLConfig

    /// Common attribute names of ADFS, Entra ID, Okta and SimpleSAMLphp, tried when `attributeMapping`
    /// names none.
    static let emailNames = ["email", "mail", "emailaddress", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress", "urn:oid:0.9.2342.19200300.100.1.3"]
    static let nameNames = [
        "displayName", "name", "http://schemas.microsoft.com/identity/claims/displayname", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
        "urn:oid:2.16.840.1.113730.3.1.241", "cn",
    ]
    static let usernameNames = ["uid", "username", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn", "urn:oid:0.9.2342.19200300.100.1.1"]
    static let groupNames = [
        "groups", "memberOf", "http://schemas.microsoft.com/ws/2008/06/identity/claims/groups", "http://schemas.xmlsoap.org/claims/Group", "eduPersonAffiliation",
    ]

    func identity(from assertion: SAMLAssertion, providerID: String) throws(BrokerError) -> ExternalIdentity {
        let attributes = assertion.attributes
        func first(_ configured: String?, _ fallbacks: [String]) -> String? {
            if let configured { return attributes[configured]?.first }
            return fallbacks.lazy.compactMap { attributes[$0]?.first }.first
        }
        let subject: String
        if let name = config.attributeMapping.subject {
            guard let value = attributes[name]?.first, !value.isEmpty else { throw SAMLError.malformed("the subject attribute \(name) is missing").brokerError }
            subject = value
        } else {
            // A transient NameID changes at every sign-in: as a subject it would make a new account each time.
            guard assertion.nameIDFormat != SAMLNamespace.transientFormat else {
                throw SAMLError.condition("the NameID is transient; map `subject` to an attribute or ask for a persistent NameID").brokerError
            }
            guard !assertion.nameID.isEmpty else { throw SAMLError.malformed("the NameID is empty").brokerError }
            subject = assertion.nameID
        }
        var email = first(config.attributeMapping.email, Self.emailNames)
        if email == nil, assertion.nameIDFormat == SAMLNamespace.emailFormat { email = assertion.nameID }
        for (claim, accepted) in config.requiredClaims.sorted(by: { $0.key < $1.key }) {
            guard (attributes[claim] ?? []).contains(where: accepted.contains) else {
                throw BrokerError(.accessDenied, .forbidden, "Your account may not sign in here.").because("claim_not_allowed").endingFlow()
            }
        }
        let groupsAttribute = config.attributeMapping.groups ?? Self.groupNames.first { attributes[$0] != nil }
        let upstreamGroups = groupsAttribute.flatMap { attributes[$0] }
        if !config.allowedGroups.isEmpty {
            guard (upstreamGroups ?? []).contains(where: config.allowedGroups.contains) else {
                throw BrokerError(.accessDenied, .forbidden, "Your account is not in a group that may sign in here.").because("group_not_allowed").endingFlow()
            }
        }
        var groups = upstreamGroups
        if let filter = config.groupsFilter, let regex = try? Regex(filter) { groups = groups?.filter { (try? regex.wholeMatch(in: $0)) != nil } }
        groups = groups?.map { config.groupsPrefix + $0 }

        var kept: [String: JSONValue] = [:]
        for claim in config.extraClaims {
            guard let values = attributes[claim] else { continue }
            kept[claim] = values.count == 1 ? .string(values[0]) : .array(values.map(JSONValue.string))
        }
        var claims = IdentityClaims(claims: kept)
        claims.email = email
        claims.emailVerified = email != nil && config.trustEmail
        claims.name = first(config.attributeMapping.name, Self.nameNames)
        claims.preferredUsername = first(config.attributeMapping.username, Self.usernameNames)
        claims.groups = groups
        return ExternalIdentity(
            providerID: providerID, subject: subject, username: claims.preferredUsername ?? email ?? subject, claims: claims, methods: [],
            emailTrustedForLinking: config.trustEmail && email != nil
        )
    }
}
