import Foundation
import Logging

/// One email a plugin sends: a plain-text part, optionally an HTML alternative.
public struct EmailMessage: Sendable, Hashable {
    /// A checked address (`EmailAddress`); never a display name.
    public var to: String
    /// The subject line.
    public var subject: String
    /// The plain-text body.
    public var text: String
    /// An HTML alternative, if any.
    public var html: String?

    /// A message.
    public init(to: String, subject: String, text: String, html: String? = nil) {
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
    }
}

/// How plugins send email. The broker hands every plugin the one configured in `mail:` (SMTP, or the
/// development-only log transport); plugins never open mail connections themselves.
public protocol Mailer: Sendable {
    /// Returns once the mail system accepted the message; throws `MailDeliveryError` otherwise.
    func send(_ message: EmailMessage) async throws
    /// Whether the mail system answers now (for `/readyz` through the plugins that send mail).
    func health() async -> PluginHealth
}

extension Mailer {
    /// Transports without a server to ask (none, log) have nothing to report.
    public func health() async -> PluginHealth { PluginHealth(healthy: true) }
}

/// A message was not accepted. `reason` is for logs (the server's reply, a timeout); it never holds
/// the message or a credential.
public struct MailDeliveryError: Error, Sendable, CustomStringConvertible {
    /// Why, for logs.
    public var reason: String
    /// The mail server refused the recipient for good (a 5xx reply to `RCPT TO`).
    public var recipientRefused: Bool

    /// A failure.
    public init(_ reason: String, recipientRefused: Bool = false) {
        self.reason = reason
        self.recipientRefused = recipientRefused
    }

    /// The reason.
    public var description: String { reason }
}

/// The mailer when `mail.transport` is `none`: every message fails.
public struct NoMailer: Mailer {
    /// A mailer.
    public init() {}

    /// Refuses: this broker sends no mail.
    public func send(_ message: EmailMessage) async throws {
        throw MailDeliveryError("no mail transport is configured (mail.transport is none)")
    }
}

/// `mail.transport: log`, for development only (the config is refused otherwise): prints each
/// message, codes included, to the log instead of sending it.
public struct LogMailer: Mailer {
    let logger: Logger

    /// A mailer logging to `logger`.
    public init(logger: Logger) { self.logger = logger }

    /// Logs the message (development only: codes appear in the log).
    public func send(_ message: EmailMessage) async throws {
        logger.notice(
            "email not sent (mail.transport: log, development only)",
            metadata: ["to": .string(message.to), "subject": .string(message.subject), "text": .string(message.text)]
        )
    }
}
