extension PasswordPolicy {
    /// The rules and refusals of every password policy in the languages the broker speaks: a
    /// plugin's page shows `rules(in:)`, and the broker tells a refusal of `check` in the flow's language.
    package static let translations = TextTranslations([
        "At least {minLength} characters.": [
            "de": "Mindestens {minLength} Zeichen.", "fr": "Au moins {minLength} caractères.", "es": "Al menos {minLength} caracteres.",
            "nl": "Minstens {minLength} tekens.",
        ],
        "At least {minLength} characters, at most {maxLength}.": [
            "de": "Mindestens {minLength} Zeichen, höchstens {maxLength}.", "fr": "Au moins {minLength} caractères, au plus {maxLength}.",
            "es": "Al menos {minLength} caracteres, como máximo {maxLength}.", "nl": "Minstens {minLength} tekens, hoogstens {maxLength}.",
        ],
        "Digits only.": ["de": "Nur Ziffern.", "fr": "Chiffres uniquement.", "es": "Solo dígitos.", "nl": "Alleen cijfers."],
        "Not a common password.": [
            "de": "Kein gängiges Passwort.", "fr": "Pas de mot de passe courant.", "es": "No ser una contraseña común.", "nl": "Geen veelgebruikt wachtwoord.",
        ],
        "Not a common password, and not containing your username.": [
            "de": "Kein gängiges Passwort, und ohne Ihren Benutzernamen.", "fr": "Pas de mot de passe courant, et sans votre nom d'utilisateur.",
            "es": "No ser una contraseña común ni contener su nombre de usuario.", "nl": "Geen veelgebruikt wachtwoord, en zonder uw gebruikersnaam.",
        ],
        "No run of {maxSequence} sequential characters, such as 1234 or abcd.": [
            "de": "Keine Folge von {maxSequence} aufeinanderfolgenden Zeichen wie 1234 oder abcd.",
            "fr": "Pas de suite de {maxSequence} caractères consécutifs, comme 1234 ou abcd.",
            "es": "Sin secuencias de {maxSequence} caracteres consecutivos, como 1234 o abcd.",
            "nl": "Geen reeks van {maxSequence} opeenvolgende tekens, zoals 1234 of abcd.",
        ],
        "Not {maxRepeated} identical characters in a row.": [
            "de": "Nicht {maxRepeated} gleiche Zeichen hintereinander.", "fr": "Pas {maxRepeated} caractères identiques à la suite.",
            "es": "Sin {maxRepeated} caracteres idénticos seguidos.", "nl": "Geen {maxRepeated} identieke tekens op een rij.",
        ],
        "Use at least {minLength} characters.": [
            "de": "Verwenden Sie mindestens {minLength} Zeichen.", "fr": "Utilisez au moins {minLength} caractères.", "es": "Use al menos {minLength} caracteres.",
            "nl": "Gebruik minstens {minLength} tekens.",
        ],
        "Use at most {maxLength} bytes.": [
            "de": "Verwenden Sie höchstens {maxLength} Byte.", "fr": "Utilisez au plus {maxLength} octets.", "es": "Use como máximo {maxLength} bytes.",
            "nl": "Gebruik hoogstens {maxLength} bytes.",
        ],
        "A PIN may contain digits only.": [
            "de": "Eine PIN darf nur Ziffern enthalten.", "fr": "Un code PIN ne peut contenir que des chiffres.", "es": "Un PIN solo puede contener dígitos.",
            "nl": "Een pincode mag alleen cijfers bevatten.",
        ],
        "This password is too common; choose another.": [
            "de": "Dieses Passwort ist zu gängig; wählen Sie ein anderes.", "fr": "Ce mot de passe est trop courant ; choisissez-en un autre.",
            "es": "Esta contraseña es demasiado común; elija otra.", "nl": "Dit wachtwoord komt te vaak voor; kies een ander.",
        ],
        "The password must not contain the username.": [
            "de": "Das Passwort darf den Benutzernamen nicht enthalten.", "fr": "Le mot de passe ne doit pas contenir le nom d'utilisateur.",
            "es": "La contraseña no debe contener el nombre de usuario.", "nl": "Het wachtwoord mag de gebruikersnaam niet bevatten.",
        ],
        "Avoid runs of {maxSequence} or more sequential characters such as 1234 or abcd.": [
            "de": "Vermeiden Sie Folgen von {maxSequence} oder mehr aufeinanderfolgenden Zeichen wie 1234 oder abcd.",
            "fr": "Évitez les suites de {maxSequence} caractères consécutifs ou plus, comme 1234 ou abcd.",
            "es": "Evite secuencias de {maxSequence} o más caracteres consecutivos, como 1234 o abcd.",
            "nl": "Vermijd reeksen van {maxSequence} of meer opeenvolgende tekens, zoals 1234 of abcd.",
        ],
        "Avoid {maxRepeated} or more identical characters in a row.": [
            "de": "Vermeiden Sie {maxRepeated} oder mehr gleiche Zeichen hintereinander.", "fr": "Évitez {maxRepeated} caractères identiques ou plus à la suite.",
            "es": "Evite {maxRepeated} o más caracteres idénticos seguidos.", "nl": "Vermijd {maxRepeated} of meer identieke tekens op een rij.",
        ],
    ])
}
