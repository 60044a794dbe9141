import Foundation
import NIOCore

/// One SMTP reply (RFC 5321 section 4.2): a three-digit code and its text lines.
struct SMTPReply: Sendable, CustomStringConvertible {
    var code: Int
    var lines: [String]

    var isPositive: Bool { (200..<400).contains(code) }
    var isPermanentFailure: Bool { (500..<600).contains(code) }
    var description: String { "\(code) \(lines.joined(separator: " / "))" }
}

/// Turns the server's bytes into replies, joining the lines of a multi-line reply (`250-...`).
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply

    /// A reply line longer than this is not SMTP (the RFC allows 512 octets).
    static let maxLineLength = 4096

    private var pending: [String] = []

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
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
