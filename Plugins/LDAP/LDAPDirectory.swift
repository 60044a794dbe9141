import GatehousePluginKit

/// The directory conversations of one provider, each run on one pooled connection: search-then-bind
/// sign-in, group lookup, rechecks, Active Directory's password change, and health. Blocking code;
/// `LDAPConnectionPool` runs it off the server's threads.
struct LDAPDirectory: Sendable {
    /// How a sign-in ended, when the directory answered.
    enum SignIn: Sendable {
        case identified(LDAPEntry, groups: [String])
        /// Refused as a wrong password would be; the reason goes to the audit log only (`unknown_user`,
        /// `wrong_password`, ...).
        case refused(reason: String)
        /// The password is right, but Active Directory refuses the sign-in for a reason the person
        /// may be told (they proved the password).
        case restricted(ActiveDirectoryRestriction, entry: LDAPEntry)
    }

    /// What one bind as a person came to.
    enum BindOutcome: Sendable, Equatable {
        case accepted
        case refused(reason: String)
        case restricted(ActiveDirectoryRestriction)
    }

    let config: LDAPConfig
    /// How each attribute's values become text, by lower-cased name; text when absent.
    let formats: [String: LDAPValueFormat]
    /// The attributes read from a user entry: the subject, the claims, what groups are matched on,
    /// and on Active Directory the account's state.
    let userAttributes: [String]

    init(config: LDAPConfig) {
        self.config = config
        var formats: [String: LDAPValueFormat] = [:]
        for name in config.binaryAttributes { formats[name.lowercased()] = .binary }
        // AD's own tools show objectGUID as a GUID: the subject an administrator can look up. A config
        // that lists binaryAttributes keeps the subjects it had (base64url) when it turns AD on.
        if config.activeDirectory, !(config.binaryAttributesGiven && formats["objectguid"] == .binary) { formats["objectguid"] = .guid }
        self.formats = formats
        let search = config.userSearch
        var names = [search.idAttr] + search.usernameAttrs
        names += [search.emailAttr, search.nameAttr, search.preferredUsernameAttr].compactMap { $0 }
        names += config.groupSearch?.userMatchers.map(\.userAttr) ?? []
        if config.activeDirectory { names += ActiveDirectoryAccountState.attributes }
        var seen: Set<String> = []
        self.userAttributes = names.filter { $0.caseInsensitiveCompare("DN") != .orderedSame && seen.insert($0.lowercased()).inserted }
    }

    func format(_ attribute: String) -> LDAPValueFormat {
        formats[attribute.lowercased()] ?? .text
    }

    /// `(attribute=value)`, byte for byte for a binary attribute.
    func equals(_ attribute: String, _ value: String) -> String {
        LDAPFilter.equals(attribute, value, format: format(attribute))
    }

    /// The filter that finds a person by the username they typed: any username attribute equal to it.
    /// On Active Directory `DOMAIN\user` is `user` of that domain; nil for another domain's name.
    func userFilter(username typed: String) -> String? {
        var username = typed
        if config.activeDirectory, let slash = typed.firstIndex(of: "\\") {
            let domain = typed[..<slash]
            guard let expected = config.expectedDomain, domain.uppercased() == expected else { return nil }
            username = String(typed[typed.index(after: slash)...])
            guard !username.isEmpty else { return nil }
        }
        return LDAPFilter.and(config.userSearch.filter, LDAPFilter.or(config.userSearch.usernameAttrs.map { equals($0, username) }))
    }

    /// Searches for people, reading the user attributes.
    func searchUsers(_ connection: LDAPConnection, base: String, scope: SearchScope, filter: String) throws(LDAPFailure) -> (entries: [LDAPEntry], limited: Bool) {
        // Two are enough to know a match is not unique.
        try connection.search(base: base, scope: scope, filter: filter, attributes: userAttributes, formats: formats, sizeLimit: 2, stage: .search)
    }

    /// The people whose username, name or address contains `text` (escaped: it matches itself only),
    /// at most `limit`, searched with the service account; `limited` when there were more.
    func search(_ connection: LDAPConnection, containing text: String, limit: Int) throws(LDAPFailure) -> (entries: [LDAPEntry], limited: Bool) {
        try bindService(connection)
        let search = config.userSearch
        let attributes = (search.usernameAttrs + [search.nameAttr, search.emailAttr].compactMap { $0 }).filter {
            if case .text = format($0) { return true }
            return false
        }
        let filter = LDAPFilter.and(search.filter, LDAPFilter.or(attributes.map { "(\($0)=*\(LDAPFilter.escape(text))*)" }))
        let found = try connection.search(
            base: search.baseDN, scope: SearchScope(search.scope), filter: filter, attributes: userAttributes, formats: formats,
            sizeLimit: Int32(clamping: limit + 1), stage: .search, timeLimit: max(1, config.operationTimeout.value - 1))
        return (Array(found.entries.prefix(limit)), found.limited || found.entries.count > limit)
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
        guard let filter = userFilter(username: username) else { return .none }
        let found = try searchUsers(connection, base: config.userSearch.baseDN, scope: SearchScope(config.userSearch.scope), filter: filter)
        guard found.entries.count < 2, !found.limited else { return .ambiguous }
        guard let entry = found.entries.first, !entry.dn.isEmpty else { return .none }
        return try isLocked(connection, entry: entry) ? .locked(entry) : .found(entry)
    }

