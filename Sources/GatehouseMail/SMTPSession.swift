import Foundation
import GatehouseCore
import NIOCore
import NIOPosix
import NIOSSL

/// One SMTP conversation that hands over one message: greeting, EHLO, STARTTLS when configured (and
/// EHLO again), AUTH, MAIL FROM, RCPT TO, DATA, QUIT. Every reply is checked; the first unexpected
/// one ends the delivery with the server's words in the error (for the log).
struct SMTPSession: Sendable {
    let settings: SMTPSettings
    let tls: NIOSSLContext?

    typealias Connection = NIOAsyncChannel<SMTPReply, ByteBuffer>

    func deliver(from sender: String, to recipient: String, data: String) async throws {
        let startTLSState = STARTTLSState()
        let connection = try await connect(startTLSState)
        try await connection.executeThenClose { inbound, outbound in
            var replies = inbound.makeAsyncIterator()
            func expect(_ codes: Set<Int>, after command: String) async throws -> SMTPReply {
                guard let reply = try await replies.next() else {
                    throw MailDeliveryError("the server closed the connection (after \(command))")
                }
                guard codes.contains(reply.code) else {
                    throw MailDeliveryError("the server answered \(command) with \(reply)", recipientRefused: command == "RCPT TO" && reply.isPermanentFailure)
                }
                return reply
            }
            func send(_ line: String, _ codes: Set<Int>, shown: String? = nil) async throws -> SMTPReply {
                do {
                    try await outbound.write(ByteBuffer(string: line + "\r\n"))
                } catch {
                    // A channel closed under the write (a failed TLS handshake) holds the real cause
                    // in its inbound stream.
                    _ = try await replies.next()
                    throw error
                }
                return try await expect(codes, after: shown ?? String(line.prefix(while: { $0 != " " && $0 != ":" })))
            }

            _ = try await expect([220], after: "connecting")
            var capabilities = try await send("EHLO \(settings.heloName)", [250]).lines.dropFirst().map { $0.uppercased() }
            if settings.security == .starttls {
                guard capabilities.contains(where: { $0 == "STARTTLS" }) else {
                    throw MailDeliveryError("the server does not offer STARTTLS, and mail.smtp.security is starttls (offered: \(capabilities.joined(separator: ", ")))")
                }
                startTLSState.set(STARTTLSState.awaitingReply)
                _ = try await send("STARTTLS", [220])
                try await startTLS(on: connection.channel, state: startTLSState)
                capabilities = try await send("EHLO \(settings.heloName)", [250]).lines.dropFirst().map { $0.uppercased() }
            }
            if let username = settings.username, let password = settings.password {
                try await authenticate(username: username, password: password, capabilities: capabilities, send: send)
            }
            let international = !(sender + recipient).unicodeScalars.allSatisfy(\.isASCII)
            if international, !capabilities.contains("SMTPUTF8") {
                throw MailDeliveryError("the address is not ASCII and the server does not offer SMTPUTF8")
            }
            _ = try await send("MAIL FROM:<\(sender)>" + (international ? " SMTPUTF8" : ""), [250], shown: "MAIL FROM")
            _ = try await send("RCPT TO:<\(recipient)>", [250, 251], shown: "RCPT TO")
            _ = try await send("DATA", [354])
            try await outbound.write(ByteBuffer(string: MIMEMessage.dotStuffed(data) + ".\r\n"))
            _ = try await expect([250], after: "the message")
            // The message is accepted; a server that answers QUIT badly changes nothing.
            _ = try? await send("QUIT", [221])
        }
    }

    /// Connects, reads the greeting and says QUIT: whether the server answers at all.
    func probe() async throws {
        let connection = try await connect(STARTTLSState())
        try await connection.executeThenClose { inbound, outbound in
            var replies = inbound.makeAsyncIterator()
            guard let greeting = try await replies.next() else { throw MailDeliveryError("the server closed the connection without a greeting") }
            guard greeting.code == 220 else { throw MailDeliveryError("the server greeted with \(greeting)") }
            try? await outbound.write(ByteBuffer(string: "QUIT\r\n"))
        }
    }

    /// AUTH PLAIN (RFC 4616) when offered, else AUTH LOGIN; the password never appears in an error.
    private func authenticate(
        username: String, password: String, capabilities: [String], send: (String, Set<Int>, String?) async throws -> SMTPReply
    ) async throws {
        let mechanisms = Set(capabilities.filter { $0.hasPrefix("AUTH ") || $0.hasPrefix("AUTH=") }.flatMap { $0.dropFirst(5).split(separator: " ").map(String.init) })
        func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        if mechanisms.contains("PLAIN") {
            _ = try await send("AUTH PLAIN " + base64("\0\(username)\0\(password)"), [235], "AUTH PLAIN")
        } else if mechanisms.contains("LOGIN") {
            _ = try await send("AUTH LOGIN", [334], "AUTH LOGIN")
            _ = try await send(base64(username), [334], "AUTH LOGIN (username)")
            _ = try await send(base64(password), [235], "AUTH LOGIN (password)")
        } else {
            throw MailDeliveryError("the server offers neither AUTH PLAIN nor AUTH LOGIN (offered: \(mechanisms.sorted().joined(separator: " ")))")
        }
    }

    private func connect(_ startTLSState: STARTTLSState) async throws -> Connection {
        let implicitTLS = settings.security == .tls ? tls : nil
        let host = settings.host
        do {
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(Int64(min(settings.connectTimeout.value, settings.timeout.value))))
                .connect(host: host, port: settings.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let implicitTLS {
                            try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: implicitTLS, serverHostname: Self.sniName(host)))
                        }
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPReplyDecoder(startTLS: startTLSState)))
                        try channel.pipeline.syncOperations.addHandler(SMTPReplyDeadline(limit: .seconds(Int64(settings.timeout.value))))
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw MailDeliveryError("cannot connect to \(host):\(settings.port): \(error)")
        }
    }

    /// Puts TLS under the conversation, in front of the reply decoder (RFC 3207). On the event loop,
    /// so that no byte is read between the check that nothing followed the `220` and TLS taking over.
    private func startTLS(on channel: any Channel, state: STARTTLSState) async throws {
        guard let tls else { throw MailDeliveryError("no TLS settings") }
        let host = settings.host
        try await channel.eventLoop.submit {
            // On the event loop, after the read that held the `220`: the decoder has seen all of it.
            if state.current == STARTTLSState.injected { throw SMTPProtocolError(STARTTLSState.injectionMessage) }
            guard state.current == STARTTLSState.awaitingTLS else { throw SMTPProtocolError("STARTTLS reply out of order") }
            try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(host)), position: .first)
            state.set(STARTTLSState.plain)
        }.get()
    }

    /// Host names go in SNI and are checked against the certificate; an IP address is not allowed in
    /// SNI and is checked against the certificate's IP entries instead.
    static func sniName(_ host: String) -> String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }
}
