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
    /// False when the broker has no mail transport (`mail.transport: none`): every message fails, so
    /// a plugin that cannot work without mail refuses its config.
    var isConfigured: Bool { get }
}

extension Mailer {
    /// Transports without a server to ask (none, log) have nothing to report.
    public func health() async -> PluginHealth { PluginHealth(healthy: true) }
    /// A transport.
    public var isConfigured: Bool { true }
}
