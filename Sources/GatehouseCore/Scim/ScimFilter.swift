import Foundation

/// A SCIM filter (RFC 7644 section 3.4.2.2), parsed, and evaluated against a resource's JSON:
/// `eq ne co sw ew gt ge lt le pr`, `and` (binding tighter than `or`), `not (...)`, parentheses and
/// value paths (`emails[type eq "work" and value co "@example.com"]`). Attribute names ignore case;
/// so do string comparisons, except for `id`, `externalId` and `meta.version` (caseExact).
public indirect enum ScimFilter: Sendable, Equatable {
    case compare(ScimPath, Operator, JSONValue)
    case present(ScimPath)
    case and(ScimFilter, ScimFilter)
    case or(ScimFilter, ScimFilter)
    case not(ScimFilter)
    /// `attribute[filter]`: some value of a multi-valued complex attribute matches the inner filter.
    case valuePath(ScimPath, ScimFilter)

    /// The comparison operators.
    public enum Operator: String, Sendable, CaseIterable {
        case eq, ne, co, sw, ew, gt, ge, lt, le
    }

    /// Filters longer than this are refused: a client needs nothing near it.
    static let maxLength = 4096
    /// Nesting deeper than this is refused, so that a hostile filter cannot exhaust the stack.
    static let maxDepth = 32

    /// Parses a filter, or throws `invalidFilter` naming what is wrong.
    public static func parse(_ text: String) throws(ScimError) -> ScimFilter {
        guard text.utf8.count <= maxLength else { throw .invalidFilter("The filter is longer than \(maxLength) bytes.") }
        var parser = Parser(tokens: try Lexer.tokens(text))
        let filter = try parser.parseOr(depth: 0)
        guard parser.isAtEnd else { throw .invalidFilter("Unexpected '\(parser.peek.map(String.init(describing:)) ?? "")' in the filter.") }
        return filter
    }

    /// The `attribute eq "value"` a filter is, if it is nothing more: what the store can look up by index.
    public var simpleEquality: (attribute: String, value: String)? {
        guard case .compare(let path, .eq, .string(let value)) = self, path.subAttribute == nil else { return nil }
        return (path.attribute, value)
    }

    /// Whether the resource (its full JSON, with `id` and `meta`) matches.
    public func matches(_ resource: [String: JSONValue]) -> Bool {
        switch self {
        case .and(let left, let right): left.matches(resource) && right.matches(resource)
        case .or(let left, let right): left.matches(resource) || right.matches(resource)
        case .not(let inner): !inner.matches(resource)
        case .present(let path): path.values(in: resource).contains { Self.isPresent($0) }
        case .compare(let path, let op, let expected):
            path.values(in: resource).contains { Self.compare($0, op, expected, caseExact: path.isCaseExact) }
        case .valuePath(let path, let inner):
            path.values(in: resource).contains { value in
                if case .object(let element) = value { return inner.matches(element) }
                return false
            }
        }
    }

    static func isPresent(_ value: JSONValue) -> Bool {
        switch value {
        case .null: false
        case .string(let text): !text.isEmpty
        case .array(let values): !values.isEmpty
        case .object(let fields): !fields.isEmpty
        default: true
        }
    }

    static func compare(_ actual: JSONValue, _ op: Operator, _ expected: JSONValue, caseExact: Bool) -> Bool {
        // A complex value compares by its `value` sub-attribute (`emails co "x"`).
        if case .object(let fields) = actual, let inner = fields.first(where: { $0.key.lowercased() == "value" })?.value {
            return compare(inner, op, expected, caseExact: caseExact)
        }
        switch (actual, expected) {
        case (.string(let left), .string(let right)):
            let a = caseExact ? left : left.lowercased()
            let b = caseExact ? right : right.lowercased()
            switch op {
            case .eq: return a == b
            case .ne: return a != b
            case .co: return a.contains(b)
            case .sw: return a.hasPrefix(b)
            case .ew: return a.hasSuffix(b)
            case .gt: return a > b
            case .ge: return a >= b
            case .lt: return a < b
            case .le: return a <= b
            }
        case (.number(let left), .number(let right)):
            switch op {
            case .eq: return left == right
            case .ne: return left != right
            case .gt: return left > right
            case .ge: return left >= right
            case .lt: return left < right
            case .le: return left <= right
            case .co, .sw, .ew: return false
            }
        case (.bool(let left), .bool(let right)):
            return op == .eq ? left == right : op == .ne ? left != right : false
        case (.null, .null):
            return op == .eq
        default:
            return op == .ne
        }
    }

    // MARK: - Lexing

    enum Token: Equatable, CustomStringConvertible {
        case word(String)
        case string(String)
        case number(Double)
        case open, close, openBracket, closeBracket

        var description: String {
            switch self {
            case .word(let word): word
            case .string(let text): "\"\(text)\""
            case .number(let number): "\(number)"
            case .open: "("
            case .close: ")"
            case .openBracket: "["
            case .closeBracket: "]"
            }
        }
    }

    enum Lexer {
        static func tokens(_ text: String) throws(ScimError) -> [Token] {
            var tokens: [Token] = []
            let scalars = Array(text.unicodeScalars)
            var index = 0
            while index < scalars.count {
                let scalar = scalars[index]
                switch scalar {
                case " ", "\t", "\n", "\r":
                    index += 1
                case "(":
                    tokens.append(.open)
                    index += 1
                case ")":
                    tokens.append(.close)
                    index += 1
                case "[":
                    tokens.append(.openBracket)
                    index += 1
                case "]":
                    tokens.append(.closeBracket)
                    index += 1
                case "\"":
                    // A JSON string, escapes included.
                    var end = index + 1
                    var escaped = false
                    while end < scalars.count {
                        if escaped {
                            escaped = false
                        } else if scalars[end] == "\\" {
                            escaped = true
                        } else if scalars[end] == "\"" {
                            break
                        }
                        end += 1
                    }
                    guard end < scalars.count else { throw .invalidFilter("A string in the filter has no closing quote.") }
                    var literal = String.UnicodeScalarView()
                    literal.append(contentsOf: scalars[index...end])
                    guard let value = try? JSONDecoder().decode(String.self, from: Data(String(literal).utf8)) else {
                        throw .invalidFilter("The string \(String(literal)) in the filter is not a valid JSON string.")
                    }
                    tokens.append(.string(value))
                    index = end + 1
                default:
                    var end = index
                    while end < scalars.count, !" \t\n\r()[]\"".unicodeScalars.contains(scalars[end]) { end += 1 }
                    var word = String.UnicodeScalarView()
                    word.append(contentsOf: scalars[index..<end])
                    let text = String(word)
                    if let first = text.unicodeScalars.first, first == "-" || ("0"..."9").contains(first), let number = Double(text) {
                        tokens.append(.number(number))
                    } else {
                        tokens.append(.word(text))
                    }
                    index = end
                }
            }
            return tokens
        }
    }

    // MARK: - Parsing

    struct Parser {
        let tokens: [Token]
        var position = 0

        var isAtEnd: Bool { position >= tokens.count }
        var peek: Token? { isAtEnd ? nil : tokens[position] }

        mutating func next() -> Token? {
            defer { position += 1 }
            return peek
        }

        func isKeyword(_ word: String) -> Bool {
            if case .word(let found) = peek { return found.lowercased() == word }
            return false
        }

        mutating func parseOr(depth: Int) throws(ScimError) -> ScimFilter {
            guard depth < ScimFilter.maxDepth else { throw .invalidFilter("The filter nests deeper than \(ScimFilter.maxDepth) levels.") }
            var left = try parseAnd(depth: depth)
            while isKeyword("or") {
                position += 1
                left = .or(left, try parseAnd(depth: depth))
            }
            return left
        }

        mutating func parseAnd(depth: Int) throws(ScimError) -> ScimFilter {
            var left = try parseUnit(depth: depth)
            while isKeyword("and") {
                position += 1
                left = .and(left, try parseUnit(depth: depth))
            }
            return left
        }

        mutating func parseUnit(depth: Int) throws(ScimError) -> ScimFilter {
            if isKeyword("not") {
                position += 1
                guard next() == .open else { throw .invalidFilter("'not' must be followed by a parenthesised filter.") }
                let inner = try parseOr(depth: depth + 1)
                guard next() == .close else { throw .invalidFilter("A parenthesis in the filter is not closed.") }
                return .not(inner)
            }
            if peek == .open {
                position += 1
                let inner = try parseOr(depth: depth + 1)
                guard next() == .close else { throw .invalidFilter("A parenthesis in the filter is not closed.") }
                return inner
            }
            guard case .word(let name) = next() else { throw .invalidFilter("The filter needs an attribute name here.") }
            let path = try ScimPath.parse(name, forFilter: true)
            if peek == .openBracket {
                position += 1
                let inner = try parseOr(depth: depth + 1)
                guard next() == .closeBracket else { throw .invalidFilter("A '[' in the filter is not closed.") }
                return .valuePath(path, inner)
            }
            guard case .word(let opWord) = next() else { throw .invalidFilter("'\(name)' must be followed by an operator (eq, co, sw, pr, ...).") }
            if opWord.lowercased() == "pr" { return .present(path) }
            guard let op = Operator(rawValue: opWord.lowercased()) else { throw .invalidFilter("'\(opWord)' is not a SCIM filter operator.") }
            let value: JSONValue
            switch next() {
            case .string(let text): value = .string(text)
            case .number(let number): value = .number(number)
            case .word(let word) where word.lowercased() == "true": value = .bool(true)
            case .word(let word) where word.lowercased() == "false": value = .bool(false)
            case .word(let word) where word.lowercased() == "null": value = .null
            default: throw .invalidFilter("'\(name) \(opWord)' needs a value: a quoted string, a number, true, false or null.")
            }
            return .compare(path, op, value)
        }
    }
}
