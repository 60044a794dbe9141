import Foundation

/// The refusals of a disabled account, one per place it could be used: a sign-in (any provider), a
/// grant that issues tokens (code, refresh, device code, JWT bearer), and an access token presented
/// to the account's own APIs.
extension Account {
    /// Whether an administrator or a provisioning client disabled the account.
    public var isDisabled: Bool { disabledAt != nil }

    /// Refuses a sign-in of a disabled account. The person proved who they are, so they are told why.
    func refuseSignInIfDisabled() throws(BrokerError) {
        guard isDisabled else { return }
        throw BrokerError(.accessDenied, .forbidden, "This account is disabled. Ask an administrator.").publicly(because: "account_disabled").endingFlow()
    }

    /// Refuses tokens for a disabled account at a grant.
    func refuseGrantIfDisabled() throws(BrokerError) {
        guard isDisabled else { return }
        throw BrokerError(.invalidGrant, .badRequest, "The account is disabled.").because("account_disabled")
    }

    /// Refuses an access token of a disabled account (its tokens were revoked when it was disabled;
    /// this holds for one issued in the moment before).
    func refuseTokenIfDisabled() throws(BrokerError) {
        guard isDisabled else { return }
        throw BrokerError(.invalidToken, .unauthenticated, "The account is disabled.").because("account_disabled")
    }
}
