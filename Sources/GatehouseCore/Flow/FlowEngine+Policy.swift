/// The policy's gatekeeping of plugins: which providers an app shows and allows, and which
/// authenticators exist. Checked on every step, so a policy changed mid-flow takes effect at once.
extension FlowEngine {
    /// The app's identity providers that are configured here, in the policy's order.
    func configuredProviders(of app: App) -> [String] {
        app.policy.identityProviders.filter { plugins.identityProviders[$0] != nil }
    }

    /// The providers a browser flow offers: not those that run in the flow API only
    /// (`PluginTraits.flowAPIOnly`).
    func browserProviders(of app: App) -> [String] {
        configuredProviders(of: app).filter { plugins.identityProviders[$0]?.traits.flowAPIOnly == false }
    }

    /// The identity provider `id` if it exists and the policy allows it (for a stateless flow: if
    /// stateless sign-in is on, the provider supports it and no second factor is required).
    func identityProvider(_ id: String, allowedBy policy: Policy, stateless: Bool) throws(BrokerError) -> any IdentityProvider {
        guard let provider = plugins.identityProviders[id] else {
            throw BrokerError(.unknownProvider, .badRequest, "No identity provider '\(id)' is configured.")
        }
        guard policy.identityProviders.contains(id) else {
            throw BrokerError(.providerNotAllowed, .forbidden, "This app may not sign in with '\(id)'.")
        }
        if stateless {
            guard policy.statelessAuthentication else {
                throw BrokerError(.statelessDisabled, .forbidden, "Stateless authentication is not enabled for this app.")
            }
            guard provider.traits.statelessCapable else {
                throw BrokerError(.statelessUnsupported, .badRequest, "The provider '\(id)' cannot sign in statelessly.")
            }
            guard policy.secondFactor == nil else {
                throw BrokerError(.statelessUnsupported, .badRequest, "This app requires a second factor, which needs an account; stateless sign-in is not possible.")
            }
        }
        return provider
    }

    /// The authenticator `id`; one that is not configured (any more) makes the step unavailable.
    func authenticator(_ id: String) throws(BrokerError) -> any Authenticator {
        guard let authenticator = plugins.authenticators[id] else {
            throw BrokerError(.providerUnavailable, .unavailable, "The required second factor '\(id)' is not configured.")
        }
        return authenticator
    }
}
