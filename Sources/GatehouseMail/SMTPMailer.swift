import Foundation
import GatehouseCore
import NIOCore
import NIOPosix
import NIOSSL

/// Sends mail to an SMTP server (RFC 5321) over SwiftNIO: implicit TLS or STARTTLS (never falling
/// back to plain text when TLS was asked for), AUTH PLAIN or LOGIN, certificate and host name checks,
/// and one deadline for the whole delivery (the time the server takes to answer, summed). One connection per message: codes are few, and a fresh
/// connection never inherits a half-broken session.
///
/// No SMTP client library resolves here (see the machine's package list), so the protocol is
/// written out in `SMTPSession`; it speaks only what submission needs.
public struct SMTPMailer: Mailer {
    let settings: SMTPSettings
    let from: String
    let sender: String
    let tls: NIOSSLContext?
    /// One probe of the server at a time, its answer shared for two seconds: `/readyz` is polled often.
    let healthCheck = SharedResult<PluginHealth>(lifetime: 2)

    /// Fails when the TLS settings (the CA file) cannot be loaded.
    public init(settings: SMTPSettings, from: String) throws {
        guard let sender = MailConfig.senderAddress(of: from) else { throw MailDeliveryError("mail.from is not an address: '\(from)'") }
        self.settings = settings
        self.from = from
        self.sender = sender
        if settings.security == .none {
            self.tls = nil
        } else {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            if let rootCA = settings.rootCA { configuration.trustRoots = .file(rootCA) }
            self.tls = try NIOSSLContext(configuration: configuration)
        }
    }

    public func send(_ message: EmailMessage) async throws {
        // `to` goes into RCPT TO and a header as it is: only a checked address may.
        guard EmailAddress(message.to)?.value == message.to.lowercased(), !message.to.contains(where: { $0 == "\r" || $0 == "\n" }) else {
            throw MailDeliveryError("not a deliverable address", recipientRefused: true)
        }
        let domain = sender.split(separator: "@").last.map(String.init) ?? "localhost"
        let data = MIMEMessage.render(message, from: from, date: Date(), messageID: "\(RandomToken.make(byteCount: 16))@\(domain)")
        let session = SMTPSession(settings: settings, tls: tls)
        do {
            // The deadline lives on the connection's event loop (SMTPReplyDeadline), not in a timer task
            // here: such a timer also counted this process's own scheduling delays.
            try await session.deliver(from: sender, to: message.to, data: data)
        } catch let error as MailDeliveryError {
            throw error
        } catch is SMTPReplyTimeout {
            throw MailDeliveryError("no answer from \(settings.host):\(settings.port) within \(settings.timeout.value) s (mail.smtp.timeout)")
        } catch {
            throw MailDeliveryError("\(settings.host):\(settings.port): \(error)")
        }
    }
}

extension SMTPMailer {
    /// Whether the server answers with its greeting within `connectTimeout` (at most 3 s).
    public func health() async -> PluginHealth {
        await healthCheck.value { [settings, tls] in
            let limit = min(settings.connectTimeout.value, 3)
            // The connect and the greeting each give up at the limit.
            var probing = settings
            probing.connectTimeout = Seconds(limit)
            probing.timeout = Seconds(limit)
            do {
                try await SMTPSession(settings: probing, tls: tls).probe()
                return PluginHealth(healthy: true)
            } catch is SMTPReplyTimeout {
                return PluginHealth(healthy: false, detail: "mail server \(settings.host):\(settings.port): no greeting within \(limit) s")
            } catch {
                return PluginHealth(healthy: false, detail: "mail server \(settings.host):\(settings.port): \(error)")
            }
        }
    }

    /// The mailer `mail:` asks for, when it is SMTP (the core provides `none` and `log` itself).
    public static func configured(by mail: MailConfig) throws -> SMTPMailer? {
        guard mail.transport == .smtp, let settings = mail.smtp else { return nil }
        return try SMTPMailer(settings: settings, from: mail.from)
    }
}
