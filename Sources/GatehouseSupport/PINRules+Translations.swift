import GatehousePluginKit

extension PINRules {
    /// `check`'s refusals as texts with placeholders, in the languages the broker speaks. A plugin
    /// that checks PINs merges them into its own translations, so the broker tells a refusal in the
    /// flow's language; a plugin's own page asks `refusal(_:in:)`.
    public static let translations = TextTranslations([
        "A PIN may contain digits only.": [
            "de": "Eine PIN darf nur Ziffern enthalten.", "fr": "Un code PIN ne peut contenir que des chiffres.", "es": "Un PIN solo puede contener dígitos.",
            "nl": "Een pincode mag alleen cijfers bevatten.",
        ],
        "Use at least {minLength} digits.": [
            "de": "Verwenden Sie mindestens {minLength} Ziffern.", "fr": "Utilisez au moins {minLength} chiffres.", "es": "Use al menos {minLength} dígitos.",
            "nl": "Gebruik minstens {minLength} cijfers.",
        ],
        "Use at most {maxLength} digits.": [
            "de": "Verwenden Sie höchstens {maxLength} Ziffern.", "fr": "Utilisez au plus {maxLength} chiffres.", "es": "Use como máximo {maxLength} dígitos.",
            "nl": "Gebruik hoogstens {maxLength} cijfers.",
        ],
        "Avoid {maxSequence} or more sequential digits such as 1234 or 4321.": [
            "de": "Vermeiden Sie {maxSequence} oder mehr aufeinanderfolgende Ziffern wie 1234 oder 4321.",
            "fr": "Évitez {maxSequence} chiffres consécutifs ou plus, comme 1234 ou 4321.",
            "es": "Evite {maxSequence} o más dígitos consecutivos, como 1234 o 4321.",
            "nl": "Vermijd {maxSequence} of meer opeenvolgende cijfers zoals 1234 of 4321.",
        ],
        "Avoid {maxRepeated} or more identical digits in a row.": [
            "de": "Vermeiden Sie {maxRepeated} oder mehr gleiche Ziffern hintereinander.", "fr": "Évitez {maxRepeated} chiffres identiques ou plus à la suite.",
            "es": "Evite {maxRepeated} o más dígitos idénticos seguidos.", "nl": "Vermijd {maxRepeated} of meer gelijke cijfers achter elkaar.",
        ],
        "This PIN is too easy to guess; choose another.": [
            "de": "Diese PIN ist zu leicht zu erraten; wählen Sie eine andere.", "fr": "Ce code PIN est trop facile à deviner ; choisissez-en un autre.",
            "es": "Este PIN es demasiado fácil de adivinar; elija otro.", "nl": "Deze pincode is te makkelijk te raden; kies een andere.",
        ],
    ])

    /// What `check` refused with `error`, in `language` with this policy's values; nil for an error
    /// `check` does not throw.
    public func refusal(_ error: BrokerError, in language: String) -> String? {
        guard let (english, values) = Self.text(of: error.code, self) else { return nil }
        return Self.translations.text(english, in: language, values)
    }

    /// The English text (with placeholders) of a rule's refusal, and its values.
    static func text(of code: ErrorCode, _ rules: PINRules) -> (String, [String: String])? {
        switch code {
        case .pinNotNumeric: ("A PIN may contain digits only.", [:])
        case .pinTooShort: ("Use at least {minLength} digits.", ["minLength": String(rules.minLength)])
        case .pinTooLong: ("Use at most {maxLength} digits.", ["maxLength": String(rules.maxLength)])
        case .pinSequence: ("Avoid {maxSequence} or more sequential digits such as 1234 or 4321.", ["maxSequence": String(rules.maxSequence)])
        case .pinRepeated: ("Avoid {maxRepeated} or more identical digits in a row.", ["maxRepeated": String(rules.maxRepeated)])
        case .pinDenied: ("This PIN is too easy to guess; choose another.", [:])
        default: nil
        }
    }

    /// A refusal of `check`: its code, and its English text with this policy's values.
    func refused(_ code: ErrorCode) -> BrokerError {
        let (english, values) = Self.text(of: code, self) ?? ("", [:])
        return BrokerError(code, .badRequest, TextTranslations.fill(english, values))
    }
}
