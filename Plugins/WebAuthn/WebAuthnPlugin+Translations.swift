import GatehousePluginKit

extension WebAuthnPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "Authenticator": ["de": "Authentifikator", "fr": "Authentificateur", "es": "Autenticador", "nl": "Authenticator"],
        "Backup state": ["de": "Gesichert", "fr": "Sauvegardé", "es": "Copia de seguridad", "nl": "Back-up"],
        "Add a passkey": ["de": "Passkey hinzufügen", "fr": "Ajouter une clé d'accès", "es": "Añadir una llave de acceso", "nl": "Een passkey toevoegen"],
        "Choose the name your passkey is saved under.": [
            "de": "Wählen Sie den Namen, unter dem Ihr Passkey gespeichert wird.", "fr": "Choisissez le nom sous lequel votre clé d'accès est enregistrée.",
            "es": "Elija el nombre con el que se guarda su llave de acceso.", "nl": "Kies de naam waaronder uw passkey wordt opgeslagen.",
        ],
        "Create a passkey": ["de": "Passkey erstellen", "fr": "Créer une clé d'accès", "es": "Crear una llave de acceso", "nl": "Passkey aanmaken"],
        "Credential": ["de": "Anmeldedaten", "fr": "Identifiants", "es": "Credencial", "nl": "Inloggegevens"],
        "Sign in with a passkey": [
            "de": "Mit einem Passkey anmelden", "fr": "Se connecter avec une clé d'accès", "es": "Iniciar sesión con una llave de acceso",
            "nl": "Inloggen met een passkey",
        ],
        "The passkey was not accepted.": [
            "de": "Der Passkey wurde nicht akzeptiert.", "fr": "La clé d'accès n'a pas été acceptée.", "es": "La llave de acceso no se aceptó.",
            "nl": "De passkey is niet geaccepteerd.",
        ],
        "The signed-in account no longer exists.": [
            "de": "Das angemeldete Konto gibt es nicht mehr.", "fr": "Le compte connecté n'existe plus.", "es": "La cuenta con la sesión iniciada ya no existe.",
            "nl": "Het ingelogde account bestaat niet meer.",
        ],
        "Username": ["de": "Benutzername", "fr": "Nom d'utilisateur", "es": "Nombre de usuario", "nl": "Gebruikersnaam"],
        "Your browser or phone asks for your passkey.": [
            "de": "Ihr Browser oder Telefon fragt nach Ihrem Passkey.", "fr": "Votre navigateur ou votre téléphone vous demande votre clé d'accès.",
            "es": "Su navegador o su teléfono le pide su llave de acceso.", "nl": "Uw browser of telefoon vraagt om uw passkey.",
        ],
        "Your browser or phone asks you to create a passkey.": [
            "de": "Ihr Browser oder Telefon fordert Sie auf, einen Passkey zu erstellen.",
            "fr": "Votre navigateur ou votre téléphone vous demande de créer une clé d'accès.", "es": "Su navegador o su teléfono le pide crear una llave de acceso.",
            "nl": "Uw browser of telefoon vraagt u een passkey aan te maken.",
        ],
        "Passkeys and security keys (registered by their people; removing one stops it signing in)": [
            "de": "Passkeys und Sicherheitsschlüssel (von ihren Personen registriert; ein entfernter Schlüssel dient nicht mehr zur Anmeldung)",
            "fr": "Clés d'accès et clés de sécurité (enregistrées par leurs titulaires ; une clé retirée ne permet plus de se connecter)",
            "es": "Llaves de acceso y llaves de seguridad (registradas por sus titulares; una llave eliminada ya no inicia sesión)",
            "nl": "Passkeys en beveiligingssleutels (door hun eigenaars geregistreerd; een verwijderde sleutel logt niet meer in)",
        ],
    ])
}
