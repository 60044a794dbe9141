import NIOCore

/// The delivery's deadline (`mail.smtp.timeout`), kept on the connection's event loop: it counts the
/// time the server owes a reply (from the connection, or from a command written, until the reply is
/// decoded), summed over the whole conversation, and closes the connection with `SMTPReplyTimeout`
/// when that sum reaches the limit.
///
/// Why on the event loop and only the server's time: a timer in Swift's cooperative pool also counted
/// the time this process took to read replies it already held, so a busy broker (or a test machine
/// with every suite starting at once) saw "no answer" from a server that had answered in
/// milliseconds. The sum still bounds a server that trickles its replies slowly.
final class SMTPReplyDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = SMTPReply
    typealias InboundOut = SMTPReply
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let limit: TimeAmount
    private var used: TimeAmount = .zero
    private var owedSince: NIODeadline?
    private var timer: Scheduled<Void>?

    init(limit: TimeAmount) { self.limit = limit }

    func handlerAdded(context: ChannelHandlerContext) {
        // The greeting is owed from the moment the connection is up.
        if context.channel.isActive { startWaiting(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        startWaiting(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        stopWaiting()
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        startWaiting(context: context)
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopWaiting()
        context.fireChannelInactive()
    }

    private func startWaiting(context: ChannelHandlerContext) {
        guard owedSince == nil else { return }
        let now = NIODeadline.now()
        owedSince = now
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: now + (limit - used)) { [limit] in
            let context = loopBound.value
            context.fireErrorCaught(SMTPReplyTimeout(limit: limit))
            context.close(promise: nil)
        }
    }

    private func stopWaiting() {
        guard let since = owedSince else { return }
        used = used + (NIODeadline.now() - since)
        owedSince = nil
        timer?.cancel()
        timer = nil
    }
}

/// The server took longer than `mail.smtp.timeout` in all to answer.
struct SMTPReplyTimeout: Error {
    var limit: TimeAmount
}
