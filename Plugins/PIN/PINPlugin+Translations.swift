import GatehousePluginKit
import GatehouseSupport

extension PINPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks (with the PIN
    /// rules' refusals).
    public static let translations = TextTranslations([
        "A reset needs an address the account already had.": [
            "de": "Für das Zurücksetzen ist eine Adresse nötig, die das Konto bereits hatte.",
            "fr": "Une réinitialisation nécessite une adresse que le compte avait déjà.", "es": "Un restablecimiento requiere una dirección que la cuenta ya tuviera.",
            "nl": "Voor een reset is een adres nodig dat het account al had.",
        ],
        "Choose a PIN": ["de": "PIN wählen", "fr": "Choisissez un code PIN", "es": "Elija un PIN", "nl": "Kies een pincode"],
        "Choose a PIN of {minLength} to {maxLength} digits.": [
            "de": "Wählen Sie eine PIN mit {minLength} bis {maxLength} Ziffern.", "fr": "Choisissez un code PIN de {minLength} à {maxLength} chiffres.",
            "es": "Elija un PIN de {minLength} a {maxLength} dígitos.", "nl": "Kies een pincode van {minLength} tot {maxLength} cijfers.",
        ],
        "Current PIN": ["de": "Aktuelle PIN", "fr": "Code PIN actuel", "es": "PIN actual", "nl": "Huidige pincode"],
        "Enter your PIN": ["de": "Geben Sie Ihre PIN ein", "fr": "Saisissez votre code PIN", "es": "Introduzca su PIN", "nl": "Voer uw pincode in"],
        "Forgot your PIN?": ["de": "PIN vergessen?", "fr": "Code PIN oublié ?", "es": "¿Olvidó su PIN?", "nl": "Pincode vergeten?"],
        "New PIN": ["de": "Neue PIN", "fr": "Nouveau code PIN", "es": "Nuevo PIN", "nl": "Nieuwe pincode"],
        "PIN": ["de": "PIN", "fr": "Code PIN", "es": "PIN", "nl": "Pincode"],
        "Set PIN": ["de": "PIN festlegen", "fr": "Définir le code PIN", "es": "Establecer el PIN", "nl": "Pincode instellen"],
        "That PIN is not right.": [
            "de": "Diese PIN ist nicht richtig.", "fr": "Ce code PIN n'est pas correct.", "es": "Ese PIN no es correcto.", "nl": "Die pincode klopt niet.",
        ],
    ]).merging(PINRules.translations)
}
