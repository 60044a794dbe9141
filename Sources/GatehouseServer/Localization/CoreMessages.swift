import GatehouseCore

/// The broker's own flow messages in German, French, Spanish and Dutch (its refusals, lockouts and
/// password rules), keyed by their English text, and what each kind of refusal means, for a
/// message that has no translation.
enum CoreMessages {
    /// What a refusal of each kind means, in English (translated through `texts`).
    static func generic(_ kind: BrokerError.Kind) -> String {
        switch kind {
        case .badRequest: "The request could not be handled; check what you entered and try again."
        case .unauthenticated: "You could not be signed in; start again from the app."
        case .forbidden: "You may not do this."
        case .notFound: "This was not found; start again from the app."
        case .contentTooLarge: "What you sent is too large."
        case .requestTimeout: "The request took too long; try again."
        case .conflict: "This was changed at the same time elsewhere; try again."
        case .failedAttempt: "That answer is not right."
        case .tooManyRequests: "Too many attempts; try again later."
        case .unavailable: "The service is not available right now; try again later."
        case .internalFailure: "Something went wrong on our side; try again later."
        }
    }

    /// English text → [language: translation].
    static let texts: [String: [String: String]] = [
        // Setting a credential up from the account page (`FlowEngine.startEnrolment`).
        "The sign-in to your account page has ended; sign in there again and start over.": [
            "de": "Die Anmeldung auf Ihrer Kontoseite ist beendet; melden Sie sich dort erneut an und beginnen Sie von vorn.",
            "fr": "La connexion à votre page de compte a pris fin ; reconnectez-vous-y et recommencez.",
            "es": "El inicio de sesión en la página de su cuenta ha terminado; vuelva a iniciar sesión allí y empiece de nuevo.",
            "nl": "De aanmelding op uw accountpagina is beëindigd; log daar opnieuw in en begin opnieuw.",
        ],
        "Sign in to this page again first.": [
            "de": "Melden Sie sich zuerst erneut auf dieser Seite an.", "fr": "Reconnectez-vous d'abord à cette page.",
            "es": "Primero vuelva a iniciar sesión en esta página.", "nl": "Log eerst opnieuw in op deze pagina.",
        ],
        "'{provider}' sets up no credential on this page.": [
            "de": "'{provider}' richtet auf dieser Seite keine Anmeldedaten ein.", "fr": "'{provider}' ne configure aucun identifiant sur cette page.",
            "es": "'{provider}' no configura ninguna credencial en esta página.", "nl": "'{provider}' stelt op deze pagina geen inloggegevens in.",
        ],
        "The account page is not enabled.": [
            "de": "Die Kontoseite ist nicht aktiviert.", "fr": "La page de compte n'est pas activée.", "es": "La página de la cuenta no está habilitada.",
            "nl": "De accountpagina is niet ingeschakeld.",
        ],
        "No code was sent: only a changed email address is proven with one.": [
            "de": "Es wurde kein Code gesendet: Nur eine geänderte E-Mail-Adresse wird mit einem Code bestätigt.",
            "fr": "Aucun code n'a été envoyé : seule une adresse e-mail modifiée est vérifiée par un code.",
            "es": "No se envió ningún código: solo una dirección de correo electrónico cambiada se verifica con uno.",
            "nl": "Er is geen code gestuurd: alleen een gewijzigd e-mailadres wordt met een code bevestigd.",
        ],
        "No such flow, or it has expired or finished; start a new one.": [
            "de": "Diesen Ablauf gibt es nicht, oder er ist abgelaufen oder beendet; starten Sie einen neuen.",
            "fr": "Ce parcours n'existe pas, a expiré ou est terminé ; commencez-en un nouveau.",
            "es": "Este flujo no existe, o ha caducado o ha terminado; inicie uno nuevo.", "nl": "Deze flow bestaat niet, of is verlopen of afgerond; start een nieuwe.",
        ],
        "Something went wrong on our side; try again later.": [
            "de": "Bei uns ist etwas schiefgegangen; versuchen Sie es später erneut.", "fr": "Un problème est survenu de notre côté ; réessayez plus tard.",
            "es": "Algo salió mal por nuestra parte; inténtelo más tarde.", "nl": "Er ging bij ons iets mis; probeer het later opnieuw.",
        ],
        "Stateless authentication is not enabled for this app.": [
            "de": "Zustandslose Authentifizierung ist für diese App nicht aktiviert.", "fr": "L'authentification sans état n'est pas activée pour cette application.",
            "es": "La autenticación sin estado no está habilitada para esta aplicación.", "nl": "Stateless authenticatie is niet ingeschakeld voor deze app.",
        ],
        "That answer is not right.": [
            "de": "Diese Antwort ist nicht richtig.", "fr": "Cette réponse n'est pas correcte.", "es": "Esa respuesta no es correcta.", "nl": "Dat antwoord klopt niet.",
        ],
        "That code was sent to another address.": [
            "de": "Dieser Code wurde an eine andere Adresse gesendet.", "fr": "Ce code a été envoyé à une autre adresse.", "es": "Ese código se envió a otra dirección.",
            "nl": "Die code is naar een ander adres gestuurd.",
        ],
        "The code is wrong or has expired.": [
            "de": "Der Code ist falsch oder abgelaufen.", "fr": "Le code est incorrect ou a expiré.", "es": "El código es incorrecto o ha caducado.",
            "nl": "De code is onjuist of verlopen.",
        ],
        "The device key this sign-in used was removed; register the device again.": [
            "de": "Der Geräteschlüssel dieser Anmeldung wurde entfernt; registrieren Sie das Gerät erneut.",
            "fr": "La clé d'appareil utilisée pour cette connexion a été supprimée ; enregistrez à nouveau l'appareil.",
            "es": "La clave de dispositivo que usó este inicio de sesión se eliminó; registre de nuevo el dispositivo.",
            "nl": "De apparaatsleutel van deze inlogpoging is verwijderd; registreer het apparaat opnieuw.",
        ],
        "The flow's account no longer exists; start a new flow.": [
            "de": "Das Konto dieses Ablaufs gibt es nicht mehr; starten Sie einen neuen Ablauf.",
            "fr": "Le compte de ce parcours n'existe plus ; commencez un nouveau parcours.", "es": "La cuenta de este flujo ya no existe; inicie un nuevo flujo.",
            "nl": "Het account van deze flow bestaat niet meer; start een nieuwe flow.",
        ],
        "The flow's state is not readable; start a new flow.": [
            "de": "Der Zustand des Ablaufs ist nicht lesbar; starten Sie einen neuen Ablauf.", "fr": "L'état du parcours est illisible ; commencez un nouveau parcours.",
            "es": "El estado del flujo no se puede leer; inicie un nuevo flujo.", "nl": "De status van de flow is niet leesbaar; start een nieuwe flow.",
        ],
        "The request could not be handled; check what you entered and try again.": [
            "de": "Die Anfrage konnte nicht bearbeitet werden; prüfen Sie Ihre Eingaben und versuchen Sie es erneut.",
            "fr": "La requête n'a pas pu être traitée ; vérifiez votre saisie et réessayez.",
            "es": "No se pudo procesar la solicitud; revise lo que introdujo e inténtelo de nuevo.",
            "nl": "Het verzoek kon niet worden verwerkt; controleer wat u hebt ingevoerd en probeer het opnieuw.",
        ],
        "The request took too long; try again.": [
            "de": "Die Anfrage hat zu lange gedauert; versuchen Sie es erneut.", "fr": "La requête a pris trop de temps ; réessayez.",
            "es": "La solicitud tardó demasiado; inténtelo de nuevo.", "nl": "Het verzoek duurde te lang; probeer het opnieuw.",
        ],
        "The service is not available right now; try again later.": [
            "de": "Der Dienst ist gerade nicht verfügbar; versuchen Sie es später erneut.", "fr": "Le service n'est pas disponible pour le moment ; réessayez plus tard.",
            "es": "El servicio no está disponible en este momento; inténtelo más tarde.", "nl": "De dienst is nu niet beschikbaar; probeer het later opnieuw.",
        ],
        "The session ended while this step was open; sign in again.": [
            "de": "Die Sitzung endete, während dieser Schritt offen war; melden Sie sich erneut an.",
            "fr": "La session a pris fin pendant que cette étape était ouverte ; reconnectez-vous.",
            "es": "La sesión terminó mientras este paso estaba abierto; inicie sesión de nuevo.",
            "nl": "De sessie is beëindigd terwijl deze stap openstond; log opnieuw in.",
        ],
        "The session ended; sign in again.": [
            "de": "Die Sitzung ist beendet; melden Sie sich erneut an.", "fr": "La session a pris fin ; reconnectez-vous.",
            "es": "La sesión terminó; inicie sesión de nuevo.", "nl": "De sessie is beëindigd; log opnieuw in.",
        ],
        "This account": ["de": "Dieses Konto", "fr": "Ce compte", "es": "Esta cuenta", "nl": "Dit account"],
        "This account has no verified address to prove it with; ask an administrator.": [
            "de": "Dieses Konto hat keine bestätigte Adresse, mit der Sie sich ausweisen können; wenden Sie sich an einen Administrator.",
            "fr": "Ce compte n'a aucune adresse vérifiée pour prouver votre identité ; adressez-vous à un administrateur.",
            "es": "Esta cuenta no tiene ninguna dirección verificada con la que acreditar su identidad; consulte a un administrador.",
            "nl": "Dit account heeft geen geverifieerd adres om uw identiteit mee te bewijzen; vraag het een beheerder.",
        ],
        "This account is disabled. Ask an administrator.": [
            "de": "Dieses Konto ist deaktiviert. Wenden Sie sich an einen Administrator.", "fr": "Ce compte est désactivé. Adressez-vous à un administrateur.",
            "es": "Esta cuenta está desactivada. Consulte a un administrador.", "nl": "Dit account is uitgeschakeld. Vraag het een beheerder.",
        ],
        "This account's PIN": ["de": "Die PIN dieses Kontos", "fr": "Le code PIN de ce compte", "es": "El PIN de esta cuenta", "nl": "De pincode van dit account"],
        "This app does not allow creating an account here.": [
            "de": "Diese App erlaubt nicht, hier ein Konto zu erstellen.", "fr": "Cette application ne permet pas de créer un compte ici.",
            "es": "Esta aplicación no permite crear una cuenta aquí.", "nl": "Deze app staat niet toe hier een account aan te maken.",
        ],
        "This app does not allow self-registration.": [
            "de": "Diese App erlaubt keine Selbstregistrierung.", "fr": "Cette application ne permet pas l'auto-inscription.",
            "es": "Esta aplicación no permite el autorregistro.", "nl": "Deze app staat zelfregistratie niet toe.",
        ],
        "This app has no authenticator that proves email addresses, so the address cannot be changed here.": [
            "de": "Diese App hat kein Authentifizierungsverfahren, das E-Mail-Adressen bestätigt, daher kann die Adresse hier nicht geändert werden.",
            "fr": "Cette application n'a aucune méthode d'authentification qui vérifie les adresses e-mail, l'adresse ne peut donc pas être modifiée ici.",
            "es":
                "Esta aplicación no tiene ningún método de autenticación que verifique direcciones de correo electrónico, así que la dirección no se puede cambiar aquí.",
            "nl": "Deze app heeft geen authenticatiemethode die e-mailadressen bevestigt, dus het adres kan hier niet worden gewijzigd.",
        ],
        "This device's PIN": [
            "de": "Die PIN dieses Geräts", "fr": "Le code PIN de cet appareil", "es": "El PIN de este dispositivo", "nl": "De pincode van dit apparaat",
        ],
        "This email address": ["de": "Diese E-Mail-Adresse", "fr": "Cette adresse e-mail", "es": "Esta dirección de correo electrónico", "nl": "Dit e-mailadres"],
        "This flow can no longer be read; start a new one.": [
            "de": "Dieser Ablauf kann nicht mehr gelesen werden; starten Sie einen neuen.", "fr": "Ce parcours ne peut plus être lu ; commencez-en un nouveau.",
            "es": "Este flujo ya no se puede leer; inicie uno nuevo.", "nl": "Deze flow kan niet meer worden gelezen; start een nieuwe.",
        ],
        "This flow was started by an earlier version of the broker; start a new one.": [
            "de": "Dieser Ablauf wurde von einer früheren Version des Brokers gestartet; starten Sie einen neuen.",
            "fr": "Ce parcours a été lancé par une version antérieure du broker ; commencez-en un nouveau.",
            "es": "Este flujo lo inició una versión anterior del broker; inicie uno nuevo.",
            "nl": "Deze flow is gestart door een eerdere versie van de broker; start een nieuwe.",
        ],
        "This sign-in is unknown, expired or already finished; start again from the app.": [
            "de": "Diese Anmeldung ist unbekannt, abgelaufen oder bereits abgeschlossen; beginnen Sie in der App erneut.",
            "fr": "Cette connexion est inconnue, expirée ou déjà terminée ; recommencez depuis l'application.",
            "es": "Este inicio de sesión es desconocido, ha caducado o ya ha terminado; vuelva a empezar desde la aplicación.",
            "nl": "Deze inlogpoging is onbekend, verlopen of al afgerond; begin opnieuw vanuit de app.",
        ],
        "This sign-in step is already done; start again from the app.": [
            "de": "Dieser Anmeldeschritt ist bereits erledigt; beginnen Sie in der App erneut.",
            "fr": "Cette étape de connexion est déjà terminée ; recommencez depuis l'application.",
            "es": "Este paso de inicio de sesión ya está hecho; vuelva a empezar desde la aplicación.",
            "nl": "Deze inlogstap is al afgerond; begin opnieuw vanuit de app.",
        ],
        "This was changed at the same time elsewhere; try again.": [
            "de": "Dies wurde gleichzeitig an anderer Stelle geändert; versuchen Sie es erneut.", "fr": "Ceci a été modifié ailleurs au même moment ; réessayez.",
            "es": "Esto se modificó al mismo tiempo en otro lugar; inténtelo de nuevo.", "nl": "Dit is tegelijk ergens anders gewijzigd; probeer het opnieuw.",
        ],
        "This was not found; start again from the app.": [
            "de": "Dies wurde nicht gefunden; beginnen Sie in der App erneut.", "fr": "Ceci est introuvable ; recommencez depuis l'application.",
            "es": "No se encontró; vuelva a empezar desde la aplicación.", "nl": "Dit is niet gevonden; begin opnieuw vanuit de app.",
        ],
        "Too many attempts; start again.": [
            "de": "Zu viele Versuche; beginnen Sie erneut.", "fr": "Trop de tentatives ; recommencez.", "es": "Demasiados intentos; vuelva a empezar.",
            "nl": "Te veel pogingen; begin opnieuw.",
        ],
        "Too many attempts; try again later.": [
            "de": "Zu viele Versuche; versuchen Sie es später erneut.", "fr": "Trop de tentatives ; réessayez plus tard.",
            "es": "Demasiados intentos; inténtelo más tarde.", "nl": "Te veel pogingen; probeer het later opnieuw.",
        ],
        "Too many failed attempts for {what}; try again later.": [
            "de": "{what}: zu viele Fehlversuche; versuchen Sie es später erneut.", "fr": "{what} : trop de tentatives échouées ; réessayez plus tard.",
            "es": "{what}: demasiados intentos fallidos; inténtelo más tarde.", "nl": "{what}: te veel mislukte pogingen; probeer het later opnieuw.",
        ],
        "Too many failed attempts from this address; try again later.": [
            "de": "Zu viele Fehlversuche von dieser Adresse; versuchen Sie es später erneut.",
            "fr": "Trop de tentatives échouées depuis cette adresse ; réessayez plus tard.",
            "es": "Demasiados intentos fallidos desde esta dirección; inténtelo más tarde.",
            "nl": "Te veel mislukte pogingen vanaf dit adres; probeer het later opnieuw.",
        ],
        "Too many wrong answers; start a new flow.": [
            "de": "Zu viele falsche Antworten; starten Sie einen neuen Ablauf.", "fr": "Trop de mauvaises réponses ; commencez un nouveau parcours.",
            "es": "Demasiadas respuestas incorrectas; inicie un nuevo flujo.", "nl": "Te veel onjuiste antwoorden; start een nieuwe flow.",
        ],
        "Too many wrong answers; start again.": [
            "de": "Zu viele falsche Antworten; beginnen Sie erneut.", "fr": "Trop de mauvaises réponses ; recommencez.",
            "es": "Demasiadas respuestas incorrectas; vuelva a empezar.", "nl": "Te veel onjuiste antwoorden; begin opnieuw.",
        ],
        "What you sent is too large.": [
            "de": "Was Sie gesendet haben, ist zu groß.", "fr": "Ce que vous avez envoyé est trop volumineux.", "es": "Lo que envió es demasiado grande.",
            "nl": "Wat u hebt verstuurd, is te groot.",
        ],
        "You could not be signed in; start again from the app.": [
            "de": "Sie konnten nicht angemeldet werden; beginnen Sie in der App erneut.", "fr": "Vous n'avez pas pu être connecté ; recommencez depuis l'application.",
            "es": "No se pudo iniciar su sesión; vuelva a empezar desde la aplicación.", "nl": "U kon niet inloggen; begin opnieuw vanuit de app.",
        ],
        "You may not do this.": [
            "de": "Das dürfen Sie nicht.", "fr": "Vous n'êtes pas autorisé à faire cela.", "es": "No tiene permiso para hacer esto.", "nl": "Dit mag u niet doen.",
        ],
        "{what} is locked after too many failed attempts; an administrator must unlock it.": [
            "de": "{what} ist nach zu vielen Fehlversuchen gesperrt; ein Administrator muss die Sperre aufheben.",
            "fr": "{what} : verrouillage après trop de tentatives échouées ; un administrateur doit le lever.",
            "es": "{what}: bloqueo tras demasiados intentos fallidos; un administrador debe levantarlo.",
            "nl": "{what} is geblokkeerd na te veel mislukte pogingen; een beheerder moet de blokkering opheffen.",
        ],
        "App version": ["de": "App-Version", "fr": "Version de l'application", "es": "Versión de la aplicación", "nl": "App-versie"],
        "Biometric factor enrolled": [
            "de": "Biometrischer Faktor eingerichtet", "fr": "Facteur biométrique enregistré", "es": "Factor biométrico registrado",
            "nl": "Biometrische factor ingesteld",
        ],
        "Build type": ["de": "Build-Typ", "fr": "Type de build", "es": "Tipo de compilación", "nl": "Buildtype"],
        "Code verifier": ["de": "Code-Verifier", "fr": "Vérificateur de code", "es": "Verificador de código", "nl": "Codeverificatie"],
        "Device name": ["de": "Gerätename", "fr": "Nom de l'appareil", "es": "Nombre del dispositivo", "nl": "Apparaatnaam"],
        "Installation id": ["de": "Installations-ID", "fr": "Identifiant d'installation", "es": "ID de instalación", "nl": "Installatie-id"],
        "Model": ["de": "Modell", "fr": "Modèle", "es": "Modelo", "nl": "Model"],
        "OS version": ["de": "Betriebssystemversion", "fr": "Version du système", "es": "Versión del sistema operativo", "nl": "Besturingssysteemversie"],
        "Platform": ["de": "Plattform", "fr": "Plateforme", "es": "Plataforma", "nl": "Platform"],
        "Push token": ["de": "Push-Token", "fr": "Jeton push", "es": "Token de notificaciones", "nl": "Pushtoken"],
        "Vendor id": ["de": "Hersteller-ID", "fr": "Identifiant fournisseur", "es": "ID de proveedor", "nl": "Leveranciers-id"],
    ]
}
