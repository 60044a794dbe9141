import GatehousePluginKit
/// The rule for app and provider ids: they appear in URLs, tokens and logs.
public enum Identifier {
    /// The rule, as config errors say it.
    public static let rule = "must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit"

    /// Whether `text` follows the rule.
    public static func isValid(_ text: String) -> Bool {
        guard let first = text.first, (1...64).contains(text.count), first.isASCII, first.isLetter || first.isNumber else { return false }
        return text.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || "._-".contains($0) }
    }
}
