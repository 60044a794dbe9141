/// The sign-in pages' own texts and the core challenges' texts in German, French, Spanish and Dutch,
/// keyed by their English text (gettext's way: a text without a translation shows in English, and
/// a plugin's texts join by the same rule). `{name}` placeholders stay as they are.
enum PageCatalog {
    /// English text → [language: translation].
    static let texts: [String: [String: String]] = [
        // Layout and common controls
        "Sign in": ["de": "Anmelden", "fr": "Se connecter", "es": "Iniciar sesión", "nl": "Inloggen"],
        "Continue": ["de": "Weiter", "fr": "Continuer", "es": "Continuar", "nl": "Doorgaan"],
        "Cancel": ["de": "Abbrechen", "fr": "Annuler", "es": "Cancelar", "nl": "Annuleren"],
        "to continue to": ["de": "weiter zu", "fr": "pour continuer vers", "es": "para continuar a", "nl": "om verder te gaan naar"],
        "Help": ["de": "Hilfe", "fr": "Aide", "es": "Ayuda", "nl": "Hulp"],
        "Privacy": ["de": "Datenschutz", "fr": "Confidentialité", "es": "Privacidad", "nl": "Privacy"],
        "Forgot password?": ["de": "Passwort vergessen?", "fr": "Mot de passe oublié ?", "es": "¿Olvidó su contraseña?", "nl": "Wachtwoord vergeten?"],
        "Create an account": ["de": "Konto erstellen", "fr": "Créer un compte", "es": "Crear una cuenta", "nl": "Account aanmaken"],
        "Already have an account?": [
            "de": "Sie haben schon ein Konto?", "fr": "Vous avez déjà un compte ?", "es": "¿Ya tiene una cuenta?", "nl": "Hebt u al een account?",
        ],
        "Create your account": ["de": "Konto erstellen", "fr": "Créez votre compte", "es": "Cree su cuenta", "nl": "Maak uw account aan"],
        "Create account": ["de": "Konto erstellen", "fr": "Créer le compte", "es": "Crear la cuenta", "nl": "Account aanmaken"],
        "Your password needs": ["de": "Ihr Passwort braucht", "fr": "Votre mot de passe doit avoir", "es": "Su contraseña necesita", "nl": "Uw wachtwoord moet hebben"],
        "Choose how to sign in": [
            "de": "Wählen Sie, wie Sie sich anmelden", "fr": "Choisissez comment vous connecter", "es": "Elija cómo iniciar sesión", "nl": "Kies hoe u inlogt",
        ],
        "Choose how to create your account": [
            "de": "Wählen Sie, wie Sie Ihr Konto erstellen", "fr": "Choisissez comment créer votre compte", "es": "Elija cómo crear su cuenta",
            "nl": "Kies hoe u uw account aanmaakt",
        ],
        "Continue with {provider}": [
            "de": "Weiter mit {provider}", "fr": "Continuer avec {provider}", "es": "Continuar con {provider}", "nl": "Doorgaan met {provider}",
        ],
        "Taking you on…": ["de": "Es geht weiter…", "fr": "Redirection en cours…", "es": "Continuando…", "nl": "U wordt doorgestuurd…"],
        "Continue signing in": ["de": "Anmeldung fortsetzen", "fr": "Poursuivre la connexion", "es": "Continuar el inicio de sesión", "nl": "Verder met inloggen"],
        // Errors
        "Sign-in is not possible": [
            "de": "Anmeldung nicht möglich", "fr": "Connexion impossible", "es": "No es posible iniciar sesión", "nl": "Inloggen is niet mogelijk",
        ],
        "Error code:": ["de": "Fehlercode:", "fr": "Code d'erreur :", "es": "Código de error:", "nl": "Foutcode:"],
        "request": ["de": "Anfrage", "fr": "requête", "es": "solicitud", "nl": "verzoek"],
        "Go back to the application you came from and start the sign-in again.": [
            "de": "Kehren Sie zur Anwendung zurück, von der Sie kamen, und melden Sie sich erneut an.",
            "fr": "Retournez à l'application d'où vous venez et recommencez la connexion.",
            "es": "Vuelva a la aplicación de la que vino e inicie sesión de nuevo.",
            "nl": "Ga terug naar de toepassing waar u vandaan kwam en log opnieuw in.",
        ],
        // Logout
        "Sign out": ["de": "Abmelden", "fr": "Se déconnecter", "es": "Cerrar sesión", "nl": "Uitloggen"],
        "Signing out is not possible": [
            "de": "Abmelden nicht möglich", "fr": "Déconnexion impossible", "es": "No es posible cerrar sesión", "nl": "Uitloggen is niet mogelijk",
        ],
        "You are signed in as": ["de": "Sie sind angemeldet als", "fr": "Vous êtes connecté en tant que", "es": "Ha iniciado sesión como", "nl": "U bent ingelogd als"],
        "asks to sign you out.": [
            "de": "möchte Sie abmelden.", "fr": "demande à vous déconnecter.", "es": "solicita cerrar su sesión.", "nl": "vraagt u uit te loggen.",
        ],
        "Signing out ends your session in every app you opened with it.": [
            "de": "Das Abmelden beendet Ihre Sitzung in jeder App, die Sie damit geöffnet haben.",
            "fr": "La déconnexion met fin à votre session dans chaque application ouverte avec elle.",
            "es": "Cerrar sesión termina su sesión en todas las aplicaciones que abrió con ella.",
            "nl": "Uitloggen beëindigt uw sessie in elke app die u ermee opende.",
        ],
        "Stay signed in": ["de": "Angemeldet bleiben", "fr": "Rester connecté", "es": "Mantener la sesión", "nl": "Ingelogd blijven"],
        "Signed out": ["de": "Abgemeldet", "fr": "Déconnecté", "es": "Sesión cerrada", "nl": "Uitgelogd"],
        "Still signed in": ["de": "Weiterhin angemeldet", "fr": "Toujours connecté", "es": "Sesión abierta", "nl": "Nog ingelogd"],
        "You are signed out. You can close this window.": [
            "de": "Sie sind abgemeldet. Sie können dieses Fenster schließen.", "fr": "Vous êtes déconnecté. Vous pouvez fermer cette fenêtre.",
            "es": "Ha cerrado sesión. Puede cerrar esta ventana.", "nl": "U bent uitgelogd. U kunt dit venster sluiten.",
        ],
        "You are still signed in.": [
            "de": "Sie sind weiterhin angemeldet.", "fr": "Vous êtes toujours connecté.", "es": "Sigue con la sesión iniciada.", "nl": "U bent nog ingelogd.",
        ],
        // Device grant
        "Sign in on a device": [
            "de": "Auf einem Gerät anmelden", "fr": "Se connecter sur un appareil", "es": "Iniciar sesión en un dispositivo", "nl": "Inloggen op een apparaat",
        ],
        "Device sign-in": ["de": "Geräteanmeldung", "fr": "Connexion de l'appareil", "es": "Inicio de sesión del dispositivo", "nl": "Apparaat inloggen"],
        "Enter the code shown on your device.": [
            "de": "Geben Sie den Code ein, den Ihr Gerät anzeigt.", "fr": "Saisissez le code affiché sur votre appareil.",
            "es": "Introduzca el código que muestra su dispositivo.", "nl": "Voer de code in die uw apparaat toont.",
        ],
        "Code": ["de": "Code", "fr": "Code", "es": "Código", "nl": "Code"],
        "Your device is signed in. You can go back to it and close this window.": [
            "de": "Ihr Gerät ist angemeldet. Sie können zu ihm zurückkehren und dieses Fenster schließen.",
            "fr": "Votre appareil est connecté. Vous pouvez y retourner et fermer cette fenêtre.",
            "es": "Su dispositivo ha iniciado sesión. Puede volver a él y cerrar esta ventana.",
            "nl": "Uw apparaat is ingelogd. U kunt ernaar teruggaan en dit venster sluiten.",
        ],
        "The device was not signed in.": [
            "de": "Das Gerät wurde nicht angemeldet.", "fr": "L'appareil n'a pas été connecté.", "es": "El dispositivo no inició sesión.",
            "nl": "Het apparaat is niet ingelogd.",
        ],
        "The device could not be signed in. Start again on the device.": [
            "de": "Das Gerät konnte nicht angemeldet werden. Beginnen Sie auf dem Gerät erneut.",
            "fr": "L'appareil n'a pas pu être connecté. Recommencez sur l'appareil.",
            "es": "No se pudo iniciar sesión en el dispositivo. Vuelva a empezar en el dispositivo.",
            "nl": "Het apparaat kon niet inloggen. Begin opnieuw op het apparaat.",
        ],
        // Core challenges
        "Username": ["de": "Benutzername", "fr": "Nom d'utilisateur", "es": "Nombre de usuario", "nl": "Gebruikersnaam"],
        "Password": ["de": "Passwort", "fr": "Mot de passe", "es": "Contraseña", "nl": "Wachtwoord"],
        "Confirm your profile": ["de": "Profil bestätigen", "fr": "Confirmez votre profil", "es": "Confirme su perfil", "nl": "Bevestig uw profiel"],
        "Check the details we received. Change anything that is wrong.": [
            "de": "Prüfen Sie die erhaltenen Angaben. Ändern Sie, was falsch ist.", "fr": "Vérifiez les informations reçues. Corrigez ce qui est faux.",
            "es": "Revise los datos recibidos. Cambie lo que sea incorrecto.", "nl": "Controleer de ontvangen gegevens. Wijzig wat niet klopt.",
        ],
        "Name": ["de": "Name", "fr": "Nom", "es": "Nombre", "nl": "Naam"],
        "Email address": ["de": "E-Mail-Adresse", "fr": "Adresse e-mail", "es": "Correo electrónico", "nl": "E-mailadres"],
        "Picture URL": ["de": "Bild-URL", "fr": "URL de l'image", "es": "URL de la imagen", "nl": "Afbeeldings-URL"],
        "Code sent to the new address (after changing it)": [
            "de": "An die neue Adresse gesendeter Code (nach der Änderung)", "fr": "Code envoyé à la nouvelle adresse (après modification)",
            "es": "Código enviado a la nueva dirección (tras cambiarla)", "nl": "Code gestuurd naar het nieuwe adres (na het wijzigen)",
        ],
        "Send the code again": ["de": "Code erneut senden", "fr": "Renvoyer le code", "es": "Enviar el código de nuevo", "nl": "Code opnieuw sturen"],
        "Confirm": ["de": "Bestätigen", "fr": "Confirmer", "es": "Confirmar", "nl": "Bevestigen"],
        "Allow access": ["de": "Zugriff erlauben", "fr": "Autoriser l'accès", "es": "Permitir el acceso", "nl": "Toegang toestaan"],
        "{appName} asks to: {purposes}": [
            "de": "{appName} möchte: {purposes}", "fr": "{appName} demande à : {purposes}", "es": "{appName} solicita: {purposes}",
            "nl": "{appName} vraagt om: {purposes}",
        ],
        "Deny": ["de": "Ablehnen", "fr": "Refuser", "es": "Denegar", "nl": "Weigeren"],
        "Allow": ["de": "Erlauben", "fr": "Autoriser", "es": "Permitir", "nl": "Toestaan"],
        "Sign in on your device": [
            "de": "Auf Ihrem Gerät anmelden", "fr": "Connectez-vous sur votre appareil", "es": "Inicie sesión en su dispositivo", "nl": "Log in op uw apparaat",
        ],
        "Reset your password": [
            "de": "Passwort zurücksetzen", "fr": "Réinitialisez votre mot de passe", "es": "Restablezca su contraseña", "nl": "Stel uw wachtwoord opnieuw in",
        ],
        "Enter your username. If it has an email address, we send a code to it.": [
            "de": "Geben Sie Ihren Benutzernamen ein. Hat er eine E-Mail-Adresse, senden wir einen Code dorthin.",
            "fr": "Saisissez votre nom d'utilisateur. S'il a une adresse e-mail, nous y envoyons un code.",
            "es": "Introduzca su nombre de usuario. Si tiene un correo electrónico, le enviaremos un código.",
            "nl": "Voer uw gebruikersnaam in. Heeft die een e-mailadres, dan sturen we er een code naartoe.",
        ],
        "Send code": ["de": "Code senden", "fr": "Envoyer le code", "es": "Enviar código", "nl": "Code sturen"],
        "If the username has an email address, a code is on its way to it. Enter it here.": [
            "de": "Hat der Benutzername eine E-Mail-Adresse, ist ein Code dorthin unterwegs. Geben Sie ihn hier ein.",
            "fr": "Si le nom d'utilisateur a une adresse e-mail, un code y est envoyé. Saisissez-le ici.",
            "es": "Si el nombre de usuario tiene un correo electrónico, se le ha enviado un código. Introdúzcalo aquí.",
            "nl": "Heeft de gebruikersnaam een e-mailadres, dan is er een code naar onderweg. Voer die hier in.",
        ],
        "Choose a new password": [
            "de": "Neues Passwort wählen", "fr": "Choisissez un nouveau mot de passe", "es": "Elija una nueva contraseña", "nl": "Kies een nieuw wachtwoord",
        ],
        "New password": ["de": "Neues Passwort", "fr": "Nouveau mot de passe", "es": "Nueva contraseña", "nl": "Nieuw wachtwoord"],
        "Change password": ["de": "Passwort ändern", "fr": "Changer le mot de passe", "es": "Cambiar la contraseña", "nl": "Wachtwoord wijzigen"],
        "The next step could not start ({error}). Try again.": [
            "de": "Der nächste Schritt konnte nicht beginnen ({error}). Versuchen Sie es erneut.",
            "fr": "L'étape suivante n'a pas pu commencer ({error}). Réessayez.",
            "es": "El siguiente paso no pudo empezar ({error}). Inténtelo de nuevo.",
            "nl": "De volgende stap kon niet starten ({error}). Probeer het opnieuw.",
        ],
        "Signed in. Return to the app to go on.": [
            "de": "Angemeldet. Kehren Sie zur App zurück, um fortzufahren.", "fr": "Connecté. Retournez à l'application pour continuer.",
            "es": "Sesión iniciada. Vuelva a la aplicación para continuar.", "nl": "Ingelogd. Ga terug naar de app om verder te gaan.",
        ],
    ]

    /// `text` in `language`, or as it is when no translation exists.
    static func translate(_ text: String, to language: String) -> String {
        language == "en" ? text : texts[text]?[language] ?? text
    }
}
