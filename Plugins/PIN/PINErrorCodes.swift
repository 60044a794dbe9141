import GatehousePluginKit

/// The `pin` plugin's own refusal.
extension ErrorCode {
    /// The PIN cannot be reset here; ask an administrator.
    public static let pinResetUnavailable = ErrorCode("pin_reset_unavailable")
}
