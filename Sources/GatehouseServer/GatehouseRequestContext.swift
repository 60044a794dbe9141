import GatehouseCore
import Hummingbird
import NIOCore

/// The per-request context of every route: Hummingbird's core context plus the peer's address, which
/// flows record for audit and per-IP limits, and the body limit of the route.
public struct GatehouseRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The event loop of the request's connection: body deadlines are scheduled on it (a NIO
    /// scheduled task costs far less than a `Task.sleep`, which arms a Dispatch timer).
    public let eventLoop: any EventLoop
    /// Set by the admin middleware once the admin credential is checked.
    public var admin: AdminIdentity?
    /// The client's address as a trusted proxy reported it (`X-Forwarded-For`), if any.
    public var forwardedFor: String?
    /// The largest body the route reads (Hummingbird's JSON decoding and `FormBody` both honour it),
    /// set by the `BodyLimitMiddleware` nearest the route: `BodyLimit.form` for the whole router,
    /// `BodyLimit.json` for the flow and admin APIs.
    public var maxUploadSize: Int = BodyLimit.form

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.eventLoop = source.channel.eventLoop
    }

    /// The client's IP address as text, if known: from a trusted proxy's `X-Forwarded-For`, else the peer.
    public var clientIP: String? { forwardedFor ?? remoteAddress?.ipAddress }
}
