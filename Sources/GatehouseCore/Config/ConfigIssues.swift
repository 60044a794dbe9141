import Foundation
import GatehousePluginKit

/// Every mistake found in a config, in file order.
public struct ConfigIssues: Error, Sendable, CustomStringConvertible {
    /// The issues, in file order.
    public var issues: [ConfigIssue]

    /// Issues found together.
    public init(_ issues: [ConfigIssue]) { self.issues = issues }

    /// One issue per line.
    public var description: String { issues.map(\.description).joined(separator: "\n") }
}
