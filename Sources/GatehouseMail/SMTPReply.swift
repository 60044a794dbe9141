import Foundation
import NIOCore
import Synchronization

/// One SMTP reply (RFC 5321 section 4.2): a three-digit code and its text lines.
struct SMTPReply: Sendable, CustomStringConvertible {
    var code: Int
    var lines: [String]

    var isPermanentFailure: Bool { (500..<600).contains(code) }
    var description: String { "\(code) \(lines.joined(separator: " / "))" }
}

/// Where a connection stands with STARTTLS, shared by the session and its reply decoder. Between the
/// `STARTTLS` command and TLS being in place, the server's one reply is all that may arrive: anything
/// after it in plain text could be a man in the middle's forged reply (the STARTTLS command-injection
/// attack, CVE-2011-0411 and kin), so it ends the conversation.
final class STARTTLSState: Sendable {
    private let stage = Atomic<Int>(0)
    static let plain = 0, awaitingReply = 1, awaitingTLS = 2
    /// The decoder found plain text after the reply. Kept so that the session, which may already hold
    /// the `220` when the decoder's error reaches the channel, refuses to go on for the same reason
    /// whatever the order in which the two arrive.
    static let injected = 3
    static let injectionMessage = "the server sent more in plain text after its STARTTLS reply"

    var current: Int { stage.load(ordering: .sequentiallyConsistent) }
    func set(_ value: Int) { stage.store(value, ordering: .sequentiallyConsistent) }
}

/// Turns the server's bytes into replies, joining the lines of a multi-line reply (`250-...`).
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply

    /// A reply line longer than this is not SMTP (the RFC allows 512 octets).
    static let maxLineLength = 4096

    let startTLS: STARTTLSState
    private var pending: [String] = []

    init(startTLS: STARTTLSState) { self.startTLS = startTLS }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if startTLS.current == STARTTLSState.awaitingTLS, buffer.readableBytes > 0 {
            startTLS.set(STARTTLSState.injected)
            throw SMTPProtocolError(STARTTLSState.injectionMessage)
        }
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maxLineLength { throw SMTPProtocolError("a reply line longer than \(Self.maxLineLength) bytes") }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex + 1
        guard length <= Self.maxLineLength, let raw = buffer.readString(length: length) else {
            throw SMTPProtocolError("a reply line longer than \(Self.maxLineLength) bytes")
        }
        let line = raw.trimmingCharacters(in: .newlines)
        let characters = Array(line.utf8)
        guard characters.count >= 3, characters[0..<3].allSatisfy({ (48...57).contains($0) }), let code = Int(String(line.prefix(3))) else {
            throw SMTPProtocolError("not an SMTP reply: '\(line.prefix(80))'")
        }
        let continues = characters.count > 3 && characters[3] == UInt8(ascii: "-")
        pending.append(characters.count > 4 ? String(line.dropFirst(4)) : "")
        if !continues {
            context.fireChannelRead(wrapInboundOut(SMTPReply(code: code, lines: pending)))
            pending = []
            if startTLS.current == STARTTLSState.awaitingReply {
                startTLS.set(STARTTLSState.awaitingTLS)
                if buffer.readableBytes > 0 {
                    startTLS.set(STARTTLSState.injected)
                    throw SMTPProtocolError(STARTTLSState.injectionMessage)
                }
            }
        }
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// The server said something that is not SMTP.
struct SMTPProtocolError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
