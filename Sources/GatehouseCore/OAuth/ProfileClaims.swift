/// The standard OIDC claims (OIDC Core section 5.4) a person's identity yields for the scopes granted:
/// `profile` → name claims, `email` → email claims, `groups` → groups.
public enum ProfileClaims {
    public static func make(username: String, claims: [String: JSONValue], scopes: [String]) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        if scopes.contains("profile") {
            result["preferred_username"] = .string(username)
            for key in ["name", "given_name", "family_name", "nickname", "locale", "zoneinfo", "picture", "website"] {
                if let value = claims[key] { result[key] = value }
            }
        }
        if scopes.contains("email"), let email = claims["email"] {
            result["email"] = email
            result["email_verified"] = claims["email_verified"] ?? .bool(false)
        }
        if scopes.contains("groups"), let groups = claims["groups"] {
            result["groups"] = groups
        }
        return result
    }
}
