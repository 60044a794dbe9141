import Foundation
import GatehouseCore

/// Renders an `EmailMessage` as an RFC 5322 message: headers (non-ASCII ones RFC 2047-encoded), and a
/// base64 `text/plain` part, or `multipart/alternative` with an HTML part. Lines end in CRLF and stay
/// under 78 characters, so the body passes any SMTP server unchanged.
enum MIMEMessage {
    static func render(_ message: EmailMessage, from: String, date: Date, messageID: String) -> String {
        var headers = [
            "From: \(encodeFrom(from))",
            "To: <\(message.to)>",
            "Subject: \(encodeHeader(message.subject))",
            "Date: \(rfc5322Date(date))",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            // RFC 3834: no vacation auto-replies to one-time codes.
            "Auto-Submitted: auto-generated",
        ]
        var body: [String]
        if let html = message.html {
            let boundary = "gatehouse-" + RandomToken.make(byteCount: 12)
            headers.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
            body = [
                "--\(boundary)", "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: base64", "", base64Lines(message.text),
                "--\(boundary)", "Content-Type: text/html; charset=utf-8", "Content-Transfer-Encoding: base64", "", base64Lines(html),
                "--\(boundary)--",
            ]
        } else {
            headers += ["Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: base64"]
            body = [base64Lines(message.text)]
        }
        return (headers + [""] + body).joined(separator: "\r\n") + "\r\n"
    }

    static func base64Lines(_ text: String) -> String {
        let encoded = Data(text.utf8).base64EncodedString()
        var lines: [Substring] = []
        var rest = encoded[...]
        while !rest.isEmpty {
            lines.append(rest.prefix(76))
            rest = rest.dropFirst(76)
        }
        return lines.joined(separator: "\r\n")
    }

    /// ASCII text as it is; anything else as RFC 2047 encoded words (`=?UTF-8?B?...?=`), split so
    /// that no encoded word is longer than 75 characters and no character is split.
    static func encodeHeader(_ text: String) -> String {
        // No control character survives into a header (a line break would start a new header).
        let oneLine = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        // Plain ASCII stays readable; anything else, or a line too long for one header line, is encoded.
        guard !oneLine.unicodeScalars.allSatisfy({ $0.isASCII }) || oneLine.utf8.count > 900 else { return oneLine }
        var words: [String] = []
        var chunk = ""
        for character in oneLine {
            if (chunk + String(character)).utf8.count > 45 {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?\(Data($0.utf8).base64EncodedString())?=" }.joined(separator: "\r\n ")
    }

    /// `Name <address>` with the name encoded when it is not ASCII, or `<address>`.
    static func encodeFrom(_ from: String) -> String {
        let trimmed = from.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") else { return "<\(trimmed)>" }
        let name = trimmed[..<open].trimmingCharacters(in: .whitespaces)
        let address = trimmed[open...]
        guard !name.isEmpty else { return String(address) }
        let isPlain = name.unicodeScalars.allSatisfy { $0.isASCII && !"\"\\()<>[]:;@,".unicodeScalars.contains($0) }
        let shown =
            isPlain
            ? name
            : (name.unicodeScalars.allSatisfy(\.isASCII)
                ? "\"\(name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\"" : encodeHeader(name))
        return "\(shown) \(address)"
    }

    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }

    /// Each line that starts with a dot gets another (RFC 5321 section 4.5.2), so that the message
    /// cannot end the DATA early.
    static func dotStuffed(_ text: String) -> String {
        text.components(separatedBy: "\r\n").map { $0.hasPrefix(".") ? "." + $0 : $0 }.joined(separator: "\r\n")
    }
}
