import Foundation
import GatehousePluginKit

/// The email a code goes out in: a subject, a plain-text part and optionally an HTML part, with the
/// placeholders `{{code}}`, `{{app}}` (the app's name), `{{minutes}}` (how long the code works) and
/// `{{address}}`. Values are HTML-escaped in the HTML part.
public struct MessageTemplate: Decodable, Sendable, Hashable {
    public var subject: String?
    public var text: String
    public var html: String?

    static let placeholders: Set<String> = ["code", "app", "minutes", "address"]

    /// The message sent when config names no template, in English.
    public static let builtIn = builtIn(in: "en")

    /// The built-in message in `language` (`EmailCodePlugin.translations`).
    public static func builtIn(in language: String) -> MessageTemplate {
        let say = { (text: String) in EmailCodePlugin.translations.text(text, in: language) }
        return MessageTemplate(
            subject: say("{{code}} is your {{app}} code"),
            text: say(
                """
                Your {{app}} code is {{code}}

                It works for {{minutes}} minutes. If you did not ask for it, ignore this email: someone may have typed your address by mistake.

                """),
            html: """
                <p>\(say("Your {{app}} code is"))</p>
                <p style="font-size:24px;font-weight:bold;letter-spacing:4px">{{code}}</p>
                <p>\(say("It works for {{minutes}} minutes. If you did not ask for it, ignore this email: someone may have typed your address by mistake."))</p>
                """
        )
    }

    init(subject: String?, text: String, html: String?) {
        self.subject = subject
        self.text = text
        self.html = html
    }

    enum CodingKeys: String, CodingKey { case subject, text, html }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath
        subject = try container.decodeIfPresent(String.self, forKey: .subject)
        text = try container.decode(String.self, forKey: .text)
        html = try container.decodeIfPresent(String.self, forKey: .html)
        for (key, part) in [(CodingKeys.subject, subject), (.text, text), (.html, html)] {
            guard let part else { continue }
            if let unknown = Self.names(in: part).first(where: { !Self.placeholders.contains($0) }) {
                throw ConfigIssue(
                    path: path + [key], "unknown placeholder {{\(unknown)}} (known: \(Self.placeholders.sorted().map { "{{\($0)}}" }.joined(separator: ", ")))")
            }
        }
        if let subject, subject.contains(where: { $0 == "\r" || $0 == "\n" }) || subject.isEmpty {
            throw ConfigIssue(path: path + [CodingKeys.subject], "must be one non-empty line")
        }
        for (key, part) in [(CodingKeys.text, Optional(text)), (.html, html)] {
            if let part, !Self.names(in: part).contains("code") { throw ConfigIssue(path: path + [key], "must contain {{code}}") }
        }
    }

    /// The message for one code.
    func message(to address: EmailAddress, code: String, appName: String, minutes: Int, fallbackSubject: String) -> EmailMessage {
        let values = ["code": code, "app": appName, "minutes": String(minutes), "address": address.value]
        // A header is one line: an app name with a line break must not add headers.
        let subject = Self.fill(subject ?? fallbackSubject, values) { $0.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ") }
        return EmailMessage(
            to: address.value, subject: subject, text: Self.fill(text, values) { $0 }, html: html.map { Self.fill($0, values, escape: Self.escapeHTML) }
        )
    }

    /// The placeholder names in a template, in order.
    static func names(in template: String) -> [String] {
        var names: [String] = []
        var rest = template[...]
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            names.append(rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces))
            rest = rest[close.upperBound...]
        }
        return names
    }

    static func fill(_ template: String, _ values: [String: String], escape: (String) -> String) -> String {
        var result = ""
        var rest = template[...]
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            result += rest[..<open.lowerBound]
            let name = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            result += escape(values[name] ?? "")
            rest = rest[close.upperBound...]
        }
        return result + rest
    }

    static func escapeHTML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
    }
}
