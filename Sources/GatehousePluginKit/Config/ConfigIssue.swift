/// One mistake in the config, named by its exact path (`providers[1].config.url: not a valid URL`).
public struct ConfigIssue: Error, Sendable, Hashable, CustomStringConvertible {
    /// The exact path (`providers[1].config.url`).
    public var path: String
    /// What is wrong there.
    public var message: String

    /// An issue at a rendered path.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// An issue at a coding path.
    public init(path: [any CodingKey], _ message: String) {
        self.init(path: ConfigIssue.render(path), message)
    }

    /// `path: message`.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

extension ConfigIssue {
    /// A coding path as config paths are written: keys joined by dots, indexes in brackets.
    public static func render(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    /// A coding key for building paths by hand.
    public struct Key: CodingKey, Sendable {
        /// The key, or the index as text.
        public var stringValue: String
        /// The index, for a list element.
        public var intValue: Int?
        /// A mapping key.
        public init(_ string: String) {
            self.stringValue = string
            self.intValue = nil
        }
        /// A list index.
        public init(index: Int) {
            self.stringValue = "\(index)"
            self.intValue = index
        }
        /// A mapping key (`CodingKey`).
        public init?(stringValue: String) { self.init(stringValue) }
        /// A list index (`CodingKey`).
        public init?(intValue: Int) { self.init(index: intValue) }
    }
}

extension ConfigIssue {
    /// The issues without the "unknown key" reports of mappings whose decoding stopped at one of the
    /// other issues: those keys were left unread, not mistyped. For people reading one form's errors
    /// (the admin console); the config file and the API keep every report, since a typo next to a
    /// wrong value is worth knowing there.
    package static func withoutKeysLeftUnread(_ issues: [ConfigIssue]) -> [ConfigIssue] {
        func parent(_ path: String) -> String {
            guard let cut = path.lastIndex(where: { $0 == "." || $0 == "[" }) else { return "" }
            return String(path[..<cut])
        }
        let unknown = "unknown key"
        let interrupted = issues.filter { $0.message != unknown }.map { parent($0.path) }
        return issues.filter { issue in
            guard issue.message == unknown else { return true }
            let mapping = parent(issue.path)
            return !interrupted.contains { stopped in
                mapping.isEmpty || stopped == mapping || stopped.hasPrefix(mapping + ".") || stopped.hasPrefix(mapping + "[")
            }
        }
    }
}
