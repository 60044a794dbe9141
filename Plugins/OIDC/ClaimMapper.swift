import Foundation
import GatehousePluginKit

/// Turns the upstream's verified claims into an identity by the configured claim mapping, and applies
/// the sign-in filters (allowed domains, required claims, allowed groups).
struct ClaimMapper: Sendable {
    let config: OIDCConfig

    /// The standard profile claims passed on as they are.
    static let profileClaims = ["given_name", "family_name", "nickname", "picture", "website", "locale", "zoneinfo"]
    /// The `amr` values of RFC 8176 section 2; others an upstream sends are dropped.
    static let registeredMethods: Set = [
        "face", "fpt", "geo", "hwk", "iris", "kba", "mca", "mfa", "otp", "pin", "pwd", "rba", "retina", "sc", "sms", "swk", "tel", "user", "vbm", "wia",
    ]

    func identity(from claims: [String: JSONValue], providerID: String) throws(BrokerError) -> ExternalIdentity {
        let mapping = config.claimMapping
        guard let subject = Self.text(claims[mapping.subject]), !subject.isEmpty else { throw OIDCError.invalidIDToken("missing_subject_claim") }
        let email = claims[mapping.email]?.stringValue
        let vouched = claims[mapping.emailVerified] == .bool(true) || claims[mapping.emailVerified] == .string("true")
        let emailVerified = email != nil && (vouched || config.insecureSkipEmailVerified)

        if !config.allowedDomains.isEmpty {
            guard emailVerified, let email, let domain = email.split(separator: "@").last.map({ $0.lowercased() }), email.contains("@"),
                config.allowedDomains.contains(domain)
            else { throw OIDCError.denied("domain_not_allowed", "Your account's email domain may not sign in here.") }
        }
        for (claim, accepted) in config.requiredClaims.sorted(by: { $0.key < $1.key }) {
            guard Self.texts(claims[claim]).contains(where: accepted.contains) else {
                throw OIDCError.denied("claim_not_allowed", "Your account may not sign in here.")
            }
        }
        let upstreamGroups: [String]? = claims[mapping.groups] == nil ? nil : Self.texts(claims[mapping.groups])
        if !config.allowedGroups.isEmpty {
            guard (upstreamGroups ?? []).contains(where: config.allowedGroups.contains) else {
                throw OIDCError.denied("group_not_allowed", "Your account is not in a group that may sign in here.")
            }
        }
        var groups = upstreamGroups
        if let filter = config.groupsFilter, let regex = try? Regex(filter) {
            groups = groups?.filter { (try? regex.wholeMatch(in: $0)) != nil }
        }
        groups = groups?.map { config.groupsPrefix + $0 }

        var kept: [String: JSONValue] = [:]
        for claim in Self.profileClaims + config.extraClaims where !IDTokenVerifier.tokenClaims.contains(claim) {
            if let value = claims[claim] { kept[claim] = value }
        }
        var identityClaims = IdentityClaims(claims: kept)
        identityClaims.email = email
        identityClaims.emailVerified = emailVerified
        identityClaims.name = claims[mapping.name]?.stringValue
        identityClaims.preferredUsername = claims[mapping.username]?.stringValue
        identityClaims.groups = groups

        var methods: [String] = []
        if case .array(let values)? = claims["amr"] {
            methods = values.compactMap(\.stringValue).filter(Self.registeredMethods.contains)
        }
        return ExternalIdentity(
            providerID: providerID, subject: subject, username: identityClaims.preferredUsername ?? email ?? subject, claims: identityClaims,
            methods: methods, emailTrustedForLinking: config.trustEmail && vouched && email != nil
        )
    }

    /// A claim as text: a string, or a number (some upstreams send numeric ids).
    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .number(let number)? where number.rounded() == number && abs(number) < 1e15: String(Int64(number))
        default: nil
        }
    }

    /// A claim as a list of texts: an array of strings, or one string.
    static func texts(_ value: JSONValue?) -> [String] {
        switch value {
        case .array(let values)?: values.compactMap { text($0) }
        default: text(value).map { [$0] } ?? []
        }
    }
}
