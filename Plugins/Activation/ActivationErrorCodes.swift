import GatehousePluginKit

/// The `activation` plugin's refusals.
extension ErrorCode {
    /// The activation data are unknown, expired, revoked, used, or were locked by wrong PINs.
    public static let invalidActivation = ErrorCode("invalid_activation")
    /// Another installation is redeeming the same activation right now.
    public static let activationInUse = ErrorCode("activation_in_use")
    /// The app's policy does not let its back end issue activations.
    public static let activationNotAllowed = ErrorCode("activation_not_allowed")
    /// No such invitation, or it can no longer be answered.
    public static let invalidInvitation = ErrorCode("invalid_invitation")
}
