import Foundation
import GatehouseCore

/// Which of the supported languages a page speaks: the first of the app's request's `ui_locales`
/// (OpenID Connect Core 3.1.2.1, a space-separated list of BCP 47 tags, most preferred first) that
/// is supported, else the best of the browser's `Accept-Language` (RFC 9110 section 12.5.4, by
/// `q`), else the app's default, else English. A tag matches by its primary language (`de-CH` is
/// German).
enum LanguageChoice {
    static func choose(uiLocales: String?, acceptLanguage: String?, appDefault: String?, supported: [String] = TextTranslations.languages) -> String {
        if let language = preferred(uiLocales: uiLocales, acceptLanguage: acceptLanguage, supported: supported) { return language }
        if let appDefault, let language = appDefault.split(separator: "-").first.map({ $0.lowercased() }), supported.contains(language) { return language }
        return "en"
    }

    /// The language the request asks for (`ui_locales`, else `Accept-Language`) among `supported`;
    /// nil when it names none of them (the app's default decides then).
    static func preferred(uiLocales: String?, acceptLanguage: String?, supported: [String] = TextTranslations.languages) -> String? {
        func primary(_ tag: some StringProtocol) -> String? {
            let language = tag.split(separator: "-").first.map { $0.lowercased() } ?? ""
            return supported.contains(language) ? language : nil
        }
        for tag in (uiLocales ?? "").split(separator: " ") {
            if let language = primary(tag) { return language }
        }
        let ranked = (acceptLanguage ?? "").split(separator: ",").enumerated().compactMap { index, item -> (String, Double, Int)? in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, !tag.isEmpty, tag != "*" else { return nil }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            guard quality > 0, let language = primary(tag) else { return nil }
            return (language, quality, index)
        }
        return ranked.sorted(by: { $0.1 != $1.1 ? $0.1 > $1.1 : $0.2 < $1.2 }).first?.0
    }

    /// Languages written right to left, for `dir="rtl"`.
    static let rightToLeft: Set = ["ar", "he", "fa", "ur"]
}
