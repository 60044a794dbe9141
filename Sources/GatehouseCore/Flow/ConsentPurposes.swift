import GatehousePluginKit

/// What each scope lets an app do, in words, as the consent page shows it (`ConsentPhase`), in
/// every language the pages speak.
public enum ConsentPurposes {
    /// The purposes in German, French, Spanish and Dutch.
    public static let translations = TextTranslations([
        "know who you are": ["de": "wissen, wer Sie sind", "fr": "savoir qui vous êtes", "es": "saber quién es usted", "nl": "te weten wie u bent"],
        "see your name and picture": [
            "de": "Ihren Namen und Ihr Bild sehen", "fr": "voir votre nom et votre photo", "es": "ver su nombre y su foto", "nl": "uw naam en foto te zien",
        ],
        "see your email address": [
            "de": "Ihre E-Mail-Adresse sehen", "fr": "voir votre adresse e-mail", "es": "ver su dirección de correo electrónico", "nl": "uw e-mailadres te zien",
        ],
        "see the groups you belong to": [
            "de": "die Gruppen sehen, zu denen Sie gehören", "fr": "voir les groupes dont vous faites partie", "es": "ver los grupos a los que pertenece",
            "nl": "de groepen te zien waartoe u behoort",
        ],
        "stay signed in while you are away": [
            "de": "angemeldet bleiben, während Sie weg sind", "fr": "rester connecté pendant votre absence", "es": "mantener la sesión mientras no está",
            "nl": "ingelogd te blijven terwijl u weg bent",
        ],
        "use {scope}": ["de": "{scope} nutzen", "fr": "utiliser {scope}", "es": "usar {scope}", "nl": "{scope} te gebruiken"],
    ])
}
