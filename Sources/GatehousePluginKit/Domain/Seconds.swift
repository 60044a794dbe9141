/// A length of time in whole seconds, written in config either as a number of seconds (`900`) or with a
/// unit (`15m`, `1h`, `30d`, `45s`). Stored and sent as a plain number of seconds.
public struct Seconds: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The number of seconds.
    public var value: Int
    /// So many seconds.
    public init(_ value: Int) { self.value = value }

    /// So many minutes.
    public static func minutes(_ value: Int) -> Seconds { Seconds(value * 60) }
    /// So many hours.
    public static func hours(_ value: Int) -> Seconds { Seconds(value * 3600) }
    /// So many days.
    public static func days(_ value: Int) -> Seconds { Seconds(value * 86400) }

    /// As a `TimeInterval`.
    public var timeInterval: Double { Double(value) }
    /// `<n>s`.
    public var description: String { "\(value)s" }
    /// Shorter first.
    public static func < (lhs: Seconds, rhs: Seconds) -> Bool { lhs.value < rhs.value }

    /// Parses `900`, `900s`, `15m`, `1h` or `30d`; nil for anything else.
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let number = Int(trimmed) {
            self.value = number
        } else if let unit = trimmed.last, let factor = units[unit], let number = Int(trimmed.dropLast()) {
            // A number too large to be a duration is not one (rather than a trap on overflow).
            let (product, overflow) = number.multipliedReportingOverflow(by: factor)
            guard !overflow else { return nil }
            self.value = product
        } else {
            return nil
        }
    }

    /// Reads a number of seconds, or a duration with a unit (`90s`, `15m`, `1h`, `30d`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            self.value = number
            return
        }
        let text = try container.decode(String.self)
        guard let parsed = Seconds(parsing: text) else {
            throw ConfigIssue(path: decoder.codingPath, "not a duration: '\(text)' (use seconds, or a number with s, m, h or d)")
        }
        self = parsed
    }

    /// Writes the number of seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

import Foundation
