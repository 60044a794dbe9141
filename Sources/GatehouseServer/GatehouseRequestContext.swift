import GatehouseCore
import Hummingbird
import NIOCore

/// The per-request context of every route: Hummingbird's core context plus the peer's address, which
/// flows record for audit (and, later, per-IP rate limits).
public struct GatehouseRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// Set by the admin middleware once the admin credential is checked.
    public var admin: AdminIdentity?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address as text, if known.
    public var clientIP: String? { remoteAddress?.ipAddress }
}
