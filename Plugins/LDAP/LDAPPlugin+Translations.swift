import GatehousePluginKit

extension LDAPPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "Change password": ["de": "Passwort ändern", "fr": "Changer le mot de passe", "es": "Cambiar la contraseña", "nl": "Wachtwoord wijzigen"],
        "Change your password": ["de": "Ändern Sie Ihr Passwort", "fr": "Changez votre mot de passe", "es": "Cambie su contraseña", "nl": "Wijzig uw wachtwoord"],
        "Current password": ["de": "Aktuelles Passwort", "fr": "Mot de passe actuel", "es": "Contraseña actual", "nl": "Huidig wachtwoord"],
        "New password": ["de": "Neues Passwort", "fr": "Nouveau mot de passe", "es": "Nueva contraseña", "nl": "Nieuw wachtwoord"],
        "The answer needs a username.": [
            "de": "Die Antwort braucht einen Benutzernamen.", "fr": "La réponse doit contenir un nom d'utilisateur.", "es": "La respuesta necesita un nombre de usuario.",
            "nl": "Het antwoord moet een gebruikersnaam bevatten.",
        ],
        "The current password is wrong.": [
            "de": "Das aktuelle Passwort ist falsch.", "fr": "Le mot de passe actuel est incorrect.", "es": "La contraseña actual es incorrecta.",
            "nl": "Het huidige wachtwoord is onjuist.",
        ],
        "The directory does not let this account change its password here. Ask your administrator.": [
            "de": "Das Verzeichnis erlaubt diesem Konto nicht, sein Passwort hier zu ändern. Wenden Sie sich an Ihren Administrator.",
            "fr": "L'annuaire ne permet pas à ce compte de changer son mot de passe ici. Adressez-vous à votre administrateur.",
            "es": "El directorio no permite a esta cuenta cambiar su contraseña aquí. Consulte a su administrador.",
            "nl": "De directory staat niet toe dat dit account hier zijn wachtwoord wijzigt. Vraag het uw beheerder.",
        ],
        "The new password must differ from the current one.": [
            "de": "Das neue Passwort muss sich vom aktuellen unterscheiden.", "fr": "Le nouveau mot de passe doit être différent de l'actuel.",
            "es": "La nueva contraseña debe ser distinta de la actual.", "nl": "Het nieuwe wachtwoord moet verschillen van het huidige.",
        ],
        "The new password must not contain NUL.": [
            "de": "Das neue Passwort darf kein NUL-Zeichen enthalten.", "fr": "Le nouveau mot de passe ne doit pas contenir de caractère NUL.",
            "es": "La nueva contraseña no debe contener el carácter NUL.", "nl": "Het nieuwe wachtwoord mag geen NUL-teken bevatten.",
        ],
        "Wrong username or password.": [
            "de": "Falscher Benutzername oder falsches Passwort.", "fr": "Nom d'utilisateur ou mot de passe incorrect.",
            "es": "Nombre de usuario o contraseña incorrectos.", "nl": "Onjuiste gebruikersnaam of onjuist wachtwoord.",
        ],
        "Your password must be changed before you sign in. Choose a new one.": [
            "de": "Ihr Passwort muss geändert werden, bevor Sie sich anmelden. Wählen Sie ein neues.",
            "fr": "Votre mot de passe doit être changé avant que vous vous connectiez. Choisissez-en un nouveau.",
            "es": "Debe cambiar su contraseña antes de iniciar sesión. Elija una nueva.",
            "nl": "Uw wachtwoord moet worden gewijzigd voordat u inlogt. Kies een nieuw wachtwoord.",
        ],
    ])
}
