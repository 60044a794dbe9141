import Foundation
import Logging

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

    /// No transport.
    public var isConfigured: Bool { false }

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
