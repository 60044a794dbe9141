import Foundation
import Synchronization

/// The revoked access tokens and subjects, read from the store at most once a second and kept in
/// memory in between, so that introspection does not query the store per token. A revocation made on
/// another node is therefore seen here within about a second; one made on this node at once.
public final class RevocationList: Sendable {
    /// How stale the in-memory copy may get.
    public static let refreshInterval: TimeInterval = 1

    private struct State {
        var tokens: [String: RevocationRecord] = [:]
        var subjects: [String: RevocationRecord] = [:]
        var families: [String: RevocationRecord] = [:]
        var clients: [String: RevocationRecord] = [:]
        var signInKeys: [String: RevocationRecord] = [:]
        var signingKeys: [String: RevocationRecord] = [:]
        /// Revocations made on this node: kept apart so that a store read that started before one
        /// was written cannot drop it; pruned when they expire.
        var local: [RevocationRecord] = []
        var loadedAt = Date.distantPast
        var refreshing = false

        /// Keeps the latest revocation of each value: a revocation remembered on this node must not
        /// hide a newer one made on another.
        mutating func remember(_ revocation: RevocationRecord) {
            func latest(_ current: RevocationRecord?) -> RevocationRecord {
                guard let current, current.revokedAt > revocation.revokedAt else { return revocation }
                return current
            }
            switch revocation.kind {
            case .token: tokens[revocation.value] = latest(tokens[revocation.value])
            case .subject: subjects[revocation.value] = latest(subjects[revocation.value])
            case .family: families[revocation.value] = latest(families[revocation.value])
            case .client: clients[revocation.value] = latest(clients[revocation.value])
            case .signInKey: signInKeys[revocation.value] = latest(signInKeys[revocation.value])
            case .signingKey: signingKeys[revocation.value] = latest(signingKeys[revocation.value])
            }
        }
    }

    private let store: any RevocationStore
    private let clock: any BrokerClock
    private let state = Mutex(State())

    public init(store: any RevocationStore, clock: any BrokerClock) {
        self.store = store
        self.clock = clock
    }

    /// Remembers a revocation here at once and in the store for every node. Only `Revoker` calls it.
    func revoke(_ revocation: RevocationRecord) async throws {
        state.withLock {
            $0.local.append(revocation)
            $0.remember(revocation)
        }
        try await store.insertRevocation(revocation)
    }

    /// Whether a refresh-token family was revoked (a reused authorization code revokes the family it
    /// issued, even a token of it written a moment after the revocation).
    public func isFamilyRevoked(_ familyID: String) async throws -> Bool {
        try await refreshIfStale()
        return state.withLock { $0.families[familyID] != nil }
    }

    /// Whether everything an app was issued up to `issuedAt` is revoked (the app was deleted or disabled).
    public func isClientRevoked(_ appID: String, issuedAt: Date) async throws -> Bool {
        try await refreshIfStale()
        return state.withLock { state in state.clients[appID].map { issuedAt <= $0.revokedAt } ?? false }
    }

    /// Whether every token of `subject` issued up to `issuedAt` is revoked (the account was deregistered).
    public func isSubjectRevoked(_ subject: String, issuedAt: Date) async throws -> Bool {
        try await refreshIfStale()
        return state.withLock { state in state.subjects[subject].map { issuedAt <= $0.revokedAt } ?? false }
    }

    /// Whether `token` was signed by a revoked signing key: nothing it signed is valid any more, on
    /// any node. The header is read only when some key is revoked (verification is a hot path).
    public func isSignedByRevokedKey(_ token: String) async throws -> Bool {
        try await refreshIfStale()
        let revoked = state.withLock { $0.signingKeys }
        guard !revoked.isEmpty, let kid = SigningKeyring.kid(of: token) else { return false }
        return revoked[kid] != nil
    }

    /// Whether the token is revoked, by its `jti`, or because its subject was deregistered, its app
    /// deleted or disabled after it was issued, or the device of its sign-in key removed.
    public func isRevoked(_ claims: AccessTokenClaims) async throws -> Bool {
        try await refreshIfStale()
        return state.withLock { state in
            if state.tokens[claims.jti.value] != nil { return true }
            if let subject = state.subjects[claims.sub.value], claims.iat.value <= subject.revokedAt { return true }
            if let client = state.clients[claims.clientID], claims.iat.value <= client.revokedAt { return true }
            if let key = claims.deviceKey, let removed = state.signInKeys[key], claims.iat.value <= removed.revokedAt { return true }
            // A family is revoked for good (logout, a reused code or refresh token): every access
            // token issued with it goes too, even one minted a moment after the revocation.
            if let family = claims.fid, state.families[family] != nil { return true }
            return false
        }
    }

    private func refreshIfStale() async throws {
        let now = clock.now
        // One request re-reads the store when the copy is stale; the others use the copy meanwhile
        // (never older than about a second plus one read).
        let mustRefresh = state.withLock { state -> Bool in
            let stale = now.timeIntervalSince(state.loadedAt) >= Self.refreshInterval || now < state.loadedAt
            let neverLoaded = state.loadedAt == .distantPast
            guard stale, !state.refreshing || neverLoaded else { return false }
            state.refreshing = true
            return true
        }
        if mustRefresh {
            do {
                let records = try await store.activeRevocations(now: now)
                state.withLock { state in
                    state.local.removeAll { $0.expiresAt <= now }
                    state.tokens = [:]
                    state.subjects = [:]
                    state.families = [:]
                    state.clients = [:]
                    state.signInKeys = [:]
                    state.signingKeys = [:]
                    (records + state.local).forEach { state.remember($0) }
                    state.loadedAt = now
                    state.refreshing = false
                }
            } catch {
                state.withLock { $0.refreshing = false }
                throw error
            }
        }
    }
}
