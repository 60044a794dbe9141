import Foundation

extension BrokerError {
    /// What a stateless sign-in cannot do, having no account: each refusal has its own code.
    public enum StatelessLimitation: Sendable {
        /// A refresh token.
        case refresh
        /// A PIN or a device belongs to an account, which a stateless sign-in does not have.
        case accountCredentials
    }

    /// A stateless sign-in asked for something only an account has.
    public static func stateless(_ limitation: StatelessLimitation) -> BrokerError {
        switch limitation {
        case .refresh:
            BrokerError(.statelessNoRefresh, .badRequest, "A stateless sign-in gets no refresh token; do not ask for offline_access.")
        case .accountCredentials:
            BrokerError(.statelessUnsupported, .badRequest, "A stateless sign-in has no account: it cannot create or change a PIN or manage devices.")
        }
    }
}
