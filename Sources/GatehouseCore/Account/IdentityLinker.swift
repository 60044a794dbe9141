import Foundation

/// Links a verified identity to its account, creating the account at the identity's first sign-in,
/// and records `account.created`: the one sequence every sign-in runs, whether it came through a flow
/// or the JWT bearer grant.
struct IdentityLinker: Sendable {
    let store: any BrokerStore
    let clock: any BrokerClock

    /// The identity's account and whether it was created now. `audit` is the event as the caller
    /// records it (its app, provider and details); only its type and account are set here.
    func link(_ identity: ExternalIdentity, audit: AuditEvent) async throws -> (account: Account, created: Bool) {
        let (account, created) = try await store.linkIdentity(identity, now: clock.now)
        if created {
            var event = audit
            event.type = "account.created"
            event.accountID = account.id
            // The subject ties the account to what its provider recorded before the account existed
            // (a new passkey's registration names its user handle).
            event.details["subject"] = identity.subject
            event.time = clock.now
            try await store.appendAudit(event)
        }
        return (account, created)
    }

    /// The same for a caller that has writes of its own to make: a returning person's account is
    /// only read, and the link's refresh (claims, last sign-in) comes back as `refresh`, for the
    /// caller to write beside its own (`SideBySide`) instead of one commit earlier. A first sign-in
    /// links at once, as `link` does, and its `refresh` does nothing.
    func linkRefreshingLater(
        _ identity: ExternalIdentity, audit: AuditEvent
    ) async throws -> (account: Account, created: Bool, refresh: @Sendable () async throws -> Void) {
        if let account = try await store.linkedAccount(providerID: identity.providerID, subject: identity.subject) {
            let (store, now) = (store, clock.now)
            return (account, false, { try await store.refreshIdentityLink(identity, now: now) })
        }
        let (account, created) = try await link(identity, audit: audit)
        return (account, created, {})
    }
}

extension Policy {
    /// The second factor an account must pass: the policy's, except for test accounts, which skip it
    /// by design so that an app's integration tests can register users where real people would need,
    /// say, device attestation.
    public func secondFactor(for account: Account) -> String? {
        account.isTest ? nil : secondFactor
    }
}
