import GatehousePluginKit

/// The `device-key` plugin's refusals.
extension ErrorCode {
    /// The device's signed assertion does not check out.
    public static let invalidAssertion = ErrorCode("invalid_assertion")
    /// The app requires a device attestation, or a key attested for it.
    public static let attestationRequired = ErrorCode("attestation_required")
    /// The app adds device keys only to a signed-in account.
    public static let signedInAccountRequired = ErrorCode("signed_in_account_required")
}
