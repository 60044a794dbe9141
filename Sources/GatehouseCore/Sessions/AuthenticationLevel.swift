import Foundation

/// The `acr` values the broker issues and honours in `acr_values` (OIDC Core section 2): a sign-in
/// with one factor, or with an authenticator passed on top of the identity provider.
public enum AuthenticationLevel: String, Sendable, CaseIterable {
    case singleFactor = "urn:gatehouse:acr:1fa"
    case multiFactor = "urn:gatehouse:acr:2fa"

    /// The level of a sign-in whose `amr` is `methods`, through `identityProvider`: multi-factor when
    /// an authenticator other than the provider itself is among them.
    public init(methods: [String], identityProvider: String?, plugins: PluginInstances) {
        let passed = methods.contains { $0 != identityProvider && plugins.authenticators[$0] != nil }
        self = passed ? .multiFactor : .singleFactor
    }

    /// The level `acr_values` asks for: the highest known one it names (the broker steps up to it),
    /// or nil when it names none the broker knows (then it is only a wish, OIDC Core section 3.1.2.1).
    public static func requested(by acrValues: [String]) -> AuthenticationLevel? {
        if acrValues.contains(Self.multiFactor.rawValue) { return .multiFactor }
        if acrValues.contains(Self.singleFactor.rawValue) { return .singleFactor }
        return nil
    }
}
