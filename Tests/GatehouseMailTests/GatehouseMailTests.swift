import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

@testable import GatehouseMail

/// The SMTP client against a real SMTP server (aiosmtpd, Tests/email/smtp_server.py): STARTTLS and
/// implicit TLS with certificate checks, AUTH PLAIN and LOGIN, and every way a delivery can fail.
@Suite("GatehouseMail")
struct GatehouseMailTests {
    static let message = EmailMessage(to: "alice@example.com", subject: "Your code: 123456", text: "Your code is 123456.\n", html: "<p>Your code is <b>123456</b></p>")

    static func mailer(
        _ server: SMTPTestServer, security: SMTPSettings.Security? = nil, password: String = SMTPTestServer.password, rootCA: Bool = true, timeout: Int = 10
    ) throws -> SMTPMailer {
        let settings = SMTPSettings(
            host: "127.0.0.1", port: server.port, security: security ?? SMTPSettings.Security(rawValue: server.security)!, username: SMTPTestServer.username,
            password: password, rootCA: rootCA ? server.certificate : nil, timeout: Seconds(timeout)
        )
        return try SMTPMailer(settings: settings, from: "Gatehouse <noreply@gatehouse.test>")
    }

    /// The delivery error, or a recorded issue when the message went through.
    static func failure(_ mailer: SMTPMailer, _ message: EmailMessage = message, sourceLocation: SourceLocation = #_sourceLocation) async -> MailDeliveryError? {
        await thrownError(MailDeliveryError.self, sourceLocation: sourceLocation) { try await mailer.send(message) }
    }

    @Test func deliversOverStartTLSWithAuthPlain() async throws {
        try await SMTPTestServer.withOwn { server in
            try await Self.mailer(server).send(Self.message)
            let delivered = try #require(try server.messages(to: "alice@example.com").first)
            #expect(delivered.subject == "Your code: 123456")
            #expect(delivered.text == "Your code is 123456.\n")
            #expect(delivered.html == "<p>Your code is <b>123456</b></p>")
            #expect(delivered.headers["from"] == "Gatehouse <noreply@gatehouse.test>")
            #expect(delivered.headers["x-envelope-from"] == "noreply@gatehouse.test")
            #expect(delivered.headers["auto-submitted"] == "auto-generated")
            #expect(delivered.headers["message-id"]?.hasSuffix("@gatehouse.test>") == true)
        }
    }

    @Test func deliversOverImplicitTLS() async throws {
        let server = try await SMTPTestServer.start(security: "tls", authentication: true)
        defer { Task { await server.remove() } }
        try await Self.mailer(server).send(Self.message)
        #expect(try server.messages(to: "alice@example.com").count == 1)
    }

    @Test func fallsBackToAuthLoginWhenPlainIsNotOffered() async throws {
        let server = try await SMTPTestServer.start(security: "starttls", authentication: true, loginOnly: true)
        defer { Task { await server.remove() } }
        try await Self.mailer(server).send(Self.message)
        #expect(try server.messages(to: "alice@example.com").count == 1)
        let refused = await Self.failure(try Self.mailer(server, password: "wrong-password"))
        #expect(refused?.reason.contains("AUTH LOGIN (password)") == true)
        #expect(refused?.reason.contains("wrong-password") == false)
    }

    @Test func refusesWrongPasswordWithoutSending() async throws {
        try await SMTPTestServer.withOwn { server in
            let refused = await Self.failure(try Self.mailer(server, password: "wrong-password"))
            #expect(refused?.reason.contains("535") == true)
            #expect(refused?.reason.contains("wrong-password") == false)
            #expect(try server.messages().isEmpty)
        }
    }

    @Test func neverFallsBackToPlainTextWhenStartTLSIsMissing() async throws {
        let server = try await SMTPTestServer.start(security: "none", authentication: false)
        defer { Task { await server.remove() } }
        let refused = await Self.failure(try Self.mailer(server, security: .starttls))
        #expect(refused?.reason.contains("does not offer STARTTLS") == true)
        #expect(try server.messages().isEmpty)
    }

    @Test func refusesACertificateItDoesNotTrust() async throws {
        try await SMTPTestServer.withOwn { server in
            // Without rootCA the system's CAs apply, and they did not sign the test certificate.
            let refused = await Self.failure(try Self.mailer(server, rootCA: false))
            #expect(refused?.reason.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(refused?.reason ?? "-")")
            #expect(try server.messages().isEmpty)
        }
    }

    @Test func reportsARefusedRecipient() async throws {
        let server = try await SMTPTestServer.start(security: "starttls", authentication: true, refusing: ["nobody@example.com"])
        defer { Task { await server.remove() } }
        var message = Self.message
        message.to = "nobody@example.com"
        let refused = await Self.failure(try Self.mailer(server), message)
        #expect(refused?.recipientRefused == true)
        #expect(refused?.reason.contains("550") == true)
    }

    @Test func reportsAServerThatIsDown() async throws {
        let server = try await SMTPTestServer.start()
        let mailer = try Self.mailer(server)
        await server.remove()
        let refused = await Self.failure(mailer)
        #expect(refused?.reason.contains("cannot connect") == true)
    }

