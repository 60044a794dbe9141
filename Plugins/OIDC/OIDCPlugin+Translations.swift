import GatehousePluginKit

extension OIDCPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "Continue at the sign-in page.": [
            "de": "Fahren Sie auf der Anmeldeseite fort.", "fr": "Continuez sur la page de connexion.", "es": "Continúe en la página de inicio de sesión.",
            "nl": "Ga verder op de inlogpagina.",
        ],
        "Error": ["de": "Fehler", "fr": "Erreur", "es": "Error", "nl": "Fout"],
        "Error description": ["de": "Fehlerbeschreibung", "fr": "Description de l'erreur", "es": "Descripción del error", "nl": "Foutbeschrijving"],
        "Issuer": ["de": "Aussteller", "fr": "Émetteur", "es": "Emisor", "nl": "Uitgever"],
        "The sign-in service did not ask you to sign in again, as this app requires; sign in again.": [
            "de": "Der Anmeldedienst hat Sie nicht erneut zur Anmeldung aufgefordert, wie es diese App verlangt; melden Sie sich erneut an.",
            "fr": "Le service de connexion ne vous a pas demandé de vous reconnecter, comme l'exige cette application ; reconnectez-vous.",
            "es": "El servicio de inicio de sesión no le pidió que volviera a iniciar sesión, como exige esta aplicación; inicie sesión de nuevo.",
            "nl": "De inlogdienst vroeg u niet opnieuw in te loggen, zoals deze app vereist; log opnieuw in.",
        ],
    ])
}
