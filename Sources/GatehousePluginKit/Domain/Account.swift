import Foundation

/// A person (or device owner) known to the broker. Identities from providers link to it; tokens name it
/// by `id` in their `sub`.
public struct Account: Sendable, Hashable, Codable {
    /// The account's id, made by the broker (the tokens' `sub`).
    public var id: String
    /// The name the account signs in with, from the identity that created it.
    public var username: String
    /// When it was created.
    public var createdAt: Date
    /// Created with a test registration key (for integration tests of an app), not by a real person.
    public var isTest: Bool
    /// The profile the person confirmed (or edited) at their first sign-in, where the app's policy
    /// asks for that (`confirmProfile`); it takes precedence over what providers say.
    public var profile: AccountProfile?
    /// True from the creation of an account whose app asks for profile confirmation until the person
    /// confirmed it: such an account gets no tokens (`confirmation_required`).
    public var profilePending: Bool
    /// When an administrator (or a provisioning client) disabled the account: it signs in nowhere and
    /// renews nothing until enabled again. The broker's: plugins never see a disabled account in a flow.
    package var disabledAt: Date?
    /// Who disabled it: `admin`, or `scim:<client>` (a SCIM client lifts only its own disables).
    package var disabledBy: String?

    /// An account.
    public init(id: String, username: String, createdAt: Date, isTest: Bool = false, profile: AccountProfile? = nil, profilePending: Bool = false) {
        self.id = id
        self.username = username
        self.createdAt = createdAt
        self.isTest = isTest
        self.profile = profile
        self.profilePending = profilePending
    }
}

/// A person's own view of their profile: what they confirmed or typed, in place of a provider's claims.
public struct AccountProfile: Sendable, Hashable, Codable {
    /// The name the person goes by.
    public var name: String?
    /// Their email address.
    public var email: EmailAddress?
    /// Whether `email` was proven (vouched for by a provider, or by an emailed code).
    public var emailVerified: Bool
    /// A URL of their picture.
    public var picture: String?

    /// A profile.
    public init(name: String? = nil, email: EmailAddress? = nil, emailVerified: Bool = false, picture: String? = nil) {
        self.name = name
        self.email = email
        self.emailVerified = emailVerified
        self.picture = picture
    }

    /// The profile a provider's claims make.
    public init(claims: IdentityClaims) {
        self.init(name: claims.name, email: claims.email.flatMap(EmailAddress.init), emailVerified: claims.emailVerified, picture: claims.picture)
    }

    /// The profile as a challenge and the registration state show it.
    public var json: JSONValue {
        .object([
            "name": name.map(JSONValue.string) ?? .null, "email": email.map { .string($0.value) } ?? .null, "emailVerified": .bool(emailVerified),
            "picture": picture.map(JSONValue.string) ?? .null,
        ])
    }
}

/// The link between an identity at one provider instance and an account: (provider, subject) is unique.
public struct IdentityLink: Sendable, Hashable, Codable {
    /// The provider instance that vouched for the identity.
    public var providerID: String
    /// The subject, stable at that provider.
    public var subject: String
    /// The account it belongs to.
    public var accountID: String
    /// What the provider vouched for at the last sign-in.
    public var claims: IdentityClaims
    /// When it was linked.
    public var createdAt: Date
    /// When it last signed in.
    public var lastSignInAt: Date

    /// A link as the store keeps it.
    public init(providerID: String, subject: String, accountID: String, claims: IdentityClaims, createdAt: Date, lastSignInAt: Date) {
        self.providerID = providerID
        self.subject = subject
        self.accountID = accountID
        self.claims = claims
        self.createdAt = createdAt
        self.lastSignInAt = lastSignInAt
    }
}

/// A verified identity as an identity provider reports it: which provider instance, the subject that
/// is stable at that provider, what it vouches for (typed), and how the person proved it.
public struct ExternalIdentity: Sendable, Hashable, Codable {
    /// The provider instance that vouches for it (the engine sets it to the one that ran).
    public var providerID: String
    /// The subject, stable at that provider.
    public var subject: String
    /// The name the person signs in with; becomes the account's username when the account is created.
    public var username: String
    /// What the provider vouches for, typed.
    public var claims: IdentityClaims
    /// The authentication methods the provider used (`amr`, RFC 8176: `pwd`, `otp`, `kba`...).
    public var methods: [String]
    /// A test identity (made with a test registration key, not by a real person): its account is a
    /// test account, and an app's required second factor is skipped.
    public var isTest: Bool
    /// Whether the provider's `email_verified` may link this identity, at its first sign-in, to an
    /// existing account with the same verified address (where the app's policy allows that): only a
    /// provider configured to be trusted with addresses says so, never one told to skip the check.
    public var emailTrustedForLinking: Bool
    /// A sign-in key the provider verified and wants registered (a device registering): the engine
    /// stores it with the device once it knows the account.
    public var newSignInKey: NewSignInKey?
    /// The registered sign-in key that proved this identity: tokens name it (`device_key`), so that
    /// removing its device revokes them.
    public var signInKeyID: String?
    /// When the person really authenticated, when the provider knows it and it is earlier than now
    /// (an upstream's `auth_time`): the tokens' `auth_time` and the session's. Nil: just now.
    public var authTime: Date?

    /// An identity; `providerID` is the instance's id.
    public init(
        providerID: String, subject: String, username: String, claims: IdentityClaims = IdentityClaims(), methods: [String] = [], isTest: Bool = false,
        emailTrustedForLinking: Bool = false
    ) {
        self.providerID = providerID
        self.subject = subject
        self.username = username
        self.claims = claims
        self.methods = methods
        self.isTest = isTest
        self.emailTrustedForLinking = emailTrustedForLinking
    }

    enum CodingKeys: String, CodingKey { case providerID, subject, username, claims, methods, isTest, emailTrustedForLinking, newSignInKey, signInKeyID, authTime }

    /// Flows stored before `methods` and `isTest` existed (waiting at a second factor across an
    /// upgrade) still read: they carried neither.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        providerID = try container.decode(String.self, forKey: .providerID)
        subject = try container.decode(String.self, forKey: .subject)
        username = try container.decode(String.self, forKey: .username)
        claims = try container.decodeIfPresent(IdentityClaims.self, forKey: .claims) ?? IdentityClaims()
        methods = try container.decodeIfPresent([String].self, forKey: .methods) ?? []
        isTest = try container.decodeIfPresent(Bool.self, forKey: .isTest) ?? false
        emailTrustedForLinking = try container.decodeIfPresent(Bool.self, forKey: .emailTrustedForLinking) ?? false
        newSignInKey = try container.decodeIfPresent(NewSignInKey.self, forKey: .newSignInKey)
        signInKeyID = try container.decodeIfPresent(String.self, forKey: .signInKeyID)
        authTime = try container.decodeIfPresent(Date.self, forKey: .authTime)
    }
}
