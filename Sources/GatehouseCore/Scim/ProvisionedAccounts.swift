import Foundation

/// Where provisioning meets sign-in: the provisioned user an identity links to at its first sign-in
/// (`scim.links`), whether an account was provisioned (`policy.provisionedOnly`), and the SCIM groups
/// that join the `groups` claim.
public struct ProvisionedAccounts: Sendable {
    let store: any BrokerStore
    public let config: ScimConfig
    /// Whether a provider is trusted with the addresses it vouches for (`email` links).
    let trustsEmail: @Sendable (String) -> Bool

    public init(store: any BrokerStore, config: ScimConfig, trustsEmail: @escaping @Sendable (String) -> Bool = { _ in false }) {
        self.store = store
        self.config = config
        self.trustsEmail = trustsEmail
    }

    /// SCIM off: no link, no groups.
    public static func off(_ store: any BrokerStore) -> ProvisionedAccounts { ProvisionedAccounts(store: store, config: ScimConfig()) }

    /// The account of the one active provisioned user a link rule matches the identity to; nil for
    /// none, for several (two clients provisioned the same name: no guess is made), or for an account
    /// that has an identity of this provider already (another person's sign-in).
    func linkedAccount(for identity: ExternalIdentity) async throws -> String? {
        guard config.enabled else { return nil }
        var accounts: Set<String> = []
        for link in config.links where link.provider == identity.providerID {
            if link.claim == .email, !trustsEmail(identity.providerID) { continue }
            guard let value = link.claim.value(of: identity), !value.isEmpty else { continue }
            for user in try await store.scimUsers(matching: link.attribute, value: value) where user.active && (link.client == nil || link.client == user.clientID) {
                if let accountID = user.accountID { accounts.insert(accountID) }
            }
        }
        guard accounts.count == 1, let accountID = accounts.first else { return nil }
        if try await store.identityLinks(accountID: accountID).contains(where: { $0.providerID == identity.providerID }) { return nil }
        return accountID
    }

    /// At an identity's first sign-in: links it to the provisioned user a link rule matches, if any
    /// (audited as `account.linked`, by `scim`). Answers whether it linked.
    func linkIfProvisioned(_ identity: ExternalIdentity, appID: String, now: Date) async throws -> Bool {
        guard let accountID = try await linkedAccount(for: identity) else { return false }
        guard try await store.addIdentityLink(identity, accountID: accountID, now: now) else { return false }
        try await store.appendAudit(
            AuditEvent(
                time: now, type: "account.linked", appID: appID, accountID: accountID, providerID: identity.providerID,
                details: ["by": "scim", "subject": identity.subject]))
        return true
    }

    /// Refuses a sign-in at an app that takes provisioned accounts only, unless the identity's
    /// account (if it has one) was provisioned.
    func refuseUnlessProvisioned(_ identity: ExternalIdentity, app: App) async throws {
        guard app.policy.provisionedOnly else { return }
        if let link = try await store.identityLink(providerID: identity.providerID, subject: identity.subject), try await isProvisioned(link.accountID) {
            return
        }
        throw BrokerError(.accessDenied, .forbidden, "This app is only for accounts your organisation provisioned.").publicly(because: "not_provisioned")
            .endingFlow()
    }

    /// The last word before a flow issues anything (a code, tokens) at an app for provisioned accounts
    /// only: the account must be provisioned, and a stateless sign-in (no account) is refused.
    func refuseCompletionUnlessProvisioned(_ flow: FlowRecord, account: Account?, app: App) async throws {
        guard app.policy.provisionedOnly else { return }
        if let account, try await isProvisioned(account.id) { return }
        throw BrokerError(.accessDenied, .forbidden, "This app is only for accounts your organisation provisioned.").publicly(because: "not_provisioned")
            .endingFlow()
    }

    /// Refuses tokens at a grant (code, refresh, device code) of an app for provisioned accounts only,
    /// for an account no client provisioned (any longer).
    func refuseGrantUnlessProvisioned(_ accountID: String, app: App) async throws {
        guard app.policy.provisionedOnly, try await !isProvisioned(accountID) else { return }
        throw BrokerError(.invalidGrant, .badRequest, "This app is only for accounts your organisation provisioned.").because("not_provisioned")
    }

    /// Whether any client provisioned the account.
    func isProvisioned(_ accountID: String) async throws -> Bool {
        try await !store.scimUsers(accountID: accountID).isEmpty
    }

    /// The profile claims with the account's SCIM groups added to `groups`, when that scope was
    /// granted. Never for the admin console's app: it admits by group (`admin.consoleGroups`), and a
    /// SCIM client names its groups freely, so its groups must not make anyone an administrator.
    public func adding(groupsOf accountID: String?, to profile: [String: JSONValue], scopes: [String], app appID: String) async throws -> [String: JSONValue] {
        guard config.enabled, scopes.contains("groups"), appID != ConsoleConfig.appID, let accountID else { return profile }
        let provisioned = try await store.scimGroupNames(accountID: accountID)
        guard !provisioned.isEmpty else { return profile }
        var existing: [String] = []
        if case .array(let values) = profile["groups"] { existing = values.compactMap(\.stringValue) }
        var result = profile
        result["groups"] = .array(Array(Set(existing + provisioned)).sorted().map(JSONValue.string))
        return result
    }
}
