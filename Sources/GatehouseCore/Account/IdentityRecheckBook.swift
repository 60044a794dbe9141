/// One recheck of a linked identity by the provider that vouched for it, for every place that
/// renews what a sign-in gave (a refresh, single sign-on): the provider's verdict, and when it read
/// the person's claims again, those claims stored on the link so that the tokens issued now carry them.
struct IdentityRecheckBook: Sendable {
    let plugins: PluginInstances
    let store: any AccountStore

    /// Rechecks `link` with its provider (`Rechecking`) while it is configured; answers the refusal's reason, or
    /// nil when the identity is still good (with `link.claims` updated to the fresh ones).
    func recheck(_ link: inout IdentityLink) async throws -> String? {
        guard let provider = plugins.recheckers[link.providerID] else { return nil }
        switch try await provider.recheck(subject: link.subject) {
        case .refused(let reason):
            return reason
        case .valid(let fresh?) where fresh != link.claims:
            try await store.updateIdentityLinkClaims(providerID: link.providerID, subject: link.subject, claims: fresh)
            link.claims = fresh
            return nil
        case .valid:
            return nil
        }
    }
}
