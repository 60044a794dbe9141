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
