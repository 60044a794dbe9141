import Foundation
import GatehouseCore

/// Every text a person sees from the broker, in every language it speaks: the pages' own texts
/// (`PageCatalog`), the broker's flow messages (`CoreMessages`) and the registered plugins'
/// declared translations (`PluginFactory.translations`). Looks a text up by its English form; a
/// message built at run time ("Use at least 12 characters.") is found through the text with
/// placeholders it was made from, and its values go into the translation.
struct MessageCatalog: Sendable {
    let translations: TextTranslations
    /// The texts with `{placeholders}`, split into their literal parts, for run-time messages.
    private let patterns: [(english: String, parts: [Substring], names: [String])]

    /// `accountPage`: with the account page's own texts too (kept out of the sign-in pages' catalog,
    /// whose run-time messages they could otherwise half match, as "Remove {label}" would).
    init(plugins: TextTranslations = TextTranslations(), accountPage: Bool = false) {
        var own = TextTranslations(PageCatalog.texts).merging(TextTranslations(CoreMessages.texts)).merging(PasswordPolicy.translations)
            .merging(ConsentPurposes.translations)
        if accountPage { own = own.merging(TextTranslations(AccountTexts.texts)) }
        translations = own.merging(plugins)
        patterns = translations.texts.keys.sorted().compactMap { english in
            // Email templates' `{{code}}` are not placeholders of run-time messages.
            guard english.contains("{"), !english.contains("{{") else { return nil }
            var parts: [Substring] = []
            var names: [String] = []
            var rest = english[...]
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                parts.append(rest[..<open])
                names.append(String(rest[rest.index(after: open)..<close]))
                rest = rest[rest.index(after: close)...]
            }
            parts.append(rest)
            return (english, parts, names)
        }
    }

    /// Whether `text` has a translation in `language`, as it is or through the text with
    /// placeholders it was made from (English always has).
    func has(_ text: String, in language: String) -> Bool {
        guard language != "en", translations.texts[text]?[language] == nil else { return true }
        return patterns.contains { Self.match(text, $0.parts) != nil && translations.texts[$0.english]?[language] != nil }
    }

    /// `text` in `language`: its translation, or the translation of the text with placeholders it was
    /// made from (each value translated too, when the catalog has it); as it is otherwise.
    func text(_ text: String, in language: String) -> String {
        guard language != "en" else { return text }
        if let translated = translations.texts[text]?[language] { return translated }
        for pattern in patterns {
            guard let values = Self.match(text, pattern.parts) else { continue }
            guard let translated = translations.texts[pattern.english]?[language] else { continue }
            var filled: [String: String] = [:]
            for (name, value) in zip(pattern.names, values) { filled[name] = self.value(value, in: language) }
            return TextTranslations.fill(translated, filled)
        }
        return text
    }

    /// What a person is told of a refusal in `language`: its message translated, else (rather than
    /// English amid another language) what its kind of failure means.
    func text(of error: BrokerError, in language: String) -> String {
        guard language != "en" else { return error.message }
        let translated = text(error.message, in: language)
        if translated != error.message || translations.texts[error.message] != nil { return translated }
        return text(CoreMessages.generic(error.kind), in: language)
    }

    /// A value put into a message, translated when the catalog has it: also when the English message
    /// lowercased its first letter ("for this account"), since translations put such a value where
    /// its capital fits.
    private func value(_ value: String, in language: String) -> String {
        if let translated = translations.texts[value]?[language] { return translated }
        guard let first = value.first, first.isLowercase else { return value }
        return translations.texts[first.uppercased() + value.dropFirst()]?[language] ?? value
    }

    /// The placeholder values when `text` is `parts` with values between them.
    private static func match(_ text: String, _ parts: [Substring]) -> [String]? {
        guard let first = parts.first, text.hasPrefix(first) else { return nil }
        var rest = text.dropFirst(first.count)
        var values: [String] = []
        for (index, part) in parts.enumerated().dropFirst() {
            let isLast = index == parts.count - 1
            if isLast {
                guard rest.hasSuffix(part), rest.count > part.count else { return nil }
                values.append(String(rest.dropLast(part.count)))
                return values
            }
            guard !part.isEmpty, let range = rest.range(of: part), range.lowerBound > rest.startIndex else { return nil }
            values.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        return values
    }
}
