import Foundation

/// `mail:` — how the broker sends email (one-time codes). See docs/configuration.md.
public struct MailConfig: Sendable, Decodable {
    /// Where messages go.
    public enum Transport: String, Sendable, Decodable {
        /// No mail: plugins that need it refuse to start.
        case none
        case smtp
        /// Printed to the log, codes included: `environment: development` only.
        case log
    }

    public var transport: Transport
    /// The `From:` header, `noreply@example.com` or `Example <noreply@example.com>`.
    public var from: String
    public var smtp: SMTPSettings?

    public init(transport: Transport = .none, from: String = "gatehouse@localhost.localdomain", smtp: SMTPSettings? = nil) {
        self.transport = transport
        self.from = from
        self.smtp = smtp
    }

    enum CodingKeys: String, CodingKey { case transport, from, smtp }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath
        let name = try container.decodeIfPresent(String.self, forKey: .transport) ?? "none"
        guard let transport = Transport(rawValue: name) else {
            throw ConfigIssue(path: path + [CodingKeys.transport], "must be none, smtp or log, got '\(name)'")
        }
        self.transport = transport
        self.smtp = try container.decodeIfPresent(SMTPSettings.self, forKey: .smtp)
        let from = try container.decodeIfPresent(String.self, forKey: .from)
        self.from = from ?? "gatehouse@localhost.localdomain"
        if transport == .smtp, smtp == nil {
            throw ConfigIssue(path: path + [CodingKeys.smtp], "is required with transport smtp (host, port, security...)")
        }
        if transport == .smtp, from == nil {
            throw ConfigIssue(path: path + [CodingKeys.from], "is required with transport smtp (e.g. 'Example <noreply@example.com>')")
        }
        guard Self.senderAddress(of: self.from) != nil else {
            throw ConfigIssue(path: path + [CodingKeys.from], "must be an address or 'Name <address>' on one line, got '\(self.from)'")
        }
    }

    /// What this mail setup may not do in `environment`: print codes to the log, or send them in clear
    /// beyond this machine, outside development.
    public func issues(in environment: DeploymentEnvironment) -> [ConfigIssue] {
        guard environment == .production else { return [] }
        var issues: [ConfigIssue] = []
        if transport == .log {
            issues.append(ConfigIssue(path: "mail.transport", "log prints one-time codes to the log; it is allowed only with `environment: development`"))
        }
        if transport == .smtp, let smtp, smtp.security == .none, !LoopbackHost.contains(smtp.host) {
            issues.append(
                ConfigIssue(
                    path: "mail.smtp.security", "none sends codes in clear to '\(smtp.host)'; use starttls or tls (none only to a loopback relay or in development)"))
        }
        return issues
    }

    /// The bare address of a `From:` value (`Name <a@b>` or `a@b`), or nil when it is not one.
    public static func senderAddress(of from: String) -> String? {
        guard !from.contains(where: { $0 == "\r" || $0 == "\n" }) else { return nil }
        var address = from.trimmingCharacters(in: .whitespaces)
        if address.hasSuffix(">"), let open = address.lastIndex(of: "<") {
            address = String(address[address.index(after: open)..<address.index(before: address.endIndex)])
        }
        return EmailAddress(address)?.value
    }
}

/// `mail.smtp:` — the SMTP server (submission) the broker hands messages to.
public struct SMTPSettings: Sendable, Decodable {
    /// How the connection is protected.
    public enum Security: String, Sendable, Decodable {
        /// Plain connect, then `STARTTLS` (which the server must offer); port 587 by default.
        case starttls
        /// TLS from the first byte ("implicit TLS", RFC 8314); port 465 by default.
        case tls
        /// No TLS: only to a relay on the loopback, or in development.
        case none
    }

    public var host: String
    public var port: Int
    public var security: Security
    /// AUTH credentials (PLAIN or LOGIN, whichever the server offers); both or neither.
    public var username: String?
    public var password: String?
    /// A PEM file of the CA certificates to trust instead of the system's.
    public var rootCA: String?
    /// The name sent with `EHLO`.
    public var heloName: String
    public var connectTimeout: Seconds
    /// The longest one delivery may take, from connecting to the server's last reply.
    public var timeout: Seconds

    public init(
        host: String, port: Int, security: Security = .starttls, username: String? = nil, password: String? = nil, rootCA: String? = nil,
        heloName: String = "localhost", connectTimeout: Seconds = Seconds(10), timeout: Seconds = Seconds(30)
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.rootCA = rootCA
        self.heloName = heloName
        self.connectTimeout = connectTimeout
        self.timeout = timeout
    }

    enum CodingKeys: String, CodingKey { case host, port, security, username, password, rootCA, heloName, connectTimeout, timeout }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath
        host = try container.decode(String.self, forKey: .host)
        let name = try container.decodeIfPresent(String.self, forKey: .security) ?? "starttls"
        guard let security = Security(rawValue: name) else {
            throw ConfigIssue(path: path + [CodingKeys.security], "must be starttls, tls or none, got '\(name)'")
        }
        self.security = security
        port = try container.decodeIfPresent(Int.self, forKey: .port) ?? [.starttls: 587, .tls: 465, .none: 25][security]!
        username = try container.decodeIfPresent(String.self, forKey: .username)
        password = try container.decodeIfPresent(String.self, forKey: .password)
        rootCA = try container.decodeIfPresent(String.self, forKey: .rootCA)
        heloName = try container.decodeIfPresent(String.self, forKey: .heloName) ?? "localhost"
        connectTimeout = try container.decodeIfPresent(Seconds.self, forKey: .connectTimeout) ?? Seconds(10)
        timeout = try container.decodeIfPresent(Seconds.self, forKey: .timeout) ?? Seconds(30)

        if host.isEmpty || host.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw ConfigIssue(path: path + [CodingKeys.host], "must be a host name or address, got '\(host)'")
        }
        if !(1...65535).contains(port) { throw ConfigIssue(path: path + [CodingKeys.port], "must be between 1 and 65535, got \(port)") }
        if (username == nil) != (password == nil) {
            throw ConfigIssue(path: path + [username == nil ? CodingKeys.username : CodingKeys.password], "username and password come together")
        }
        if password?.isEmpty == true { throw ConfigIssue(path: path + [CodingKeys.password], "must not be empty") }
        if security == .none, username != nil, !LoopbackHost.contains(host) {
            throw ConfigIssue(path: path + [CodingKeys.security], "none would send the SMTP password in clear to '\(host)'; use starttls or tls")
        }
        if let rootCA, !FileManager.default.isReadableFile(atPath: rootCA) {
            throw ConfigIssue(path: path + [CodingKeys.rootCA], "cannot read the file '\(rootCA)'")
        }
        if heloName.isEmpty || heloName.contains(where: { $0.isWhitespace }) {
            throw ConfigIssue(path: path + [CodingKeys.heloName], "must be one word (a host name), got '\(heloName)'")
        }
        for (key, value) in [(CodingKeys.connectTimeout, connectTimeout), (.timeout, timeout)] where !(1...300).contains(value.value) {
            throw ConfigIssue(path: path + [key], "must be between 1 and 300 seconds, got \(value.value)")
        }
    }
}
