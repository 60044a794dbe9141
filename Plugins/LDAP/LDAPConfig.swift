import Foundation
import GatehousePluginKit
import GatehouseSupport

/// `providers[].config` of an `ldap` instance, shaped like Dex's LDAP connector: where the directory
/// is, how to reach it safely, the service account, and how to find users and their groups.
public struct LDAPConfig: Decodable, Sendable {
    /// `ldap://` or `ldaps://` URLs, tried in order (fail-over); `url:` takes one or a list.
    public var urls: [String]
    /// Upgrade `ldap://` connections with StartTLS (refused for `ldaps://`, which is TLS already).
    public var startTLS: Bool
    /// PEM file of the CA that signed the directory's certificate; the system's CAs when absent.
    public var rootCA: String?
    /// Accept any certificate. For a lab only: logged loudly at every start.
    public var insecureSkipVerify: Bool
    /// The service account that searches the directory; both absent means an anonymous search.
    public var bindDN: String?
    public var bindPassword: String?
    public var userSearch: UserSearch
    public var groupSearch: GroupSearch?
    /// Connecting (TCP and TLS) may take this long.
    public var connectTimeout: Seconds
    /// Each bind and search may take this long; waiting for a free connection twice as long.
    public var operationTimeout: Seconds
    /// Connections kept open and reused; also the most directory calls running at once.
    public var maxConnections: Int
    /// Attributes whose values are bytes, not text (Active Directory's `objectGUID`, `objectSid`):
    /// read as base64url, and matched byte for byte.
    public var binaryAttributes: [String]
    /// Plain `ldap://` to another host without StartTLS sends passwords in the clear; refused outside
    /// development unless this says it is meant.
    public var insecureNoTLS: Bool
    /// The directory is Active Directory: its attributes are the defaults, `objectGUID` is shown as a
    /// GUID, `DOMAIN\user` is understood, groups are found nested, and the reasons AD gives for a
    /// refused bind (and the account's state at refresh) are read. See docs/plugins/ldap.md.
    public var activeDirectory: Bool
    /// The domain's NetBIOS name, for usernames typed as `DOMAIN\user` (Active Directory only): the
    /// first `DC=` of `userSearch.baseDN`, upper-cased, when absent (what AD proposes by default).
    public var netbiosDomain: String?
    /// Wrong passwords counted per directory entry, whichever way its username was typed (Active
    /// Directory's `alice`, `alice@corp.example` and `CORP\alice` are one person): used when a person
    /// has several usernames (`activeDirectory`, or several `userSearch.username` attributes).
    public var lockout: LockoutRule
    /// `binaryAttributes` was written in the config (an Active Directory deployment that keeps
    /// objectGUID subjects as base64url).
    var binaryAttributesGiven: Bool

    /// How a person's entry is found, and which of its attributes become claims.
    public struct UserSearch: Sendable {
        public var baseDN: String
        /// ANDed with the username match, e.g. `(objectClass=inetOrgPerson)`.
        public var filter: String?
        /// The attributes the typed username is matched against, any of them (`uid`; on Active
        /// Directory `sAMAccountName` and `userPrincipalName`). The first is the person's username.
        public var usernameAttrs: [String]
        public var scope: LDAPScope
        /// The attribute whose value is the stable subject (`entryUUID`; `DN` for the entry's DN).
        public var idAttr: String
        public var emailAttr: String?
        public var nameAttr: String?
        /// Where `preferred_username` comes from; the first username attribute when absent.
        public var preferredUsernameAttr: String?
        /// Entries matching this filter are locked (e.g. `(pwdAccountLockedTime=*)` with OpenLDAP's
        /// password policy): refused without asking the directory to bind them.
        public var lockedFilter: String?

        /// The attribute whose value is the person's username.
        public var username: String { usernameAttrs[0] }

        enum CodingKeys: String, CodingKey { case baseDN, filter, username, scope, idAttr, emailAttr, nameAttr, preferredUsernameAttr, lockedFilter }

