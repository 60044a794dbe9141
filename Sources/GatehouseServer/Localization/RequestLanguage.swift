import Foundation
import GatehouseCore
import Hummingbird

extension Request {
    /// The language of a page shown outside a flow's challenge (a provider choice, an error, the
    /// device and sign-out pages): `uiLocales` when the request names it (OIDC's `ui_locales`), else
    /// what this browser's last sign-in chose (`BrowserPages.languageCookie`), else its
    /// `Accept-Language`, else English.
    func pageLanguage(uiLocales: String? = nil) -> String {
        LanguageChoice.choose(
            uiLocales: uiLocales ?? cookies[BrowserPages.languageCookie]?.value, acceptLanguage: headers[.acceptLanguage], appDefault: nil)
    }
}
