import GatehousePluginKit

extension DeviceAttestationPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "A test registration key vouches for test accounts only.": [
            "de": "Ein Test-Registrierungsschlüssel bürgt nur für Testkonten.", "fr": "Une clé d'enregistrement de test ne garantit que des comptes de test.",
            "es": "Una clave de registro de prueba solo avala cuentas de prueba.", "nl": "Een testregistratiesleutel staat alleen in voor testaccounts.",
        ],
        "Android key attestation chain": [
            "de": "Android-Schlüsselattestierungskette", "fr": "Chaîne d'attestation de clé Android", "es": "Cadena de atestación de claves de Android",
            "nl": "Android-sleutelattestatieketen",
        ],
        "App Attest attestation object (base64)": [
            "de": "App-Attest-Attestierungsobjekt (base64)", "fr": "Objet d'attestation App Attest (base64)", "es": "Objeto de atestación de App Attest (base64)",
            "nl": "Attestatieobject van App Attest (base64)",
        ],
        "DeviceCheck token": ["de": "DeviceCheck-Token", "fr": "Jeton DeviceCheck", "es": "Token de DeviceCheck", "nl": "DeviceCheck-token"],
        "Format": ["de": "Format", "fr": "Format", "es": "Formato", "nl": "Formaat"],
        "Play Integrity token": ["de": "Play-Integrity-Token", "fr": "Jeton Play Integrity", "es": "Token de Play Integrity", "nl": "Play Integrity-token"],
        "Test registration token": [
            "de": "Test-Registrierungstoken", "fr": "Jeton d'enregistrement de test", "es": "Token de registro de prueba", "nl": "Testregistratietoken",
        ],
        "Verify": ["de": "Überprüfen", "fr": "Vérifier", "es": "Verificar", "nl": "Verifiëren"],
        "Verify this device": ["de": "Dieses Gerät überprüfen", "fr": "Vérifier cet appareil", "es": "Verificar este dispositivo", "nl": "Dit apparaat verifiëren"],
    ])
}
