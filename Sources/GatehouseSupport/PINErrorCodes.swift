import GatehousePluginKit

/// The refusals of a PIN (`PINRules`, the `pin` and `activation` plugins).
extension ErrorCode {
    /// The PIN is shorter than the rules allow.
    public static let pinTooShort = ErrorCode("pin_too_short")
    /// The PIN is longer than the rules allow.
    public static let pinTooLong = ErrorCode("pin_too_long")
    /// The PIN has a run of sequential digits.
    public static let pinSequence = ErrorCode("pin_sequence")
    /// The PIN repeats one digit too often in a row.
    public static let pinRepeated = ErrorCode("pin_repeated")
    /// The PIN is on a deny list (the common ones, or the app's).
    public static let pinDenied = ErrorCode("pin_denied")
    /// The PIN is wrong.
    public static let invalidPIN = ErrorCode("invalid_pin")
}
