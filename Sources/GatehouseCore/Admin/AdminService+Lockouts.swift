import Foundation

/// Lockouts as administrators see and lift them: accounts, client addresses and plugin keys.
extension AdminService {
    // MARK: - Lockouts

    /// A locked account (`account:<provider>:<username>`, `factor:<authenticator>:<account>`) or
    /// client address (`ip:<address>`).
    public struct LockoutView: Sendable, Codable {
        public var key: String
        public var lockedUntil: Date
        public var lockouts: Int
        /// Only an administrator can lift it.
        public var permanent: Bool
        /// What is locked, in words: `sign-in`, `second factor`, `client address`, `device`, or the
        /// plugin's own (`PIN`)...
        public var what: String
        /// The provider, authenticator or plugin instance whose guesses locked it.
        public var provider: String?
        /// The person it locks out, when the key names one that exists: their account and username.
        public var accountID: String?
        public var username: String?
        /// The address or device when that is what is locked, or the username tried when no account has it.
        public var subject: String?
    }

    public func lockouts() async throws -> [LockoutView] {
        var views: [LockoutView] = []
        for counter in try await store.lockedCounters(now: clock.now) {
            guard let until = counter.lockedUntil else { continue }
            var view = LockoutView(
                key: counter.key, lockedUntil: until, lockouts: counter.lockouts, permanent: until >= LockoutRule.permanentThreshold, what: "other")
            // Naming the person costs store reads: the first few hundred locks are named, the rest
            // (someone locking made-up names by the thousand) show their keys.
            if views.count < Self.lockoutsDescribed { try await describe(&view) }
            views.append(view)
        }
        return views
    }

    static let lockoutsDescribed = 300

    /// Reads the key: `ip:<address>`, `account:<provider>:<username>`, `factor:<authenticator>:<account>`,
    /// or a plugin's `<instance>:account:<account>` and `<instance>:device:<device>`.
    private func describe(_ view: inout LockoutView) async throws {
        let parts = view.key.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count) {
        case ("ip", _):
            view.what = "client address"
            view.subject = String(view.key.dropFirst(3))
        case ("account", 3):
            view.what = "sign-in"
            view.provider = parts[1]
            view.subject = parts[2]
            if let keeper = plugins.passwordKeepers[parts[1]] {
                // One keyed read: the provider's own user of that name, and its account.
                if let subject = try await keeper.subject(forUsername: parts[2]), let link = try await store.identityLink(providerID: parts[1], subject: subject) {
                    try await person(link.accountID, into: &view)
                    view.subject = parts[2]
                }
            } else {
                let matches = try await store.accounts(matching: parts[2], limit: 50, offset: 0).filter { $0.username.lowercased() == parts[2].lowercased() }
                for account in matches where try await store.identityLinks(accountID: account.id).contains(where: { $0.providerID == parts[1] }) {
                    view.accountID = account.id
                    view.username = account.username
                    break
                }
            }
        case ("factor", 3):
            view.what = "second factor"
            view.provider = parts[1]
            try await person(parts[2], into: &view)
        case (let instance?, 3) where plugins.all[instance] != nil:
            let kind = parts[1]
            view.provider = instance
            view.what = "\(plugins.typeNames[instance] ?? instance) (\(kind))"
            if kind == "account" {
                try await person(parts[2], into: &view)
            } else {
                view.subject = parts[2]
            }
        default:
            break
        }
    }

    private func person(_ accountID: String, into view: inout LockoutView) async throws {
        if let account = try await store.account(id: accountID) {
            view.accountID = account.id
            view.username = account.username
        } else {
            view.subject = accountID
        }
    }

    /// Lifts a lock before it runs out (the person proved who they are some other way), permanent
    /// ones included; the key's lockout history starts again from zero.
    public func unlock(key: String, by admin: AdminIdentity) async throws {
        guard try await store.unlock(key: key) else {
            throw BrokerError(.notFound, .notFound, "'\(key)' is not locked.", issues: [ConfigIssue(path: "key", "not locked")])
        }
        try await store.appendAudit(AuditEvent(time: clock.now, type: "lockout.lifted", details: admin.auditDetails.merging(["key": key]) { first, _ in first }))
    }
}
