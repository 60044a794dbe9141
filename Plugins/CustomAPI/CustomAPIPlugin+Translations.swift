import GatehousePluginKit

extension CustomAPIPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "Registration data (JSON)": [
            "de": "Registrierungsdaten (JSON)", "fr": "Données d'enregistrement (JSON)", "es": "Datos de registro (JSON)", "nl": "Registratiegegevens (JSON)",
        ]
    ])
}
