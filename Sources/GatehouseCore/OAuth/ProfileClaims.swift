/// The standard OIDC claims (OIDC Core section 5.4) a person's identity yields for the scopes granted:
/// `profile` → name claims, `email` → email claims, `groups` → groups.
public enum ProfileClaims {
    public static func make(username: String, claims: IdentityClaims, scopes: [String]) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        if scopes.contains("profile") {
            result["preferred_username"] = .string(username)
            for (claim, value) in claims.profileStrings {
                if let value { result[claim] = .string(value) }
            }
        }
        if scopes.contains("email"), let email = claims.email {
            result["email"] = .string(email)
            result["email_verified"] = .bool(claims.emailVerified)
        }
        if scopes.contains("groups"), let groups = claims.groups {
            result["groups"] = .array(groups.map(JSONValue.string))
        }
        return result
    }
}

extension IdentityClaims {
    /// These claims with what the person confirmed or typed in their own profile put over them.
    public func overlaid(with profile: AccountProfile?) -> IdentityClaims {
        guard let profile else { return self }
        var claims = self
        if let name = profile.name { claims.name = name }
        if let picture = profile.picture { claims.picture = picture }
        if let email = profile.email {
            claims.email = email.value
            claims.emailVerified = profile.emailVerified
        }
        return claims
    }
}
