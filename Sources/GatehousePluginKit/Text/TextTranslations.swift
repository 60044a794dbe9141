import Foundation

/// A plugin's texts in the languages the broker speaks, keyed by their English text (gettext's
/// way): a plugin declares one (`PluginFactory.translations`) for every text a person sees from it —
/// its challenges' titles, prompts, labels and buttons, the errors its flows answer, its emails.
/// The broker's pages and the flow API show each declared text in the flow's language; a plugin
/// reads its own through `text(_:in:_:)` (an email in `FlowContext.language`).
///
/// A text may hold `{name}` placeholders. An error message built at run time ("Use at least 12
/// characters.") is found by the text with placeholders it was made from ("Use at least
/// {minLength} characters."), and the values go into the translation.
public struct TextTranslations: Sendable, Hashable {
    /// The languages every text must have (BCP 47 primary tags), English first.
    public static let languages = ["en", "de", "fr", "es", "nl"]

    /// English text → language → text.
    package var texts: [String: [String: String]]

    /// Translations: English text → language (`de`, `fr`, `es`, `nl`) → text.
    public init(_ texts: [String: [String: String]] = [:]) {
        self.texts = texts
    }

    /// `english` in `language` (as it is when it has no translation there), with each `{name}` in
    /// `values` filled in.
    public func text(_ english: String, in language: String, _ values: [String: String] = [:]) -> String {
        Self.fill(language == "en" ? english : texts[english]?[language] ?? english, values)
    }

    /// `text` with each `{name}` in `values` filled in, in one pass: a value that holds `{name}`
    /// itself (an app's name) is not filled again. Names not in `values` stay as they are.
    package static func fill(_ text: String, _ values: [String: String]) -> String {
        guard !values.isEmpty else { return text }
        var result = ""
        var rest = text[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            let name = String(rest[rest.index(after: open)..<close])
            result += rest[..<open]
            result += values[name] ?? String(rest[open...close])
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// Both sets of texts; `other`'s win where both translate a text.
    package func merging(_ other: TextTranslations) -> TextTranslations {
        TextTranslations(texts.merging(other.texts) { mine, theirs in mine.merging(theirs) { _, new in new } })
    }
}
