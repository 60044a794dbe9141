import GatehousePluginKit

/// The directory conversations of one provider, each run on one pooled connection: search-then-bind
/// sign-in, group lookup, rechecks and health. Blocking code; `LDAPConnectionPool` runs it off the
/// server's threads.
struct LDAPDirectory: Sendable {
    /// How a sign-in ended, when the directory answered.
    enum SignIn: Sendable {
        case identified(LDAPEntry, groups: [String])
        /// Refused; the reason goes to the audit log only (`unknown_user`, `wrong_password`, ...).
        case refused(reason: String)
    }

    let config: LDAPConfig
    /// The binary attributes, lower-cased.
    let binaryAttributes: Set<String>
    /// The attributes read from a user entry: the subject, the claims, and what groups are matched on.
    let userAttributes: [String]

    init(config: LDAPConfig) {
        self.config = config
        self.binaryAttributes = Set(config.binaryAttributes.map { $0.lowercased() })
        let search = config.userSearch
        var names = [search.idAttr, search.username]
        names += [search.emailAttr, search.nameAttr, search.preferredUsernameAttr].compactMap { $0 }
        names += config.groupSearch?.userMatchers.map(\.userAttr) ?? []
        var seen: Set<String> = []
        self.userAttributes = names.filter { $0.caseInsensitiveCompare("DN") != .orderedSame && seen.insert($0.lowercased()).inserted }
    }

    /// `(attribute=value)`, byte for byte for a binary attribute.
    func equals(_ attribute: String, _ value: String) -> String {
        LDAPFilter.equals(attribute, value, binary: binaryAttributes.contains(attribute.lowercased()))
    }

    /// The filter that finds a person by the username they typed.
    func userFilter(username: String) -> String {
        LDAPFilter.and(config.userSearch.filter, equals(config.userSearch.username, username))
    }

    /// Searches for people, reading the user attributes.
    func searchUsers(_ connection: LDAPConnection, base: String, scope: SearchScope, filter: String) throws(LDAPFailure) -> (entries: [LDAPEntry], limited: Bool) {
        // Two are enough to know a match is not unique.
        try connection.search(base: base, scope: scope, filter: filter, attributes: userAttributes, binaryAttributes: binaryAttributes, sizeLimit: 2, stage: .search)
    }

    /// What a username finds in the directory, searched with the service account.
    enum UserLookup: Sendable {
        case found(LDAPEntry)
        /// No entry, or one without a DN (a bind with an empty DN is anonymous on some directories).
        case none
        case ambiguous
        /// The entry matches `lockedFilter`.
        case locked(LDAPEntry)
    }

    /// Finds the one entry a username names (the service account must be bound).
    func lookUp(_ connection: LDAPConnection, username: String) throws(LDAPFailure) -> UserLookup {
        let found = try searchUsers(connection, base: config.userSearch.baseDN, scope: SearchScope(config.userSearch.scope), filter: userFilter(username: username))
        guard found.entries.count < 2, !found.limited else { return .ambiguous }
        guard let entry = found.entries.first, !entry.dn.isEmpty else { return .none }
        return try isLocked(connection, entry: entry) ? .locked(entry) : .found(entry)
    }

    /// Binds as the entry with the password: nil when the directory accepted it, else why not (for
    /// the audit log).
    func bindRefusal(_ connection: LDAPConnection, entry: LDAPEntry, password: String) throws(LDAPFailure) -> String? {
        let bind = try connection.bind(dn: entry.dn, password: password, stage: .bind)
        switch bind.code {
        case LDAPResultCode.success:
            return nil
        case LDAPResultCode.invalidCredentials:
            return Self.activeDirectoryReason(bind.message) ?? "wrong_password"
        case LDAPResultCode.unwillingToPerform:
            // What directories answer for a disabled or locked entry (and for empty passwords).
            return "account_locked"
        default:
            throw LDAPFailure(stage: .bind, code: bind.code, message: bind.message)
        }
    }

