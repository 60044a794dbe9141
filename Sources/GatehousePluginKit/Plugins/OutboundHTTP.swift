import Foundation

/// The HTTP client the broker hands plugins that call out (an app's registration API, an upstream
/// OpenID provider, attestation services). The core defines it; the executable supplies one built on
/// async-http-client (`GatehouseHTTP`), so plugins depend on no HTTP library. Redirects are never
/// followed: a signed request must reach the URL that was configured, nowhere else.
public protocol OutboundHTTP: Sendable {
    /// Sends a request; never follows redirects.
    func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse
}

/// One outgoing request, with its own time limit and a cap on the answer's size.
public struct OutboundRequest: Sendable {
    /// The HTTP method.
    public var method: String
    /// An absolute `https` (or loopback `http`) URL.
    public var url: String
    /// Request headers, in order.
    public var headers: [(name: String, value: String)]
    /// The body, if any.
    public var body: Data?
    /// How long to wait for the whole answer.
    public var timeout: TimeInterval
    /// A longer answer is cut off with `responseTooLarge`.
    public var maxResponseBytes: Int

    /// A request.
    public init(
        method: String = "POST", url: String, headers: [(name: String, value: String)] = [], body: Data? = nil, timeout: TimeInterval, maxResponseBytes: Int = 1 << 20
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }
}

/// The answer to an `OutboundRequest` (its headers are not kept: no plugin reads them yet).
public struct OutboundResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The body, at most the request's `maxResponseBytes`.
    public var body: Data

    /// An answer.
    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// Why an outgoing request got no usable answer.
public enum OutboundHTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No answer within the request's timeout.
    case timeout
    /// Could not connect, or the connection broke (refused, reset, DNS, TLS handshake).
    case unreachable(String)
    /// The answer was longer than the request allowed.
    case responseTooLarge
    /// The URL is not an absolute http(s) URL.
    case invalidURL(String)

    /// What went wrong, for logs.
    public var description: String {
        switch self {
        case .timeout: "no answer in time"
        case .unreachable(let detail): "unreachable: \(detail)"
        case .responseTooLarge: "the answer is too large"
        case .invalidURL(let url): "not a usable URL: \(url)"
        }
    }
}