    /// Runs a scripted listener (Python, on a free loopback port) for the length of `body`: for what no
    /// real SMTP server does on purpose, a server that never answers or a man in the middle.
    static func withListener(_ script: String, _ body: (Int) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-listener-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let portFile = folder.appendingPathComponent("port").path
        let program = """
            import socket, time, os
            s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(5)
            open('\(portFile).t', 'w').write(str(s.getsockname()[1])); os.rename('\(portFile).t', '\(portFile)')
            c, _ = s.accept()
            \(script)
            time.sleep(30)
            """
        let (pid, port) = try await ChildProcess.spawnServer(["python3", "-c", program], portFile: portFile, log: folder.appendingPathComponent("log").path)
        do {
            try await body(port)
        } catch {
            await ChildProcess.terminate(pid)
            throw error
        }
        await ChildProcess.terminate(pid)
    }

    @Test func givesUpOnAServerThatNeverAnswers() async throws {
        try await Self.withListener("pass") { port in
            let settings = SMTPSettings(host: "127.0.0.1", port: port, security: .none, timeout: Seconds(1))
            let mailer = try SMTPMailer(settings: settings, from: "noreply@gatehouse.test")
            let refused = await Self.failure(mailer)
            #expect(refused?.reason.contains("within 1 s") == true)
        }
    }

    @Test func theDeadlineSumsTheServersTimeAcrossReplies() async throws {
        // Each reply alone comes well inside the deadline; together they do not.
        let script = """
            f = c.makefile('rb')
            time.sleep(0.7); c.sendall(b'220 mx ESMTP\\r\\n'); f.readline()
            time.sleep(0.7); c.sendall(b'250 mx\\r\\n'); f.readline()
            time.sleep(0.7); c.sendall(b'250 OK\\r\\n')
            """
        try await Self.withListener(script) { port in
            let settings = SMTPSettings(host: "127.0.0.1", port: port, security: .none, timeout: Seconds(1))
            let refused = await Self.failure(try SMTPMailer(settings: settings, from: "noreply@gatehouse.test"))
            #expect(refused?.reason.contains("within 1 s (mail.smtp.timeout)") == true, "refused with: \(refused?.reason ?? "nothing")")
        }
    }

    @Test func refusesRepliesInjectedInPlainTextAfterSTARTTLS() async throws {
        // A man in the middle appends a forged reply to the server's STARTTLS answer, hoping it is
        // read as if it came over TLS.
        let script = """
            f = c.makefile('rb')
            c.sendall(b'220 mx ESMTP\\r\\n'); f.readline()
            c.sendall(b'250-mx\\r\\n250 STARTTLS\\r\\n'); f.readline()
            c.sendall(b'220 go ahead\\r\\n250-forged\\r\\n250 AUTH PLAIN\\r\\n')
            """
        try await Self.withListener(script) { port in
            // The timeout is not what this test is about: generous, so that a loaded machine (every
            // suite at once in CI) cannot turn the refusal into a timeout.
            let settings = SMTPSettings(host: "127.0.0.1", port: port, security: .starttls, timeout: Seconds(30))
            let mailer = try SMTPMailer(settings: settings, from: "noreply@gatehouse.test")
            let refused = await Self.failure(mailer)
            #expect(refused?.reason.contains("plain text after its STARTTLS reply") == true, "refused with: \(refused?.reason ?? "nothing")")
        }
    }

    @Test func refusesAnAddressThatIsNotOne() async throws {
        try await SMTPTestServer.withOwn { server in
            var message = Self.message
            message.to = "alice@example.com>\r\nRCPT TO:<mallory@example.com"
            let refused = await Self.failure(try Self.mailer(server), message)
            #expect(refused?.recipientRefused == true)
            #expect(try server.messages().isEmpty)
        }
    }

    @Test func encodesNonASCIIHeadersAndKeepsLinesShort() {
        let rendered = MIMEMessage.render(
            EmailMessage(to: "a@example.com", subject: "Dein Code für Notizen: 123456", text: String(repeating: "x", count: 300)),
            from: "Zoë <noreply@example.com>", date: Date(timeIntervalSince1970: 0), messageID: "id@example.com"
        )
        #expect(rendered.contains("Subject: =?UTF-8?B?"))
        #expect(MIMEMessage.encodeHeader("a\u{0B}b\u{7F}c\r\nBcc: x") == "a b c  Bcc: x")
        #expect(rendered.contains("From: =?UTF-8?B?"))
        #expect(rendered.contains("Date: Thu, 01 Jan 1970 00:00:00 +0000"))
        #expect(rendered.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 78 })
        #expect(!rendered.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        #expect(MIMEMessage.dotStuffed(".hidden\r\nshown\r\n..two") == "..hidden\r\nshown\r\n...two")
    }
}

extension GatehouseMailTests {
    /// `/readyz` asks the mailer: healthy while the server greets, unhealthy (with the reason) when
    /// nothing answers, healthy again when it is back.
    @Test func healthFollowsTheServer() async throws {
        try await SMTPTestServer.withOwn { server in
            #expect(await (try Self.mailer(server)).health().healthy)
            var closed = SMTPSettings(host: "127.0.0.1", port: 9, security: .none)
            closed.connectTimeout = Seconds(2)
            let down = await (try SMTPMailer(settings: closed, from: "Gatehouse <noreply@gatehouse.test>")).health()
            #expect(!down.healthy && down.detail?.contains("127.0.0.1:9") == true, "\(down)")
        }
    }
}
