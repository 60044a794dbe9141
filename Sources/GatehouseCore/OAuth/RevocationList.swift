import Foundation

/// The revoked access tokens and subjects, read from the store at most once a second and kept in
/// memory in between, so that introspection does not query the store per token. A revocation made on
/// another node is therefore seen here within about a second; one made on this node at once.
public actor RevocationList {
    private let store: any RevocationStore
    private let clock: any BrokerClock
    private var tokens: [String: RevocationRecord] = [:]
    private var subjects: [String: RevocationRecord] = [:]
    private var loadedAt = Date.distantPast
    /// How stale the in-memory copy may get.
    public static let refreshInterval: TimeInterval = 1

    public init(store: any RevocationStore, clock: any BrokerClock) {
        self.store = store
        self.clock = clock
    }

    public func revoke(_ revocation: RevocationRecord) async throws {
        try await store.insertRevocation(revocation)
        remember(revocation)
    }

    /// Whether the token is revoked, by its `jti` or because its subject was deregistered after it was issued.
    public func isRevoked(_ claims: AccessTokenClaims) async throws -> Bool {
        let now = clock.now
        if now.timeIntervalSince(loadedAt) >= Self.refreshInterval || now < loadedAt {
            let records = try await store.activeRevocations(now: now)
            tokens = [:]
            subjects = [:]
            records.forEach(remember)
            loadedAt = now
        }
        if tokens[claims.jti.value] != nil { return true }
        if let subject = subjects[claims.sub.value], claims.iat.value <= subject.revokedAt { return true }
        return false
    }

    private func remember(_ revocation: RevocationRecord) {
        switch revocation.kind {
        case .token: tokens[revocation.value] = revocation
        case .subject: subjects[revocation.value] = revocation
        }
    }
}
