import Foundation
import GatehouseCore
@testable import GatehouseServer
import Testing

/// Every text a page template shows comes from the catalogs, complete in every language; the
/// language follows `ui_locales`, then `Accept-Language`, then the app's default.
extension GatehouseServerTests {
    @Test func pageTemplatesHoldNoTextOfTheirOwn() throws {
        for (name, text) in PageRenderer.builtInTemplates where name != "autoPostScript" {
            var visible = text.replacingOccurrences(of: #"<style>[\s\S]*?</style>"#, with: "", options: .regularExpression)
            visible = visible.replacingOccurrences(of: #"\{\{[^}]*\}\}\}?"#, with: "", options: .regularExpression)
            visible = visible.replacingOccurrences(of: #"<[^>]*>"#, with: "", options: .regularExpression)
            visible = visible.replacingOccurrences(of: #"&[a-z]+;"#, with: "", options: .regularExpression)
            #expect(!visible.contains { $0.isLetter }, "template \(name) shows its own text: \(visible.filter { !$0.isWhitespace }.prefix(80))")
        }
    }

    @Test func everyPageTextIsTranslatedIntoEveryLanguage() {
        for (id, english) in PageTexts.english {
            for language in PageCatalog.languages where language != "en" {
                #expect(PageCatalog.texts[english]?[language] != nil, "\(id) ('\(english)') has no \(language) text")
            }
        }
    }

    @Test func aPagesLanguageFollowsUILocalesThenAcceptLanguageThenTheApp() {
        #expect(LanguageChoice.choose(uiLocales: "ja nl-BE", acceptLanguage: "de", appDefault: "fr") == "nl")
        #expect(LanguageChoice.choose(uiLocales: nil, acceptLanguage: "ja, es;q=0.8, de;q=0.9", appDefault: "fr") == "de")
        #expect(LanguageChoice.choose(uiLocales: "ja", acceptLanguage: "ja", appDefault: "fr-CA") == "fr")
        #expect(LanguageChoice.choose(uiLocales: nil, acceptLanguage: "de;q=0", appDefault: nil) == "en")
        #expect(PageTexts.values(language: "ar")["direction"] == "rtl" && PageTexts.values(language: "de")["direction"] == "ltr")
    }
}