    /// Search-then-bind: finds exactly one entry for the username with the service account, refuses a
    /// locked one, binds as it with the password, then reads its groups.
    func signIn(_ connection: LDAPConnection, username: String, password: String) throws(LDAPFailure) -> SignIn {
        try bindService(connection)
        let entry: LDAPEntry
        switch try lookUp(connection, username: username) {
        case .found(let found): entry = found
        case .none: return .refused(reason: "unknown_user")
        case .ambiguous: return .refused(reason: "ambiguous_user")
        case .locked: return .refused(reason: "account_locked")
        }
        if let reason = try bindRefusal(connection, entry: entry, password: password) { return .refused(reason: reason) }
        return .identified(entry, groups: try groups(connection, of: entry))
    }

    /// The names of the groups whose members include the entry, sorted.
    func groups(_ connection: LDAPConnection, of entry: LDAPEntry) throws(LDAPFailure) -> [String] {
        guard let groupSearch = config.groupSearch else { return [] }
        let memberships = groupSearch.userMatchers.flatMap { matcher in
            entry.values(matcher.userAttr).map { value in
                // A binary user attribute's value is matched byte for byte in the group attribute too.
                LDAPFilter.equals(matcher.groupAttr, value, binary: binaryAttributes.contains(matcher.userAttr.lowercased()))
            }
        }
        guard !memberships.isEmpty else { return [] }
        try bindService(connection)
        let found = try connection.search(
            base: groupSearch.baseDN, scope: SearchScope(groupSearch.scope), filter: LDAPFilter.and(groupSearch.filter, LDAPFilter.or(memberships)),
            attributes: [groupSearch.nameAttr], sizeLimit: 0, stage: .groups
        )
        return Array(Set(found.entries.flatMap { $0.values(groupSearch.nameAttr) })).sorted()
    }

    /// The entry of a subject, if it still exists and is not locked.
    func entry(_ connection: LDAPConnection, subject: String) throws(LDAPFailure) -> LDAPEntry? {
        try bindService(connection)
        let search = config.userSearch
        let found: [LDAPEntry]
        if search.idAttr.caseInsensitiveCompare("DN") == .orderedSame {
            do {
                found = try searchUsers(connection, base: subject, scope: .base, filter: search.filter ?? "(objectClass=*)").entries
            } catch  where error.code == LDAPResultCode.noSuchObject {
                return nil
            }
        } else {
            found = try searchUsers(
                connection, base: search.baseDN, scope: SearchScope(search.scope), filter: LDAPFilter.and(search.filter, equals(search.idAttr, subject))
            ).entries
        }
        guard found.count == 1, let entry = found.first, try !isLocked(connection, entry: entry) else { return nil }
        return entry
    }

    /// Service bind and a read of the user search base: what `/readyz` needs to know.
    func probe(_ connection: LDAPConnection) throws(LDAPFailure) {
        try bindService(connection)
        _ = try connection.search(base: config.userSearch.baseDN, scope: .base, filter: "(objectClass=*)", attributes: [], sizeLimit: 1, stage: .search)
    }

    /// Binds as the service account (or anonymously without one), unless the connection already is.
    func bindService(_ connection: LDAPConnection) throws(LDAPFailure) {
        let serviceDN = config.bindDN ?? ""
        guard connection.boundDN != serviceDN else { return }
        let result = try connection.bind(dn: serviceDN, password: config.bindPassword ?? "", stage: .serviceBind)
        guard result.code == LDAPResultCode.success else {
            throw LDAPFailure(stage: .serviceBind, code: result.code, message: result.message)
        }
    }

    func isLocked(_ connection: LDAPConnection, entry: LDAPEntry) throws(LDAPFailure) -> Bool {
        guard let lockedFilter = config.userSearch.lockedFilter else { return false }
        return try !connection.search(base: entry.dn, scope: .base, filter: lockedFilter, attributes: [], sizeLimit: 1, stage: .search).entries.isEmpty
    }

    /// Active Directory says why a bind failed in the message's `data` code.
    static func activeDirectoryReason(_ message: String) -> String? {
        let codes = [
            "data 775": "account_locked", "data 533": "account_disabled", "data 701": "account_expired", "data 532": "password_expired",
            "data 773": "password_must_change",
        ]
        return codes.first { message.contains($0.key) }?.value
    }
}
