import GatehousePluginKit

extension DeviceKeyPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "App Attest assertion (base64)": [
            "de": "App-Attest-Assertion (base64)", "fr": "Assertion App Attest (base64)", "es": "Aserción de App Attest (base64)",
            "nl": "Assertie van App Attest (base64)",
        ],
        "App Attest key id": [
            "de": "App-Attest-Schlüssel-ID", "fr": "Identifiant de clé App Attest", "es": "ID de clave de App Attest", "nl": "Sleutel-ID van App Attest",
        ],
        "Assertion": ["de": "Assertion", "fr": "Assertion", "es": "Aserción", "nl": "Assertie"],
        "Device attestation": ["de": "Geräteattestierung", "fr": "Attestation de l'appareil", "es": "Atestación del dispositivo", "nl": "Apparaatattestatie"],
        "Proof of possession": ["de": "Besitznachweis", "fr": "Preuve de possession", "es": "Prueba de posesión", "nl": "Bewijs van bezit"],
        "Public key (JWK)": ["de": "Öffentlicher Schlüssel (JWK)", "fr": "Clé publique (JWK)", "es": "Clave pública (JWK)", "nl": "Openbare sleutel (JWK)"],
        "Register": ["de": "Registrieren", "fr": "Enregistrer", "es": "Registrar", "nl": "Registreren"],
        "Register this device": [
            "de": "Dieses Gerät registrieren", "fr": "Enregistrer cet appareil", "es": "Registrar este dispositivo", "nl": "Dit apparaat registreren",
        ],
        "Sign in with this device": [
            "de": "Mit diesem Gerät anmelden", "fr": "Se connecter avec cet appareil", "es": "Iniciar sesión con este dispositivo", "nl": "Inloggen met dit apparaat",
        ],
    ])
}