        /// Reads `userSearch`; Active Directory's attributes are the defaults when `activeDirectory` is on.
        init(from decoder: any Decoder, activeDirectory: Bool) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let path = decoder.codingPath
            baseDN = try container.decode(String.self, forKey: .baseDN)
            filter = try container.decodeIfPresent(String.self, forKey: .filter) ?? (activeDirectory ? "(&(objectCategory=person)(objectClass=user))" : nil)
            if let list = try? container.decode([String].self, forKey: .username) {
                usernameAttrs = list
            } else {
                usernameAttrs =
                    try container.decodeIfPresent(String.self, forKey: .username).map { [$0] } ?? (activeDirectory ? ["sAMAccountName", "userPrincipalName"] : ["uid"])
            }
            scope = try container.decodeIfPresent(LDAPScope.self, forKey: .scope) ?? .sub
            idAttr = try container.decodeIfPresent(String.self, forKey: .idAttr) ?? (activeDirectory ? "objectGUID" : "entryUUID")
            emailAttr = try container.decodeIfPresent(String.self, forKey: .emailAttr) ?? "mail"
            nameAttr = try container.decodeIfPresent(String.self, forKey: .nameAttr) ?? (activeDirectory ? "displayName" : "cn")
            preferredUsernameAttr = try container.decodeIfPresent(String.self, forKey: .preferredUsernameAttr)
            lockedFilter = try container.decodeIfPresent(String.self, forKey: .lockedFilter)
            if baseDN.isEmpty { throw ConfigIssue(path: path + [CodingKeys.baseDN], "must not be empty") }
            if usernameAttrs.isEmpty { throw ConfigIssue(path: path + [CodingKeys.username], "needs at least one attribute") }
            try LDAPFilter.checkConfigured(filter, path: path + [CodingKeys.filter])
            try LDAPFilter.checkConfigured(lockedFilter, path: path + [CodingKeys.lockedFilter])
            for (index, name) in usernameAttrs.enumerated() {
                try checkAttribute(name, path: path + [CodingKeys.username] + (usernameAttrs.count > 1 ? [ConfigIssue.Key(index: index)] : []))
            }
            try checkAttribute(idAttr, path: path + [CodingKeys.idAttr])
            for (key, name) in [(CodingKeys.emailAttr, emailAttr), (.nameAttr, nameAttr), (.preferredUsernameAttr, preferredUsernameAttr)] {
                if let name { try checkAttribute(name, path: path + [key]) }
            }
        }
    }

    /// How a person's groups are found: group entries whose `groupAttr` holds the user's `userAttr`.
    public struct GroupSearch: Sendable {
        public var baseDN: String
        /// ANDed with the membership match, e.g. `(objectClass=groupOfNames)`.
        public var filter: String?
        public var scope: LDAPScope
        public var userMatchers: [UserMatcher]
        /// The group attribute that becomes the name in the `groups` claim.
        public var nameAttr: String
        /// Groups that contain the person through other groups count too: a matcher on the user's `DN`
        /// follows the chain with Active Directory's `LDAP_MATCHING_RULE_IN_CHAIN`
        /// (1.2.840.113556.1.4.1941), which only Active Directory implements.
        public var nested: Bool

        /// `groupAttr` of a group entry holds `userAttr` of the user entry (`DN` for the user's DN).
        public struct UserMatcher: Decodable, Sendable {
            public var userAttr: String
            public var groupAttr: String
        }

        enum CodingKeys: String, CodingKey { case baseDN, filter, scope, userMatchers, nameAttr, nested }

        /// Active Directory's groups, nested ones included, under `baseDN`.
        static func activeDirectory(baseDN: String) -> GroupSearch {
            GroupSearch(
                baseDN: baseDN, filter: "(objectClass=group)", scope: .sub, userMatchers: [UserMatcher(userAttr: "DN", groupAttr: "member")], nameAttr: "cn", nested: true
            )
        }

        init(baseDN: String, filter: String?, scope: LDAPScope, userMatchers: [UserMatcher], nameAttr: String, nested: Bool) {
            self.baseDN = baseDN
            self.filter = filter
            self.scope = scope
            self.userMatchers = userMatchers
            self.nameAttr = nameAttr
            self.nested = nested
        }

        /// Reads `groupSearch`; Active Directory's defaults (groups, nested) when `activeDirectory` is on.
        init(from decoder: any Decoder, activeDirectory: Bool, defaultBaseDN: String) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let path = decoder.codingPath
            let defaults = activeDirectory ? Self.activeDirectory(baseDN: defaultBaseDN) : nil
            if let defaults {
                baseDN = try container.decodeIfPresent(String.self, forKey: .baseDN) ?? defaults.baseDN
            } else {
                baseDN = try container.decode(String.self, forKey: .baseDN)
            }
            filter = try container.decodeIfPresent(String.self, forKey: .filter) ?? defaults?.filter
            scope = try container.decodeIfPresent(LDAPScope.self, forKey: .scope) ?? .sub
            userMatchers = try container.decodeIfPresent([UserMatcher].self, forKey: .userMatchers) ?? [UserMatcher(userAttr: "DN", groupAttr: "member")]
            nameAttr = try container.decodeIfPresent(String.self, forKey: .nameAttr) ?? "cn"
            nested = try container.decodeIfPresent(Bool.self, forKey: .nested) ?? activeDirectory
            if baseDN.isEmpty { throw ConfigIssue(path: path + [CodingKeys.baseDN], "must not be empty") }
            if userMatchers.isEmpty { throw ConfigIssue(path: path + [CodingKeys.userMatchers], "needs at least one matcher") }
            try LDAPFilter.checkConfigured(filter, path: path + [CodingKeys.filter])
            try checkAttribute(nameAttr, path: path + [CodingKeys.nameAttr])
            for (index, matcher) in userMatchers.enumerated() {
                try checkAttribute(matcher.userAttr, path: path + [CodingKeys.userMatchers, ConfigIssue.Key(index: index), ConfigIssue.Key("userAttr")])
                try checkAttribute(matcher.groupAttr, path: path + [CodingKeys.userMatchers, ConfigIssue.Key(index: index), ConfigIssue.Key("groupAttr")])
            }
            if nested, !userMatchers.contains(where: { $0.userAttr.caseInsensitiveCompare("DN") == .orderedSame }) {
                throw ConfigIssue(path: path + [CodingKeys.nested], "follows group chains from the user's DN: it needs a userMatchers entry with userAttr: DN")
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case url, startTLS, rootCA, insecureSkipVerify, bindDN, bindPassword, userSearch, groupSearch, connectTimeout, operationTimeout, maxConnections
        case binaryAttributes, insecureNoTLS, activeDirectory, netbiosDomain, lockout
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath
        let urlIsList: Bool
        if let list = try? container.decode([String].self, forKey: .url) {
            urls = list
            urlIsList = true
        } else {
            urls = [try container.decode(String.self, forKey: .url)]
            urlIsList = false
        }
        startTLS = try container.decodeIfPresent(Bool.self, forKey: .startTLS) ?? false
        rootCA = try container.decodeIfPresent(String.self, forKey: .rootCA)
        insecureSkipVerify = try container.decodeIfPresent(Bool.self, forKey: .insecureSkipVerify) ?? false
        bindDN = try container.decodeIfPresent(String.self, forKey: .bindDN)
        bindPassword = try container.decodeIfPresent(String.self, forKey: .bindPassword)
        activeDirectory = try container.decodeIfPresent(Bool.self, forKey: .activeDirectory) ?? false
        guard container.contains(.userSearch) else { throw ConfigIssue(path: path + [CodingKeys.userSearch], "required key is missing") }
        userSearch = try UserSearch(from: container.superDecoder(forKey: .userSearch), activeDirectory: activeDirectory)
        if container.contains(.groupSearch), try !container.decodeNil(forKey: .groupSearch) {
            groupSearch = try GroupSearch(from: container.superDecoder(forKey: .groupSearch), activeDirectory: activeDirectory, defaultBaseDN: userSearch.baseDN)
        } else {
            // Active Directory always has groups; `groupSearch: null` turns the claim off.
            groupSearch = activeDirectory && !container.contains(.groupSearch) ? .activeDirectory(baseDN: userSearch.baseDN) : nil
        }
        netbiosDomain = try container.decodeIfPresent(String.self, forKey: .netbiosDomain)
        if let netbiosDomain, netbiosDomain.isEmpty || netbiosDomain.contains("\\") || netbiosDomain.count > 15 {
            throw ConfigIssue(path: path + [CodingKeys.netbiosDomain], "'\(netbiosDomain)' is not a NetBIOS domain name (1 to 15 characters, no backslash)")
        }
        if netbiosDomain != nil, !activeDirectory {
            throw ConfigIssue(path: path + [CodingKeys.netbiosDomain], "is for Active Directory: set activeDirectory: true too")
        }
        connectTimeout = try container.decodeIfPresent(Seconds.self, forKey: .connectTimeout) ?? Seconds(5)
        operationTimeout = try container.decodeIfPresent(Seconds.self, forKey: .operationTimeout) ?? Seconds(5)
        maxConnections = try container.decodeIfPresent(Int.self, forKey: .maxConnections) ?? 8
        binaryAttributes = try container.decodeIfPresent([String].self, forKey: .binaryAttributes) ?? ["objectGUID", "objectSid"]
        insecureNoTLS = try container.decodeIfPresent(Bool.self, forKey: .insecureNoTLS) ?? false
        binaryAttributesGiven = container.contains(.binaryAttributes)
        // Ten wrong passwords in 15 minutes lock the entry for 5 minutes, growing to an hour.
        lockout = try LockoutRule.decode(
            container, forKey: .lockout,
            defaults: LockoutRule(maxFailures: 10, failureWindow: .minutes(15), lockoutDuration: .minutes(5), maxLockoutDuration: .hours(1), permanentAfterLockouts: nil)
        )
        for (index, name) in binaryAttributes.enumerated() { try checkAttribute(name, path: path + [CodingKeys.binaryAttributes, ConfigIssue.Key(index: index)]) }

        if urls.isEmpty { throw ConfigIssue(path: path + [CodingKeys.url], "needs at least one ldap:// or ldaps:// URL") }
        for (index, url) in urls.enumerated() {
            let at = urlIsList ? path + [CodingKeys.url, ConfigIssue.Key(index: index)] : path + [CodingKeys.url]
            let lowered = url.lowercased()
            guard lowered.hasPrefix("ldap://") || lowered.hasPrefix("ldaps://"), url.count > 8, !url.contains(" ") else {
                throw ConfigIssue(path: at, "'\(url)' is not an ldap:// or ldaps:// URL")
            }
            if startTLS, lowered.hasPrefix("ldaps://") {
                throw ConfigIssue(path: at, "is ldaps:// (TLS from the start), so startTLS must be false")
            }
        }
        if (bindDN == nil) != (bindPassword == nil) {
            throw ConfigIssue(path: path + [bindDN == nil ? CodingKeys.bindDN : CodingKeys.bindPassword], "bindDN and bindPassword go together")
        }
        if bindPassword?.isEmpty == true {
            // An empty password makes a simple bind anonymous: it would hide a missing secret.
            throw ConfigIssue(path: path + [CodingKeys.bindPassword], "must not be empty (is the environment variable set?)")
        }
        if let rootCA, !FileManager.default.isReadableFile(atPath: rootCA) {
            throw ConfigIssue(path: path + [CodingKeys.rootCA], "cannot read '\(rootCA)'")
        }
        if !(1...120).contains(connectTimeout.value) { throw ConfigIssue(path: path + [CodingKeys.connectTimeout], "must be between 1 and 120 seconds") }
        if !(1...120).contains(operationTimeout.value) { throw ConfigIssue(path: path + [CodingKeys.operationTimeout], "must be between 1 and 120 seconds") }
        if !(1...256).contains(maxConnections) { throw ConfigIssue(path: path + [CodingKeys.maxConnections], "must be between 1 and 256") }
    }

    /// The NetBIOS name `DOMAIN\user` must name, upper-cased: configured, or the first `DC=` of the
    /// user search base (nil when neither says).
    var expectedDomain: String? {
        guard activeDirectory else { return nil }
        if let netbiosDomain { return netbiosDomain.uppercased() }
        let first = userSearch.baseDN.split(separator: ",").first { $0.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("dc=") }
        return first.map { String($0.trimmingCharacters(in: .whitespaces).dropFirst(3)).uppercased() }
    }

    /// Whether a person may type several usernames, so that wrong passwords are counted per entry.
    var countsFailuresPerEntry: Bool { activeDirectory || userSearch.usernameAttrs.count > 1 }

    /// Whether passwords would cross the network in the clear: plain `ldap://` without StartTLS to a
    /// host that is not this machine's loopback (decided from the parsed host, not a prefix).
    var sendsPasswordsInClear: Bool {
        !startTLS
            && urls.contains { url in
                guard url.lowercased().hasPrefix("ldap://") else { return false }
                return !LoopbackHost.contains(URL(string: url)?.host ?? "")
            }
    }
}

/// How deep a search goes below its base DN.
public enum LDAPScope: String, Decodable, Sendable {
    /// The base's direct children.
    case one
    /// The whole subtree.
    case sub

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let scope = LDAPScope(rawValue: text) else {
            throw ConfigIssue(path: decoder.codingPath, "must be 'one' or 'sub', got '\(text)'")
        }
        self = scope
    }
}

private func checkAttribute(_ name: String, path: [any CodingKey]) throws {
    guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ";" || $0 == ".") }) else {
        throw ConfigIssue(path: path, "'\(name)' is not an attribute name")
    }
}
