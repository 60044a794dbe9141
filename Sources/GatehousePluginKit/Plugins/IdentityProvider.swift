import Foundation

/// Establishes who someone is (LDAP directory, upstream OIDC, a JWT issuer, the local password list...).
/// The engine calls `begin` once, then `resume` with each answer, until the provider returns
/// `.identified`.
public protocol IdentityProvider: GatehousePlugin {
    /// Starts the provider's part of a flow: a challenge, or at once an identity.
    func begin(in context: FlowContext) async throws -> FlowStep
    /// Takes an answer to the provider's last challenge (its state is `context.state(_:)`).
    func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep
}

/// Verifies one more factor for an account the flow already has (an emailed code, a device key...).
/// The context carries the account. Ends with `.verified`.
public protocol Authenticator: GatehousePlugin {
    /// Starts the authenticator's part of a flow for the account in `context`: a challenge, or at once a verdict.
    func begin(in context: FlowContext) async throws -> FlowStep
    /// Takes an answer to the authenticator's last challenge (its state is `context.state(_:)`).
    func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep
}

/// A provider's answer to a recheck (`IdentityProvider.recheck`).
public enum IdentityRecheck: Sendable, Equatable {
    /// Still good; `freshClaims` when the provider read the person's claims again.
    case valid(freshClaims: IdentityClaims?)
    /// No longer accepted (removed, disabled, or filtered out by the provider's rules); `reason` is audited.
    case refused(reason: String)
}
