/// The texts the page templates show, by the id a template names them with (`{{t.cancel}}`): a
/// template holds no text of its own, so every page speaks the language chosen for it.
enum PageTexts {
    /// id → English text (translated through `PageCatalog`).
    static let english: [String: String] = [
        "alreadyHaveAccount": "Already have an account?",
        "asksToSignOut": "asks to sign you out.",
        "cancel": "Cancel",
        "code": "Code",
        "continue": "Continue",
        "createAnAccount": "Create an account",
        "deviceFailed": "The device could not be signed in. Start again on the device.",
        "deviceNotSignedIn": "The device was not signed in.",
        "deviceSignedIn": "Your device is signed in. You can go back to it and close this window.",
        "enterDeviceCode": "Enter the code shown on your device.",
        "errorCode": "Error code:",
        "forgotPassword": "Forgot password?",
        "goBack": "Go back to the application you came from and start the sign-in again.",
        "help": "Help",
        "passwordNeeds": "Your password needs",
        "privacy": "Privacy",
        "request": "request",
        "signIn": "Sign in",
        "signOut": "Sign out",
        "signedInAs": "You are signed in as",
        "signedOutClose": "You are signed out. You can close this window.",
        "signingOutEnds": "Signing out ends your session in every app you opened with it.",
        "staySignedIn": "Stay signed in",
        "stillSignedIn": "You are still signed in.",
        "takingYouOn": "Taking you on…",
        "toContinueTo": "to continue to",
    ]

    /// The `t` values of a page in `language`: every id, and the page's `language` and `direction`.
    static func values(language: String) -> [String: String] {
        var values = english.mapValues { PageCatalog.translate($0, to: language) }
        values["language"] = language
        values["direction"] = LanguageChoice.rightToLeft.contains(language) ? "rtl" : "ltr"
        return values
    }
}
