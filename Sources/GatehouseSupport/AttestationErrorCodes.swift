import GatehousePluginKit

/// The refusal of an attestation (the `webauthn` and `device-attestation` plugins).
extension ErrorCode {
    /// An attestation (or an attested key's assertion) was refused; `reason` says which check failed.
    public static let invalidAttestation = ErrorCode("invalid_attestation")
}
