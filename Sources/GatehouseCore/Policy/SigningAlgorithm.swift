/// The algorithms the broker signs its own tokens with.
public enum SigningAlgorithm: String, Sendable, Codable, CaseIterable {
    /// ECDSA with P-256 and SHA-256.
    case es256 = "ES256"
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
}
