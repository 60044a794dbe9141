import Foundation

/// `scim:` — SCIM 2.0 provisioning (RFC 7643, 7644) at `/scim/v2`: whether it is on, and how a
/// provisioned user meets the identity that signs in (`links`). Clients and their tokens are made
/// at run time (`gatehouse scim-clients add`, `POST /admin/v1/scim-clients`).
public struct ScimConfig: Decodable, Sendable {
    /// Off: `/scim/v2` answers 404 and tokens carry no provisioned groups.
    public var enabled: Bool
    /// An identity of `provider` whose `claim` equals a provisioned user's `attribute` joins that
    /// user's account at its first sign-in.
    public var links: [Link]

    /// One way a provisioned user meets a sign-in.
    public struct Link: Decodable, Sendable, Equatable {
        /// The identity provider instance whose sign-ins are linked.
        public var provider: String
        /// The provisioned user's attribute: `userName` (any case) or `externalId`.
        public var attribute: ScimLinkAttribute
        /// The identity's side: its `subject` (the OIDC `sub`, the SAML NameID, AD's objectGUID),
        /// its `username` (the UPN), or its `email` when the provider vouches for it.
        public var claim: IdentityField
        /// The SCIM client whose users this rule links to; nil: any client's. Name it where several
        /// clients provision, so that one cannot claim the identities meant for another's users.
        public var client: String?

        enum CodingKeys: String, CodingKey { case provider, attribute, claim, client }

        public init(provider: String, attribute: ScimLinkAttribute, claim: IdentityField, client: String? = nil) {
            self.provider = provider
            self.attribute = attribute
            self.claim = claim
            self.client = client
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let path = decoder.codingPath
            provider = try container.decode(String.self, forKey: .provider)
            let attributeText = try container.decodeIfPresent(String.self, forKey: .attribute) ?? "userName"
            guard let attribute = ScimLinkAttribute(rawValue: attributeText) else {
                throw ConfigIssue(path: path + [CodingKeys.attribute], "must be userName or externalId, got '\(attributeText)'")
            }
            self.attribute = attribute
            let claimText = try container.decodeIfPresent(String.self, forKey: .claim) ?? "subject"
            guard let claim = IdentityField(rawValue: claimText) else {
                throw ConfigIssue(path: path + [CodingKeys.claim], "must be subject, username or email, got '\(claimText)'")
            }
            self.claim = claim
            client = try container.decodeIfPresent(String.self, forKey: .client)
            if let client, !Identifier.isValid(client) { throw ConfigIssue(path: path + [CodingKeys.client], Identifier.rule) }
        }
    }

    /// The side of a signed-in identity a link compares.
    public enum IdentityField: String, Sendable, Decodable {
        case subject, username, email

        /// The identity's value for this field: an email only when verified and trusted for linking,
        /// as linking by verified email demands.
        func value(of identity: ExternalIdentity) -> String? {
            switch self {
            case .subject: identity.subject
            case .username: identity.username
            case .email: identity.emailTrustedForLinking ? identity.claims.verifiedEmail?.value : nil
            }
        }
    }

    public init(enabled: Bool = false, links: [Link] = []) {
        self.enabled = enabled
        self.links = links
    }

    enum CodingKeys: String, CodingKey { case enabled, links }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? false
        links = try container.decodeIfPresent([Link].self, forKey: .links) ?? []
    }
}
