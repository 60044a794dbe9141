/// Optional capability of plugins that talk to an upstream (a directory, an API): they can check their
/// config against it step by step and say exactly which step failed. `gatehouse providers test` prints it.
public protocol ProviderDiagnosing: GatehousePlugin {
    /// Runs the checks in order and stops at the first that fails. With a username (and a password),
    /// the checks go as far as finding (and signing in) that user.
    func diagnose(username: String?, password: String?) async -> [DiagnosticStep]
}

/// One step of a provider check: what was tried, whether it worked, and what was seen.
public struct DiagnosticStep: Sendable, Hashable, Codable {
    /// A short name: `connect`, `tls`, `service bind`, `search`, `bind`, `groups`...
    public var name: String
    public var passed: Bool
    public var detail: String

    public init(name: String, passed: Bool, detail: String) {
        self.name = name
        self.passed = passed
        self.detail = detail
    }
}
