/// One step of a provider check: what was tried, whether it worked, and what was seen.
public struct DiagnosticStep: Sendable, Hashable, Codable {
    /// A short name: `connect`, `tls`, `service bind`, `search`, `bind`, `groups`...
    public var name: String
    /// Whether it worked.
    public var passed: Bool
    /// What was seen (an error, a count, a DN).
    public var detail: String

    /// A step.
    public init(name: String, passed: Bool, detail: String) {
        self.name = name
        self.passed = passed
        self.detail = detail
    }
}
