import Foundation

/// What a provider vouches for about a person, typed: the common facts every provider may know
/// (email and whether it is verified, name parts, preferred username, groups) and the provider's own
/// extra claims. Stored with each identity link and read by the core as fields, never by claim key;
/// its JSON form is the flat OpenID Connect claims object (OIDC Core section 5.1), which is also how
/// providers that speak in claims (an app's API, an upstream OpenID provider) hand them over.
public struct IdentityClaims: Sendable, Hashable, Codable {
    /// The person's email address, as the provider knows it.
    public var email: String?
    /// Whether the provider proved (or is the authority for) `email`.
    public var emailVerified: Bool
    /// The full name.
    public var name: String?
    /// The given name.
    public var givenName: String?
    /// The family name.
    public var familyName: String?
    /// The name the person prefers to be called by (OIDC `preferred_username`).
    public var preferredUsername: String?
    /// The other standard profile claims (OIDC Core section 5.1), passed on with the `profile` scope.
    public var nickname: String?
    /// A URL of a picture.
    public var picture: String?
    /// A URL of a web page.
    public var website: String?
    /// The locale (`en-GB`).
    public var locale: String?
    /// The time zone (`Europe/Amsterdam`).
    public var zoneinfo: String?
    /// Nil when the provider does not know groups; empty when it knows there are none.
    public var groups: [String]?
    /// The provider's own claims, kept as they came (only those its config allows).
    public var extra: [String: JSONValue]

    /// Claims; every one optional.
    public init(
        email: String? = nil, emailVerified: Bool = false, name: String? = nil, givenName: String? = nil, familyName: String? = nil,
        preferredUsername: String? = nil, groups: [String]? = nil, extra: [String: JSONValue] = [:]
    ) {
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
        self.givenName = givenName
        self.familyName = familyName
        self.preferredUsername = preferredUsername
        self.groups = groups
        self.extra = extra
    }

    /// The address the provider vouches for: `email` when it is verified and a valid address.
    public var verifiedEmail: EmailAddress? {
        guard emailVerified, let email else { return nil }
        return EmailAddress(email)
    }

    private enum Standard: String, CodingKey, CaseIterable {
        case email, emailVerified = "email_verified", name, givenName = "given_name", familyName = "family_name"
        case preferredUsername = "preferred_username", nickname, picture, website, locale, zoneinfo, groups
    }

    /// The string claims of the `profile` scope besides `preferred_username`, by claim name.
    public var profileStrings: [(claim: String, value: String?)] {
        [
            (Standard.name.rawValue, name), (Standard.givenName.rawValue, givenName), (Standard.familyName.rawValue, familyName),
            (Standard.nickname.rawValue, nickname), (Standard.picture.rawValue, picture), (Standard.website.rawValue, website),
            (Standard.locale.rawValue, locale), (Standard.zoneinfo.rawValue, zoneinfo),
        ]
    }

    /// Reads a flat claims object: the standard claims into their fields (a value of the wrong type
    /// is dropped), everything else into `extra`.
    public init(claims: [String: JSONValue]) {
        email = claims[Standard.email.rawValue]?.stringValue
        emailVerified = claims[Standard.emailVerified.rawValue] == .bool(true)
        name = claims[Standard.name.rawValue]?.stringValue
        givenName = claims[Standard.givenName.rawValue]?.stringValue
        familyName = claims[Standard.familyName.rawValue]?.stringValue
        preferredUsername = claims[Standard.preferredUsername.rawValue]?.stringValue
        nickname = claims[Standard.nickname.rawValue]?.stringValue
        picture = claims[Standard.picture.rawValue]?.stringValue
        website = claims[Standard.website.rawValue]?.stringValue
        locale = claims[Standard.locale.rawValue]?.stringValue
        zoneinfo = claims[Standard.zoneinfo.rawValue]?.stringValue
        if case .array(let items)? = claims[Standard.groups.rawValue] { groups = items.compactMap(\.stringValue) }
        let standard = Set(Standard.allCases.map(\.rawValue))
        extra = claims.filter { !standard.contains($0.key) }
    }

    /// The flat claims object.
    public var claims: [String: JSONValue] {
        var result = extra
        if let email {
            result[Standard.email.rawValue] = .string(email)
            result[Standard.emailVerified.rawValue] = .bool(emailVerified)
        }
        for (claim, value) in profileStrings + [(Standard.preferredUsername.rawValue, preferredUsername)] {
            if let value { result[claim] = .string(value) }
        }
        if let groups { result[Standard.groups.rawValue] = .array(groups.map(JSONValue.string)) }
        return result
    }

    /// Reads the flat OpenID Connect claims object.
    public init(from decoder: any Decoder) throws {
        self.init(claims: try [String: JSONValue](from: decoder))
    }

    /// Writes the flat OpenID Connect claims object.
    public func encode(to encoder: any Encoder) throws {
        try claims.encode(to: encoder)
    }
}
