import Foundation

/// What the broker's public routes do with activations: an app's back end issues one with its
/// client credentials (`POST /v1/activations`, where its policy's `activation.issueByApp` allows),
/// and a person answers an invitation through its link. Administrators issue through the activation
/// provider's admin resources.
public struct ActivationService: Sendable {
    let oauth: OAuthService
    let plugins: PluginInstances

    public init(oauth: OAuthService, plugins: PluginInstances) {
        self.oauth = oauth
        self.plugins = plugins
    }

    /// Issues an activation for the authenticated app's back end.
    public func issue(fields: [String: JSONValue], client: ClientCredentials?, clientIP: String?) async throws -> IssuedActivation {
        let app = try await oauth.clients.authenticate(client, clientIP: clientIP)
        guard app.isConfidential else {
            throw BrokerError(.unauthorizedClient, .forbidden, "Only a confidential app's back end may issue activations.")
        }
        return try await provider(for: app).issue(try ActivationRequest(fields: fields), app: app, issuedBy: "app")
    }

    /// The activation provider an app's policy lists.
    func provider(for app: App) throws -> any ActivationRedeeming {
        for id in app.policy.identityProviders {
            if let provider = plugins.identityProviders[id]?.activationRedeemer { return provider }
        }
        throw BrokerError(.providerNotAllowed, .forbidden, "This app's policy lists no activation provider.")
    }

    /// What an invitation link shows.
    public func invitation(token: String) async throws -> InvitationView {
        try await answering(token) { try await $0.invitation(token: token) }
    }

    /// Accepts (with the activation PIN the person chooses) or declines an invitation.
    public func answerInvitation(token: String, accept: Bool, pin: String?) async throws -> InvitationAnswer {
        try await answering(token) { try await $0.answerInvitation(token: token, accept: accept, pin: pin) }
    }

    /// Asks each activation provider in turn: the one that issued the invitation knows its token.
    private func answering<T: Sendable>(_ token: String, _ body: (any ActivationRedeeming) async throws -> T) async throws -> T {
        guard !token.isEmpty, token.count <= 128 else { throw BrokerError.unknownInvitation }
        for provider in plugins.identityProviders.sorted(by: { $0.key < $1.key }).compactMap(\.value.activationRedeemer) {
            do {
                return try await body(provider)
            } catch let error as BrokerError where error.code == .invalidInvitation && error.kind == .notFound {
                continue
            }
        }
        throw BrokerError.unknownInvitation
    }

}
