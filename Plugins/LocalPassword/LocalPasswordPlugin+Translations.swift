import GatehousePluginKit

extension LocalPasswordPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "Change password": ["de": "Passwort ändern", "fr": "Changer le mot de passe", "es": "Cambiar la contraseña", "nl": "Wachtwoord wijzigen"],
        "Choose a new password": [
            "de": "Neues Passwort wählen", "fr": "Choisissez un nouveau mot de passe", "es": "Elija una nueva contraseña", "nl": "Kies een nieuw wachtwoord",
        ],
        "Choose a password of your own, not the one you were given.": [
            "de": "Wählen Sie ein eigenes Passwort, nicht das, das Sie erhalten haben.", "fr": "Choisissez votre propre mot de passe, pas celui qui vous a été donné.",
            "es": "Elija una contraseña propia, no la que recibió.", "nl": "Kies een eigen wachtwoord, niet het wachtwoord dat u hebt gekregen.",
        ],
        "New password": ["de": "Neues Passwort", "fr": "Nouveau mot de passe", "es": "Nueva contraseña", "nl": "Nieuw wachtwoord"],
        "Wrong username or password.": [
            "de": "Falscher Benutzername oder falsches Passwort.", "fr": "Nom d'utilisateur ou mot de passe incorrect.",
            "es": "Nombre de usuario o contraseña incorrectos.", "nl": "Onjuiste gebruikersnaam of onjuist wachtwoord.",
        ],
        "Your password was set by an administrator. Choose your own to continue. {rules}": [
            "de": "Ihr Passwort wurde von einem Administrator gesetzt. Wählen Sie Ihr eigenes, um fortzufahren. {rules}",
            "fr": "Votre mot de passe a été défini par un administrateur. Choisissez le vôtre pour continuer. {rules}",
            "es": "Un administrador fijó su contraseña. Elija la suya para continuar. {rules}",
            "nl": "Uw wachtwoord is door een beheerder ingesteld. Kies uw eigen wachtwoord om verder te gaan. {rules}",
        ],
    ])
}
