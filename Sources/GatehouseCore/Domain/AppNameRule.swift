import Foundation

/// The rule for an app's display name, which every sign-in page shows: 1 to 100 characters, no
/// control or formatting characters (line breaks, bidirectional overrides), not only spaces.
public enum AppNameRule {
    public static let maxLength = 100

    /// Why `name` may not be an app's name, or nil when it may.
    public static func problem(_ name: String) -> String? {
        if name.trimmingCharacters(in: .whitespaces).isEmpty { return "must not be empty" }
        if name.count > maxLength { return "must be at most \(maxLength) characters (it has \(name.count))" }
        if name.unicodeScalars.contains(where: { [.control, .format, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory) }) {
            return "must not contain control or formatting characters (line breaks, tabs, direction overrides)"
        }
        return nil
    }

    /// Throws the name's problem at its exact path.
    public static func check(_ name: String, path: [any CodingKey]) throws {
        if let problem = problem(name) { throw ConfigIssue(path: path, problem) }
    }
}
