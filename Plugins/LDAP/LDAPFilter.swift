import Foundation
import GatehousePluginKit
import GatehouseSupport

/// Search filters (RFC 4515): escaping what a person types, and building the filters the plugin sends.
enum LDAPFilter {
    /// Escapes a value for use inside a filter, so that `*`, `(`, `)`, `\` and NUL match themselves and
    /// cannot widen a search (`alice)(uid=*` finds nobody). Other bytes pass unchanged: the filter is UTF-8.
    static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "*": escaped += "\\2a"
            case "(": escaped += "\\28"
            case ")": escaped += "\\29"
            case "\\": escaped += "\\5c"
            case "\0": escaped += "\\00"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// `(attribute=value)` with the value escaped. A binary attribute's value is the text the plugin made
    /// of its bytes (base64url, or a GUID): it is turned back into those bytes, each written as `\hh`.
    static func equals(_ attribute: String, _ value: String, format: LDAPValueFormat = .text) -> String {
        if case .text = format { return "(\(attribute)=\(escape(value)))" }
        // Text that stands for no value of the format matches nothing rather than something.
        guard let bytes = format.bytes(value) else { return "(!(objectClass=*))" }
        return "(\(attribute)=\(bytes.map { "\\" + SecretDigest.hex([$0]) }.joined()))"
    }

    /// ANDs an optional configured filter with another one.
    static func and(_ configured: String?, _ filter: String) -> String {
        guard let configured, !configured.isEmpty else { return filter }
        return "(&\(configured)\(filter))"
    }

    /// ORs filters; one filter stays as it is.
    static func or(_ filters: [String]) -> String {
        filters.count == 1 ? filters[0] : "(|\(filters.joined()))"
    }

    /// Refuses a configured filter that cannot be sent as it is: it must be one parenthesised expression.
    static func checkConfigured(_ filter: String?, path: [any CodingKey]) throws {
        guard let filter else { return }
        var depth = 0
        var closedAtEnd = false
        for (offset, character) in filter.enumerated() {
            if character == "(" { depth += 1 }
            if character == ")" {
                depth -= 1
                if depth < 0 { break }
                if depth == 0 { closedAtEnd = offset == filter.count - 1 }
            }
        }
        guard filter.hasPrefix("("), depth == 0, closedAtEnd else {
            throw ConfigIssue(path: path, "'\(filter)' is not one parenthesised LDAP filter, e.g. (objectClass=person)")
        }
    }
}
