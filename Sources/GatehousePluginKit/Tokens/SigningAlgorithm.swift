/// The algorithms the broker signs its own tokens with.
public enum SigningAlgorithm: String, Sendable, Codable, CaseIterable {
    case es256 = "ES256"
    case rs256 = "RS256"
}
