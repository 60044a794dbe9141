/// Who is administering: the name of the admin credential used (for the API), `cli:<user>`, or the
/// username of a person signed in to the admin console (with their account id). Every change an
/// admin makes is audited under this name.
public struct AdminIdentity: Sendable, Hashable {
    public var name: String
    /// The console admin's account; nil for tokens and the CLI.
    public var accountID: String?
    public init(name: String, accountID: String? = nil) {
        self.name = name
        self.accountID = accountID
    }

    /// What every audit event of an admin's change names: `admin` and, for console admins, `adminAccount`.
    public var auditDetails: [String: String] {
        var details = ["admin": name]
        if let accountID { details["adminAccount"] = accountID }
        return details
    }
}

/// The admin API's credentials: named bearer tokens, kept only as SHA-256 digests in memory and
/// compared in constant time.
public struct AdminCredentials: Sendable {
    private let digests: [(name: String, digest: String)]

    public init(tokens: [(name: String, token: String)]) {
        self.digests = tokens.map { ($0.name, SecretDigest.sha256Hex($0.token)) }
    }

    /// True when no credential is configured: the admin API is then off.
    public var isEmpty: Bool { digests.isEmpty }

    /// The admin the token belongs to, or nil. Every credential is compared, so the time taken does
    /// not depend on which one (if any) matches.
    public func authenticate(_ token: String) -> AdminIdentity? {
        let digest = SecretDigest.sha256Hex(token)
        var match: String?
        for entry in digests where SecretDigest.constantTimeEquals(entry.digest, digest) { match = entry.name }
        return match.map { AdminIdentity(name: $0) }
    }
}
