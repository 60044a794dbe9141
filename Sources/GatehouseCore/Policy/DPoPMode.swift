/// Whether an app's tokens may, or must, be bound to a key of the client with DPoP (RFC 9449).
public enum DPoPMode: String, Sendable, Codable, CaseIterable {
    /// DPoP headers are ignored; tokens are plain bearer tokens.
    case off
    /// A request with a valid proof gets tokens bound to its key (`token_type: DPoP`); one without
    /// gets bearer tokens.
    case allowed
    /// Every token request (and every flow-API request that may issue tokens) must carry a proof.
    case required
}

/// What binds a token to its holder's key: the RFC 7638 thumbprint of the DPoP key (`cnf.jkt`).
public struct Confirmation: Sendable, Hashable, Codable {
    /// The JWK thumbprint of the key the token is bound to (RFC 9449 section 6).
    public var jkt: String

    /// A confirmation of that key.
    public init(jkt: String) { self.jkt = jkt }
}
