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
    }

    public func lockouts() async throws -> [LockoutView] {
        try await store.lockedCounters(now: clock.now).compactMap { counter in
            counter.lockedUntil.map { LockoutView(key: counter.key, lockedUntil: $0, lockouts: counter.lockouts, permanent: $0 >= LockoutRule.permanentThreshold) }
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