    /// Binds as the entry with the password and says what the directory made of it.
    func bind(_ connection: LDAPConnection, entry: LDAPEntry, password: String) throws(LDAPFailure) -> BindOutcome {
        let bind = try connection.bind(dn: entry.dn, password: password, stage: .bind)
        switch bind.code {
        case LDAPResultCode.success:
            return .accepted
        case LDAPResultCode.invalidCredentials:
            guard let code = ActiveDirectoryRestriction.dataCode(bind.message) else { return .refused(reason: "wrong_password") }
            if config.activeDirectory, let restriction = ActiveDirectoryRestriction(dataCode: code) { return .restricted(restriction) }
            return .refused(reason: ActiveDirectoryRestriction.refusalReason(dataCode: code))
        case LDAPResultCode.unwillingToPerform:
            // What directories answer for a disabled or locked entry (and for empty passwords).
            return .refused(reason: "account_locked")
        default:
            throw LDAPFailure(stage: .bind, code: bind.code, message: bind.message)
        }
    }

    /// Search-then-bind: finds exactly one entry for the username with the service account, refuses a
    /// locked one, binds as it with the password, then reads its groups.
    func signIn(_ connection: LDAPConnection, username: String, password: String) throws(LDAPFailure) -> SignIn {
        switch try find(connection, username: username) {
        case .entry(let entry): return try signIn(connection, entry: entry, password: password)
        case .refused(let reason): return .refused(reason: reason)
        }
    }

    /// The entry a sign-in binds as, or why there is none.
    enum Found: Sendable {
        case entry(LDAPEntry)
        case refused(reason: String)
    }

    /// The one entry a username names, or why there is none (the first half of a sign-in).
    func find(_ connection: LDAPConnection, username: String) throws(LDAPFailure) -> Found {
        try bindService(connection)
        switch try lookUp(connection, username: username) {
        case .found(let found): return .entry(found)
        case .none: return .refused(reason: "unknown_user")
        case .ambiguous: return .refused(reason: "ambiguous_user")
        case .locked: return .refused(reason: "account_locked")
        }
    }

    /// Binds as a found entry with the password and, when it is accepted, reads its groups (the
    /// second half of a sign-in).
    func signIn(_ connection: LDAPConnection, entry: LDAPEntry, password: String) throws(LDAPFailure) -> SignIn {
        switch try bind(connection, entry: entry, password: password) {
        case .accepted: return .identified(entry, groups: try groups(connection, of: entry))
        case .refused(let reason): return .refused(reason: reason)
        case .restricted(let restriction): return .restricted(restriction, entry: entry)
        }
    }

    /// How an Active Directory password change ended, when the directory answered.
    enum PasswordChange: Sendable, Equatable {
        case changed
        /// The current password was wrong (AD's `00000056`).
        case wrongCurrentPassword
        /// The new password breaks the domain's policy: length, complexity, history or age (`0000052D`).
        case refusedByPolicy
        /// The directory does not let this account change its password here (result 50 or 53).
        case notAllowed
    }

    /// Changes a person's password on Active Directory, as the service account, with their current
    /// password (no reset right is needed or used).
    func changePassword(_ connection: LDAPConnection, dn: String, current: String, new: String) throws(LDAPFailure) -> PasswordChange {
        try bindService(connection)
        let result = try connection.changeActiveDirectoryPassword(dn: dn, current: current, new: new)
        switch result.code {
        case LDAPResultCode.success: return .changed
        // AD's own codes: 00000056 the current password is wrong, 0000052D the new one breaks the policy.
        case LDAPResultCode.constraintViolation where result.message.uppercased().contains("00000056"): return .wrongCurrentPassword
        case LDAPResultCode.constraintViolation: return .refusedByPolicy
        case LDAPResultCode.invalidCredentials: return .wrongCurrentPassword
        // The account may not change its password (AD's "User cannot change password"), or the
        // directory will not take one on this connection: no retry helps.
        case LDAPResultCode.insufficientAccessRights, LDAPResultCode.unwillingToPerform: return .notAllowed
        default: throw LDAPFailure(stage: .passwordChange, code: result.code, message: result.message)
        }
    }

    /// The names of the groups whose members include the entry (through other groups too, when
    /// `nested`), sorted.
    func groups(_ connection: LDAPConnection, of entry: LDAPEntry) throws(LDAPFailure) -> [String] {
        guard let groupSearch = config.groupSearch else { return [] }
        let memberships = groupSearch.userMatchers.flatMap { matcher in
            entry.values(matcher.userAttr).map { value in
                let byDN = matcher.userAttr.caseInsensitiveCompare("DN") == .orderedSame
                // LDAP_MATCHING_RULE_IN_CHAIN: the group holds the DN, or holds a group that does, and so on.
                let attribute = groupSearch.nested && byDN ? "\(matcher.groupAttr):1.2.840.113556.1.4.1941:" : matcher.groupAttr
                // A binary user attribute's value is matched byte for byte in the group attribute too.
                return LDAPFilter.equals(attribute, value, format: format(matcher.userAttr))
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
}
