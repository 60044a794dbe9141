import Foundation
import GatehouseCore

/// A real SMTP server for tests (Tests/email/smtp_server.py on aiosmtpd, from the test venv that
/// `make test` creates): it listens on a free loopback port, with STARTTLS, implicit TLS or neither,
/// optionally requiring AUTH, and writes every delivered message to a folder the test reads.
public final class SMTPTestServer: SharedTestPeer {
    public static let suitePeer = TaskLocal<SMTPTestServer?>(wrappedValue: nil)

    public static let username = "gatehouse-mailer"
    public static let password = "smtp-password-for-tests"

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public let folder: URL
    public let port: Int
    public let security: String
    let pid: pid_t

    /// The CA file that signs the server's certificate (for `mail.smtp.rootCA`).
    public var certificate: String { folder.appendingPathComponent("cert.pem").path }
    var maildir: URL { folder.appendingPathComponent("mail") }

    private init(folder: URL, port: Int, security: String, pid: pid_t) {
        self.folder = folder
        self.port = port
        self.security = security
        self.pid = pid
    }

    /// STARTTLS with AUTH required: the usual submission setup.
    public static func start() async throws -> SMTPTestServer {
        try await start(security: "starttls", authentication: true)
    }

    /// `security` is `none`, `starttls` or `tls`; `refusing` addresses get 550 at RCPT TO; `loginOnly`
    /// offers AUTH LOGIN without PLAIN.
    public static func start(security: String, authentication: Bool, refusing: [String] = [], loginOnly: Bool = false) async throws -> SMTPTestServer {
        let python = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] ?? repository.appendingPathComponent(".build/test-venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ChildProcessError(message: "no Python with aiosmtpd at \(python): run `make test` (it creates .build/test-venv) or set GATEHOUSE_TEST_PYTHON")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-smtp-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cert = folder.appendingPathComponent("cert.pem").path
        let key = folder.appendingPathComponent("key.pem").path
        let made = await ChildProcess.run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ])
        guard made.status == 0 else { throw ChildProcessError(message: "openssl could not make the test certificate: \(made.output)") }
        let portFile = folder.appendingPathComponent("port").path
        var arguments = [
            python, repository.appendingPathComponent("Tests/email/smtp_server.py").path, "--maildir", folder.appendingPathComponent("mail").path,
            "--port-file", portFile, "--security", security, "--cert", cert, "--key", key,
        ]
        if authentication { arguments += ["--username", username, "--password", password] }
        for address in refusing { arguments += ["--refuse", address] }
        if loginOnly { arguments.append("--login-only") }
        let (pid, port) = try await ChildProcess.spawnServer(arguments, portFile: portFile, log: folder.appendingPathComponent("server.log").path)
        return SMTPTestServer(folder: folder, port: port, security: security, pid: pid)
    }

    public func remove() async {
        await ChildProcess.terminate(pid)
        try? FileManager.default.removeItem(at: folder)
    }

    /// The `mail:` section that sends through this server.
    public func mailYAML(authentication: Bool = true, from: String = "Gatehouse <noreply@gatehouse.test>") -> String {
        var yaml = """
            mail:
              transport: smtp
              from: \(from)
              smtp:
                host: 127.0.0.1
                port: \(port)
                security: \(security)
                rootCA: \(certificate)
                timeout: 10s
            """
        if authentication { yaml += "\n    username: \(Self.username)\n    password: \(Self.password)" }
        return yaml
    }

    /// Every message delivered so far, oldest first.
    public func messages() throws -> [DeliveredMail] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: maildir.path)) ?? []
        return try names.filter { $0.hasSuffix(".eml") && !$0.hasPrefix(".") }.sorted().map {
            DeliveredMail(raw: try String(contentsOf: maildir.appendingPathComponent($0), encoding: .utf8))
        }
    }

    /// The messages delivered to `address`.
    public func messages(to address: String) throws -> [DeliveredMail] {
        try messages().filter { $0.envelopeRecipients.contains(address.lowercased()) }
    }

    /// The code in the newest message to `address`.
    public func latestCode(to address: String) throws -> String {
        guard let message = try messages(to: address).last, let code = message.code else {
            throw ChildProcessError(message: "no code was delivered to \(address)")
        }
        return code
    }
}

/// One message as the SMTP server received it, with its MIME parts decoded.
public struct DeliveredMail: Sendable {
    public let raw: String
    public let headers: [String: String]
    public let text: String
    public let html: String?

    init(raw: String) {
        self.raw = raw
        let (headers, body) = Self.split(raw)
        self.headers = headers
        let parts = Self.parts(headers: headers, body: body)
        self.text = parts.first { $0.type.hasPrefix("text/plain") }?.content ?? ""
        self.html = parts.first { $0.type.hasPrefix("text/html") }?.content
    }

    public var subject: String { headers["subject"] ?? "" }
    /// The subject with its RFC 2047 encoded words (`=?UTF-8?B?…?=`, as the mailer writes non-ASCII) decoded.
    public var decodedSubject: String {
        subject.split(separator: " ").map { word -> String in
            let parts = word.split(separator: "?")
            guard word.hasPrefix("=?"), word.hasSuffix("?="), parts.count == 5, parts[2].uppercased() == "B", let data = Data(base64Encoded: String(parts[3]))
            else { return String(word) }
            return String(decoding: data, as: UTF8.self)
        }.joined()
    }
    var envelopeRecipients: [String] { (headers["x-envelope-to"] ?? "").lowercased().split(separator: ",").map(String.init) }

    /// The first run of 6 to 10 digits in the plain-text part.
    public var code: String? {
        text.split(whereSeparator: { !$0.isNumber }).first { (6...10).contains($0.count) }.map(String.init)
    }

    static func split(_ text: String) -> (headers: [String: String], body: String) {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        let pieces = normalized.components(separatedBy: "\n\n")
        var headers: [String: String] = [:]
        var current: String?
        for line in pieces[0].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.first == " " || line.first == "\t", let name = current {
                headers[name, default: ""] += " " + line.trimmingCharacters(in: .whitespaces)
            } else if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                current = name
            }
        }
        return (headers, pieces.dropFirst().joined(separator: "\n\n"))
    }

    static func parts(headers: [String: String], body: String) -> [(type: String, content: String)] {
        let type = headers["content-type"] ?? "text/plain"
        if type.hasPrefix("multipart/"), let range = type.range(of: "boundary=\"") {
            let boundary = type[range.upperBound...].prefix { $0 != "\"" }
            return body.components(separatedBy: "--\(boundary)").dropFirst().filter { !$0.hasPrefix("--") }.flatMap { part in
                let (partHeaders, partBody) = split(part.trimmingCharacters(in: .newlines))
                return parts(headers: partHeaders, body: partBody)
            }
        }
        let content: String
        if headers["content-transfer-encoding"]?.lowercased() == "base64" {
            content = Data(base64Encoded: body.components(separatedBy: .whitespacesAndNewlines).joined()).map { String(decoding: $0, as: UTF8.self) } ?? ""
        } else {
            content = body
        }
        return [(type, content)]
    }
}
