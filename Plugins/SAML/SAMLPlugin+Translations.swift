import GatehousePluginKit

extension SAMLPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "Continue at your organisation's sign-in page.": [
            "de": "Fahren Sie auf der Anmeldeseite Ihrer Organisation fort.", "fr": "Continuez sur la page de connexion de votre organisation.",
            "es": "Continúe en la página de inicio de sesión de su organización.", "nl": "Ga verder op de inlogpagina van uw organisatie.",
        ],
        "SAML response": ["de": "SAML-Antwort", "fr": "Réponse SAML", "es": "Respuesta SAML", "nl": "SAML-antwoord"],
        "The identity provider did not ask you to sign in again, as this app requires; sign in again.": [
            "de": "Der Identitätsanbieter hat Sie nicht erneut zur Anmeldung aufgefordert, wie es diese App verlangt; melden Sie sich erneut an.",
            "fr": "Le fournisseur d'identité ne vous a pas demandé de vous reconnecter, comme l'exige cette application ; reconnectez-vous.",
            "es": "El proveedor de identidad no le pidió que volviera a iniciar sesión, como exige esta aplicación; inicie sesión de nuevo.",
            "nl": "De identiteitsprovider vroeg u niet opnieuw in te loggen, zoals deze app vereist; log opnieuw in.",
        ],
        "The identity provider did not sign you in.": [
            "de": "Der Identitätsanbieter hat Sie nicht angemeldet.", "fr": "Le fournisseur d'identité ne vous a pas connecté.",
            "es": "El proveedor de identidad no inició su sesión.", "nl": "De identiteitsprovider heeft u niet ingelogd.",
        ],
        "The sign-in service is not available right now; try again later.": [
            "de": "Der Anmeldedienst ist gerade nicht verfügbar; versuchen Sie es später erneut.",
            "fr": "Le service de connexion n'est pas disponible pour le moment ; réessayez plus tard.",
            "es": "El servicio de inicio de sesión no está disponible en este momento; inténtelo más tarde.",
            "nl": "De inlogdienst is nu niet beschikbaar; probeer het later opnieuw.",
        ],
        "Your account is not in a group that may sign in here.": [
            "de": "Ihr Konto gehört zu keiner Gruppe, die sich hier anmelden darf.", "fr": "Votre compte n'appartient à aucun groupe autorisé à se connecter ici.",
            "es": "Su cuenta no pertenece a ningún grupo que pueda iniciar sesión aquí.", "nl": "Uw account zit niet in een groep die hier mag inloggen.",
        ],
        "Your account may not sign in here.": [
            "de": "Ihr Konto darf sich hier nicht anmelden.", "fr": "Votre compte n'est pas autorisé à se connecter ici.",
            "es": "Su cuenta no puede iniciar sesión aquí.", "nl": "Uw account mag hier niet inloggen.",
        ],
    ])
}
