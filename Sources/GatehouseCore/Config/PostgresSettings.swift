import Foundation

/// `storage.postgres` — the PostgreSQL database several broker nodes share. Parsed and checked here
/// so that every mistake has its config path; the driver lives in GatehouseStore.
public struct PostgresSettings: Sendable, Decodable, CustomStringConvertible {
    /// How the connection is protected.
    public enum TLSMode: String, Sendable, Codable, CaseIterable {
        /// No TLS: only for a database on this machine (loopback or a Unix socket).
        case disable
        /// TLS, without checking who answers (protects against listeners, not against an impostor):
        /// development, or a database on this machine, only.
        case require
        /// TLS with the server's certificate checked against `rootCA` (or the system's CAs) and its
        /// name against the URL's host.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    /// Never printed (see `description`).
    public var password: String?
    public var database: String
    /// `poolSize`: connections this node keeps at most (default 10).
    public var poolSize: Int
    /// `connectTimeout`: how long a connection attempt, or a wait for a free connection, may take
    /// before the request is answered `503 temporarily_unavailable` (default 5 s).
    public var connectTimeout: Seconds
    public var tls: TLSMode
    /// `rootCA`: a PEM file of the CAs that sign the server's certificate (verify-full).
    public var rootCA: String?

    public init(
        host: String, port: Int = 5432, user: String, password: String?, database: String, poolSize: Int = 10, connectTimeout: Seconds = Seconds(5),
        tls: TLSMode = .disable, rootCA: String? = nil
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.poolSize = poolSize
        self.connectTimeout = connectTimeout
        self.tls = tls
        self.rootCA = rootCA
    }

    /// `postgres://user@host:port/database`, never the password.
    public var summary: String { "postgres://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)" }
    public var description: String { "PostgresSettings(\(summary), tls: \(tls.rawValue), poolSize: \(poolSize))" }

    /// Whether the database runs on this machine, where a connection without TLS is acceptable.
    public var isLocal: Bool { LoopbackHost.contains(host) }

    enum CodingKeys: String, CodingKey { case url, poolSize, connectTimeout, tls, rootCA }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath
        let url = try container.decode(String.self, forKey: .url)
        var parsed: PostgresSettings
        do {
            parsed = try PostgresSettings(url: url)
        } catch {
            throw ConfigIssue(path: path + [CodingKeys.url], error.message)
        }
        if let poolSize = try container.decodeIfPresent(Int.self, forKey: .poolSize) {
            guard (1...500).contains(poolSize) else { throw ConfigIssue(path: path + [CodingKeys.poolSize], "must be between 1 and 500, got \(poolSize)") }
            parsed.poolSize = poolSize
        }
        if let timeout = try container.decodeIfPresent(Seconds.self, forKey: .connectTimeout) {
            guard (1...120).contains(timeout.value) else {
                throw ConfigIssue(path: path + [CodingKeys.connectTimeout], "must be between 1s and 120s, got \(timeout)")
            }
            parsed.connectTimeout = timeout
        }
        if let mode = try container.decodeIfPresent(String.self, forKey: .tls) {
            guard let tls = TLSMode(rawValue: mode) else {
                throw ConfigIssue(path: path + [CodingKeys.tls], "must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", ")), got '\(mode)'")
            }
            parsed.tls = tls
        }
        parsed.rootCA = try container.decodeIfPresent(String.self, forKey: .rootCA)
        if parsed.rootCA != nil, parsed.tls != .verifyFull {
            throw ConfigIssue(path: path + [CodingKeys.rootCA], "is only used with tls: verify-full")
        }
        self = parsed
    }

    /// Reads `postgres://user:password@host:port/database[?sslmode=disable|require|verify-full]`
    /// (`postgresql://` too). Without `sslmode`, a database on this machine is reached without TLS and
    /// any other with `verify-full`.
    public init(url text: String) throws(PostgresURLError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme) else {
            throw PostgresURLError("must be a URL of the form postgres://user:password@host:5432/database")
        }
        guard let host = components.host, !host.isEmpty else { throw PostgresURLError("names no host (postgres://user:password@HOST:5432/database)") }
        guard let user = components.user, !user.isEmpty else { throw PostgresURLError("names no user (postgres://USER:password@host:5432/database)") }
        let database = String(components.path.dropFirst())
        guard !database.isEmpty, !database.contains("/") else {
            throw PostgresURLError("names no database (postgres://user:password@host:5432/DATABASE)")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw PostgresURLError("has an invalid port \(port)") }
        // URLComponents' `user`/`password` are already percent-decoded.
        var tls: TLSMode = LoopbackHost.contains(host) ? .disable : .verifyFull
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    throw PostgresURLError("sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tls = mode
            default:
                throw PostgresURLError("has the query parameter '\(item.name)', which Gatehouse does not read (set poolSize, connectTimeout, tls beside url)")
            }
        }
        self.init(
            host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: port, user: user,
            password: components.password.flatMap { $0.isEmpty ? nil : $0 }, database: database, tls: tls
        )
    }

    /// Problems that depend on the environment: outside development, a database on another machine
    /// is reached over TLS with its certificate checked (`require` would hand the password to any
    /// impostor that asks for it in clear).
    public func issues(in environment: DeploymentEnvironment, path: String) -> [ConfigIssue] {
        guard environment == .production, tls != .verifyFull, !isLocal else { return [] }
        return [ConfigIssue(path: "\(path).tls", "must be verify-full outside development for a database on another machine (\(host)), not \(tls.rawValue)")]
    }
}

/// A `storage.postgres.url` that cannot be read.
public struct PostgresURLError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
