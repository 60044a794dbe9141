import Foundation

/// The client of a broker started without one: every call fails, saying so.
public struct NoOutboundHTTP: OutboundHTTP {
    /// A client that refuses every call.
    public init() {}
    /// Fails: there is no client.
    public func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse {
        throw .unreachable("this broker was started without an HTTP client")
    }
}
