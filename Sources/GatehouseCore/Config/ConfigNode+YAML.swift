import Foundation
import Yams

/// Reading config files: YAML into config nodes, with `${NAME}` substitution.
extension ConfigNode {
    /// Parses YAML and substitutes `${NAME}` (or `${NAME:-default}`) in every scalar from `environment`.
    /// Throws only when the text is not YAML; each variable that is not set is returned as an issue with
    /// its path (and reads as null), so that the rest of the document is still checked.
    public static func parse(yaml text: String, environment: [String: String]) throws(ConfigIssues) -> (node: ConfigNode, issues: [ConfigIssue]) {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw ConfigIssues([ConfigIssue(path: "", "not valid YAML: \(error)")])
        }
        guard let root else { return (.mapping([]), []) }
        var issues: [ConfigIssue] = []
        let node = convert(root, path: [], environment: environment, issues: &issues)
        return (node, issues)
    }

    private static func convert(_ node: Node, path: [any CodingKey], environment: [String: String], issues: inout [ConfigIssue]) -> ConfigNode {
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain, ["", "~", "null", "Null", "NULL"].contains(scalar.string) { return .null }
            do {
                return .scalar(try EnvironmentSubstitution.apply(to: scalar.string, environment: environment))
            } catch {
                issues.append(ConfigIssue(path: path, error.message))
                return .null
            }
        case .sequence(let sequence):
            return .sequence(
                sequence.enumerated().map { index, element in
                    convert(element, path: path + [ConfigIssue.Key(index: index)], environment: environment, issues: &issues)
                })
        case .mapping(let mapping):
            var entries: [Entry] = []
            for (keyNode, valueNode) in mapping {
                let key = keyNode.string ?? "\(keyNode)"
                if entries.contains(where: { $0.key == key }) {
                    issues.append(ConfigIssue(path: path + [ConfigIssue.Key(key)], "key appears twice"))
                    continue
                }
                entries.append(Entry(key: key, value: convert(valueNode, path: path + [ConfigIssue.Key(key)], environment: environment, issues: &issues)))
            }
            return .mapping(entries)
        case .alias:
            issues.append(ConfigIssue(path: path, "YAML aliases are not supported; write the value out"))
            return .null
        }
    }
}

/// `${NAME}` and `${NAME:-default}` substitution, so secrets stay out of the config file.
public enum EnvironmentSubstitution {
    public struct Failure: Error, Sendable { public var message: String }

    public static func apply(to text: String, environment: [String: String]) throws(Failure) -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[rest.startIndex..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw Failure(message: "unterminated '${' in value")
            }
            let expression = rest[start.upperBound..<end]
            let name: Substring
            let fallback: Substring?
            if let separator = expression.range(of: ":-") {
                name = expression[expression.startIndex..<separator.lowerBound]
                fallback = expression[separator.upperBound...]
            } else {
                name = expression
                fallback = nil
            }
            guard !name.isEmpty, name.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }) else {
                throw Failure(message: "'${\(expression)}' is not a valid environment variable reference")
            }
            if let value = environment[String(name)] {
                result += value
            } else if let fallback {
                result += fallback
            } else {
                throw Failure(message: "environment variable \(name) is not set")
            }
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}
