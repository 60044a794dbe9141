import Foundation

/// What an audited change changed, read from the event's `before` and `after` details (the whole
/// app as JSON, before and after): one line per value that differs, such as
/// `statelessAuthentication: off → on` or `redirectURIs: +https://app.example/cb`, so that a reader
/// sees at once that only one switch moved. Computed when events are read, so events recorded
/// before this existed read the same way.
public struct AuditChange: Sendable, Hashable, Codable {
    /// Where the value sits, relative to the policy for a policy change (`lockout.maxFailures`),
    /// else to the app (`name`, `policy.dpop`).
    public var path: String
    /// The value before, as text (`off`/`on` for switches); nil when the key was not there.
    public var before: String?
    /// The value after; nil when the key is gone.
    public var after: String?
    /// For a list of plain values: what joined it and what left it (then `before`/`after` are nil).
    public var added: [String]
    public var removed: [String]

    enum CodingKeys: String, CodingKey { case path, before, after, added, removed, summary }

    public init(path: String, before: String?, after: String?, added: [String], removed: [String]) {
        self.path = path
        self.before = before
        self.after = after
        self.added = added
        self.removed = removed
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        path = try container.decode(String.self, forKey: .path)
        before = try container.decodeIfPresent(String.self, forKey: .before)
        after = try container.decodeIfPresent(String.self, forKey: .after)
        added = try container.decodeIfPresent([String].self, forKey: .added) ?? []
        removed = try container.decodeIfPresent([String].self, forKey: .removed) ?? []
    }

    /// The fields, and `summary` for clients that only show the line.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encodeIfPresent(before, forKey: .before)
        try container.encodeIfPresent(after, forKey: .after)
        try container.encode(added, forKey: .added)
        try container.encode(removed, forKey: .removed)
        try container.encode(summary, forKey: .summary)
    }

    /// The change as one line: `path: before → after`, or `path: +added -removed`.
    public var summary: String {
        if !added.isEmpty || !removed.isEmpty {
            return "\(path): " + (added.map { "+\($0)" } + removed.map { "-\($0)" }).joined(separator: " ")
        }
        return "\(path): \(before ?? "(none)") → \(after ?? "(none)")"
    }

    /// The changes an event records; none when it holds no `before`/`after` pair (an event that is
    /// not a change of an app, or a creation or deletion, whose one side says it all).
    public static func of(_ event: AuditEvent) -> [AuditChange] {
        guard let beforeText = event.details["before"], let afterText = event.details["after"],
            let before = try? JSONDecoder().decode(JSONValue.self, from: Data(beforeText.utf8)),
            let after = try? JSONDecoder().decode(JSONValue.self, from: Data(afterText.utf8))
        else { return [] }
        var changes: [AuditChange] = []
        compare(before, after, path: "", into: &changes)
        changes.removeAll { ignoredPaths.contains($0.path) }
        if event.type.hasPrefix("policy.") {
            changes = changes.map { change in
                var change = change
                if change.path.hasPrefix("policy.") { change.path.removeFirst("policy.".count) }
                return change
            }
        }
        return changes
    }

    /// Bookkeeping every change moves: not what anyone changed.
    static let ignoredPaths: Set<String> = ["version", "updatedAt"]

    private static func compare(_ before: JSONValue?, _ after: JSONValue?, path: String, into changes: inout [AuditChange]) {
        if before == after { return }
        switch (before, after) {
        case (.object(let old)?, .object(let new)?):
            for key in Set(old.keys).union(new.keys).sorted() {
                compare(old[key], new[key], path: path.isEmpty ? key : "\(path).\(key)", into: &changes)
            }
        case (.array(let old)?, .array(let new)?) where (old + new).allSatisfy(isPlain):
            let oldTexts = old.map(text)
            let newTexts = new.map(text)
            let added = newTexts.filter { !oldTexts.contains($0) }
            let removed = oldTexts.filter { !newTexts.contains($0) }
            if added.isEmpty && removed.isEmpty {
                // Same members, another order.
                changes.append(AuditChange(path: path, before: oldTexts.joined(separator: ", "), after: newTexts.joined(separator: ", "), added: [], removed: []))
            } else {
                changes.append(AuditChange(path: path, before: nil, after: nil, added: added, removed: removed))
            }
        default:
            changes.append(
                AuditChange(path: path, before: before.flatMap(presentText), after: after.flatMap(presentText), added: [], removed: []))
        }
    }

    private static func isPlain(_ value: JSONValue) -> Bool {
        switch value {
        case .object, .array: false
        default: true
        }
    }

    /// A value as a reader wants it: switches as off/on, text without quotes, null as absent.
    private static func presentText(_ value: JSONValue) -> String? {
        value == .null ? nil : text(value)
    }

    private static func text(_ value: JSONValue) -> String {
        switch value {
        case .bool(let flag): flag ? "on" : "off"
        case .string(let string): string
        case .number(let number): Int(exactly: number).map(String.init) ?? String(number)
        case .null: "(none)"
        default: String(decoding: value.serialized(), as: UTF8.self)
        }
    }
}

/// An audit event as the admin API and console read it: the event, and what it changed.
public struct AuditEntry: Sendable, Encodable {
    public var event: AuditEvent
    public var changes: [AuditChange]

    public init(_ event: AuditEvent) {
        self.event = event
        self.changes = AuditChange.of(event)
    }

    enum CodingKeys: String, CodingKey { case changes }

    /// The event's own fields, with `changes` beside them.
    public func encode(to encoder: any Encoder) throws {
        try event.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(changes, forKey: .changes)
    }
}
