/// What an HTTP request carried for DPoP (RFC 9449): every `DPoP` header value (more than one is
/// refused), and the request's method and URL as the broker is reached at (the issuer's scheme,
/// host and port, the request's path), which the proof's `htm` and `htu` must name.
public struct DPoPPresentation: Sendable, Hashable {
    public var proofs: [String]
    public var method: String
    public var url: String

    public init(proofs: [String], method: String, url: String) {
        self.proofs = proofs
        self.method = method
        self.url = url
    }
}

/// An access token as a request presented it: with the `Bearer` or the `DPoP` scheme (RFC 9449
/// section 7.1), and the DPoP proof that came with it.
public struct PresentedToken: Sendable {
    public enum Scheme: String, Sendable { case bearer = "Bearer", dpop = "DPoP" }

    public var scheme: Scheme
    public var token: String
    public var dpop: DPoPPresentation?

    public init(scheme: Scheme, token: String, dpop: DPoPPresentation? = nil) {
        self.scheme = scheme
        self.token = token
        self.dpop = dpop
    }

    /// A token presented with the `Bearer` scheme and no proof.
    public static func bearer(_ token: String) -> PresentedToken { PresentedToken(scheme: .bearer, token: token) }
}
