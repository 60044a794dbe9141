import GatehousePluginKit

extension TOTPPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "Code from the app": ["de": "Code aus der App", "fr": "Code de l'application", "es": "Código de la aplicación", "nl": "Code uit de app"],
        "Confirm": ["de": "Bestätigen", "fr": "Confirmer", "es": "Confirmar", "nl": "Bevestigen"],
        "Each code signs you in once if you lose your authenticator app. They are shown only now.": [
            "de": "Jeder Code meldet Sie einmal an, falls Sie Ihre Authenticator-App verlieren. Sie werden nur jetzt angezeigt.",
            "fr": "Chaque code vous connecte une fois si vous perdez votre application d'authentification. Ils ne sont affichés que maintenant.",
            "es": "Cada código le permite iniciar sesión una vez si pierde su aplicación de autenticación. Solo se muestran ahora.",
            "nl": "Elke code logt u één keer in als u uw authenticator-app kwijtraakt. Ze worden alleen nu getoond.",
        ],
        "Enter a recovery code": [
            "de": "Geben Sie einen Wiederherstellungscode ein", "fr": "Saisissez un code de récupération", "es": "Introduzca un código de recuperación",
            "nl": "Voer een herstelcode in",
        ],
        "Enter the code from your authenticator app": [
            "de": "Geben Sie den Code aus Ihrer Authenticator-App ein", "fr": "Saisissez le code de votre application d'authentification",
            "es": "Introduzca el código de su aplicación de autenticación", "nl": "Voer de code uit uw authenticator-app in",
        ],
        "The authenticator app changed meanwhile; start again.": [
            "de": "Die Authenticator-App wurde inzwischen geändert; beginnen Sie von vorn.", "fr": "L'application d'authentification a changé entre-temps ; recommencez.",
            "es": "La aplicación de autenticación ha cambiado entretanto; empiece de nuevo.", "nl": "De authenticator-app is intussen gewijzigd; begin opnieuw.",
        ],
        "The authenticator app was removed meanwhile; start again.": [
            "de": "Die Authenticator-App wurde inzwischen entfernt; beginnen Sie von vorn.",
            "fr": "L'application d'authentification a été supprimée entre-temps ; recommencez.",
            "es": "La aplicación de autenticación se ha eliminado entretanto; empiece de nuevo.", "nl": "De authenticator-app is intussen verwijderd; begin opnieuw.",
        ],
        "The authenticator app changed at the same time elsewhere; try again.": [
            "de": "Die Authenticator-App wurde gleichzeitig an anderer Stelle geändert; versuchen Sie es erneut.",
            "fr": "L'application d'authentification a été modifiée au même moment ailleurs ; réessayez.",
            "es": "La aplicación de autenticación se modificó al mismo tiempo en otro lugar; inténtelo de nuevo.",
            "nl": "De authenticator-app is tegelijk elders gewijzigd; probeer het opnieuw.",
        ],
        "Recovery codes left": [
            "de": "Verbleibende Wiederherstellungscodes", "fr": "Codes de récupération restants", "es": "Códigos de recuperación restantes",
            "nl": "Resterende herstelcodes",
        ],
        "Set up an authenticator app": [
            "de": "Authenticator-App einrichten", "fr": "Configurer une application d'authentification", "es": "Configurar una aplicación de autenticación",
            "nl": "Een authenticator-app instellen",
        ],
        "I have saved them": ["de": "Ich habe sie gespeichert", "fr": "Je les ai enregistrés", "es": "Los he guardado", "nl": "Ik heb ze bewaard"],
        "Key (to type in instead)": [
            "de": "Schlüssel (stattdessen zum Eintippen)", "fr": "Clé (à saisir à la place)", "es": "Clave (para escribirla en su lugar)",
            "nl": "Sleutel (om in plaats daarvan in te typen)",
        ],
        "QR code of the authenticator app's key": [
            "de": "QR-Code des Schlüssels für die Authenticator-App", "fr": "Code QR de la clé de l'application d'authentification",
            "es": "Código QR de la clave de la aplicación de autenticación", "nl": "QR-code van de sleutel voor de authenticator-app",
        ],
        "Recovery code": ["de": "Wiederherstellungscode", "fr": "Code de récupération", "es": "Código de recuperación", "nl": "Herstelcode"],
        "Recovery codes": ["de": "Wiederherstellungscodes", "fr": "Codes de récupération", "es": "Códigos de recuperación", "nl": "Herstelcodes"],
        "Save your recovery codes": [
            "de": "Speichern Sie Ihre Wiederherstellungscodes", "fr": "Enregistrez vos codes de récupération", "es": "Guarde sus códigos de recuperación",
            "nl": "Bewaar uw herstelcodes",
        ],
        "Scan this code with your authenticator app, or type the key into it, then enter the code it shows.": [
            "de": "Scannen Sie diesen Code mit Ihrer Authenticator-App oder geben Sie den Schlüssel dort ein, und geben Sie dann den angezeigten Code ein.",
            "fr": "Scannez ce code avec votre application d'authentification, ou saisissez-y la clé, puis saisissez le code qu'elle affiche.",
            "es": "Escanee este código con su aplicación de autenticación, o escriba la clave en ella, y luego introduzca el código que muestra.",
            "nl": "Scan deze code met uw authenticator-app, of typ de sleutel erin, en voer daarna de code in die de app toont.",
        ],
        "Set up your authenticator app": [
            "de": "Richten Sie Ihre Authenticator-App ein", "fr": "Configurez votre application d'authentification", "es": "Configure su aplicación de autenticación",
            "nl": "Stel uw authenticator-app in",
        ],
        "That code is not right.": [
            "de": "Dieser Code ist nicht richtig.", "fr": "Ce code n'est pas correct.", "es": "Ese código no es correcto.", "nl": "Die code klopt niet.",
        ],
        "That code is not right; check the app's clock and try the current code.": [
            "de": "Dieser Code ist nicht richtig; prüfen Sie die Uhr der App und versuchen Sie den aktuellen Code.",
            "fr": "Ce code n'est pas correct ; vérifiez l'horloge de l'application et essayez le code actuel.",
            "es": "Ese código no es correcto; compruebe el reloj de la aplicación y pruebe el código actual.",
            "nl": "Die code klopt niet; controleer de klok van de app en probeer de huidige code.",
        ],
        "That code was used already; wait for the next one.": [
            "de": "Dieser Code wurde bereits verwendet; warten Sie auf den nächsten.", "fr": "Ce code a déjà été utilisé ; attendez le suivant.",
            "es": "Ese código ya se usó; espere al siguiente.", "nl": "Die code is al gebruikt; wacht op de volgende.",
        ],
        "That recovery code is not right, or was used already.": [
            "de": "Dieser Wiederherstellungscode ist nicht richtig oder wurde bereits verwendet.",
            "fr": "Ce code de récupération n'est pas correct ou a déjà été utilisé.", "es": "Ese código de recuperación no es correcto o ya se usó.",
            "nl": "Die herstelcode klopt niet of is al gebruikt.",
        ],
        "Use a recovery code": [
            "de": "Wiederherstellungscode verwenden", "fr": "Utiliser un code de récupération", "es": "Usar un código de recuperación", "nl": "Een herstelcode gebruiken",
        ],
        "Use the app's code": [
            "de": "Code der App verwenden", "fr": "Utiliser le code de l'application", "es": "Usar el código de la aplicación", "nl": "De code van de app gebruiken",
        ],
        "Authenticator apps (set up by their people at sign-in; removing one resets it: the next sign-in sets one up again)": [
            "de": "Authenticator-Apps (von ihren Personen bei der Anmeldung eingerichtet; eine entfernte wird zurückgesetzt: die nächste Anmeldung richtet sie neu ein)",
            "fr":
                "Applications d'authentification (configurées par leurs titulaires à la connexion ; en retirer une la réinitialise : la prochaine connexion en configure une nouvelle)",
            "es":
                "Aplicaciones de autenticación (configuradas por sus titulares al iniciar sesión; eliminar una la restablece: el próximo inicio de sesión configura otra)",
            "nl": "Authenticator-apps (door hun eigenaars bij het inloggen ingesteld; een verwijderde wordt opnieuw ingesteld bij de volgende keer inloggen)",
        ],
    ])
}
