import GatehouseCore

/// The account page's texts (`AccountTemplates`, the console layout it shares, its notices and
/// refusals) by the id a template names them with, and their translations keyed by the English text.
/// The admin console stays English: its layout gets the English values.
enum AccountTexts {
    /// id → English text.
    static let english: [String: String] = [
        "skip": "Skip to content", "signedInAs": "Signed in as", "signOut": "Sign out",
        "username": "Username", "name": "Name", "email": "Email address", "signsInWith": "Signs in with", "created": "Account created",
        "password": "Password", "changePassword": "Change password", "signInAgain": "Sign in again",
        "passwordHint": "Changing it signs you out of every other browser and app. Devices registered with a sign-in key stay: remove any you do not know below.",
        "devices": "Devices", "device": "Device", "registered": "Registered", "actions": "Actions", "action": "Action", "rename": "Rename", "remove": "Remove",
        "deviceRemoveWarning": "The device and its sign-in keys go; apps on it are signed out.", "removeDevice": "Remove the device", "none": "None.",
        "sessions": "Where you are signed in", "signedIn": "Signed in", "lastSeen": "Last seen", "apps": "Apps", "from": "From",
        "thisBrowser": "(this browser)", "endThisSession": "End this session", "signOutElsewhere": "Sign out everywhere else",
        "endOthers": "End every other session", "appsAllowed": "Apps you allowed", "app": "App", "maySee": "What it may see", "since": "Since",
        "takeBack": "Take back", "takeBackAccess": "Take back access", "removeIt": "Remove it", "setUp": "More ways to sign in",
    ]

    /// The `t` values of a page in `language`: every id, with the page's `language` and `direction`.
    static func values(language: String) -> [String: String] {
        var values = english.mapValues { text(of: $0, in: language) }
        values["language"] = language
        values["direction"] = LanguageChoice.rightToLeft.contains(language) ? "rtl" : "ltr"
        return values
    }

    /// `english` in `language`: the account page's own translation, else the sign-in pages' (the
    /// texts both show, "Sign out", are translated once), else as it is.
    static func text(of english: String, in language: String) -> String {
        language == "en" ? english : texts[english]?[language] ?? PageCatalog.texts[english]?[language] ?? english
    }

    /// Whether `english` has a text in `language` (here or among the sign-in pages').
    static func has(_ english: String, in language: String) -> Bool {
        texts[english]?[language] != nil || PageCatalog.texts[english]?[language] != nil
    }

    /// English text → [language: translation], for the texts the sign-in pages do not have.
    static let texts: [String: [String: String]] = [
        "(this browser)": ["de": "(dieser Browser)", "fr": "(ce navigateur)", "es": "(este navegador)", "nl": "(deze browser)"],
        "Account created": ["de": "Konto erstellt", "fr": "Compte créé", "es": "Cuenta creada", "nl": "Account aangemaakt"],
        "Action": ["de": "Aktion", "fr": "Action", "es": "Acción", "nl": "Actie"],
        "Actions": ["de": "Aktionen", "fr": "Actions", "es": "Acciones", "nl": "Acties"],
        "App": ["de": "App", "fr": "Application", "es": "Aplicación", "nl": "App"],
        "Apps": ["de": "Apps", "fr": "Applications", "es": "Aplicaciones", "nl": "Apps"],
        "Apps you allowed": [
            "de": "Von Ihnen erlaubte Apps", "fr": "Applications que vous avez autorisées", "es": "Aplicaciones que ha permitido", "nl": "Apps die u hebt toegestaan",
        ],
        "Authenticator app": ["de": "Authenticator-App", "fr": "Application d'authentification", "es": "Aplicación de autenticación", "nl": "Authenticator-app"],
        "Back to your account": ["de": "Zurück zu Ihrem Konto", "fr": "Retour à votre compte", "es": "Volver a su cuenta", "nl": "Terug naar uw account"],
        "Changing it signs you out of every other browser and app. Devices registered with a sign-in key stay: remove any you do not know below.": [
            "de":
                "Eine Änderung meldet Sie in allen anderen Browsern und Apps ab. Geräte, die mit einem Anmeldeschlüssel registriert sind, bleiben: Entfernen Sie unten alle, die Sie nicht kennen.",
            "fr":
                "Le changer vous déconnecte de tous les autres navigateurs et applications. Les appareils enregistrés avec une clé de connexion restent : supprimez ci-dessous ceux que vous ne reconnaissez pas.",
            "es":
                "Cambiarla cierra su sesión en todos los demás navegadores y aplicaciones. Los dispositivos registrados con una clave de inicio de sesión se mantienen: elimine abajo los que no reconozca.",
            "nl":
                "Wijzigen logt u uit in alle andere browsers en apps. Apparaten die met een inlogsleutel zijn geregistreerd, blijven: verwijder hieronder de apparaten die u niet kent.",
        ],
        "Device": ["de": "Gerät", "fr": "Appareil", "es": "Dispositivo", "nl": "Apparaat"],
        "Devices": ["de": "Geräte", "fr": "Appareils", "es": "Dispositivos", "nl": "Apparaten"],
        "End every other session": [
            "de": "Alle anderen Sitzungen beenden", "fr": "Mettre fin à toutes les autres sessions", "es": "Terminar todas las demás sesiones",
            "nl": "Alle andere sessies beëindigen",
        ],
        "End the session from {time}": [
            "de": "Die Sitzung von {time} beenden", "fr": "Mettre fin à la session de {time}", "es": "Terminar la sesión de {time}",
            "nl": "De sessie van {time} beëindigen",
        ],
        "End this session": ["de": "Diese Sitzung beenden", "fr": "Mettre fin à cette session", "es": "Terminar esta sesión", "nl": "Deze sessie beëindigen"],
        "Error code": ["de": "Fehlercode", "fr": "Code d'erreur", "es": "Código de error", "nl": "Foutcode"],
        "From": ["de": "Herkunft", "fr": "Provenance", "es": "Origen", "nl": "Herkomst"],
        "Last seen": ["de": "Zuletzt aktiv", "fr": "Dernière activité", "es": "Última actividad", "nl": "Laatst actief"],
        "Name of {alias}": ["de": "Name von {alias}", "fr": "Nom de {alias}", "es": "Nombre de {alias}", "nl": "Naam van {alias}"],
        "No session '{sessionID}' of this account is open.": [
            "de": "Für dieses Konto ist keine Sitzung '{sessionID}' offen.", "fr": "Aucune session '{sessionID}' de ce compte n'est ouverte.",
            "es": "No hay ninguna sesión '{sessionID}' abierta de esta cuenta.", "nl": "Er is geen sessie '{sessionID}' van dit account open.",
        ],
        "No such credential.": [
            "de": "Diese Anmeldedaten gibt es nicht.", "fr": "Identifiant introuvable.", "es": "No existe esa credencial.", "nl": "Deze inloggegevens bestaan niet.",
        ],
        "None.": ["de": "Keine.", "fr": "Aucun.", "es": "Ninguno.", "nl": "Geen."],
        "Not found": ["de": "Nicht gefunden", "fr": "Introuvable", "es": "No encontrado", "nl": "Niet gevonden"],
        "Only a recent sign-in with {provider} removes it: sign in to this page with it again, or ask an administrator.": [
            "de":
                "Entfernen ist nur nach einer kürzlichen Anmeldung mit {provider} möglich: Melden Sie sich damit erneut auf dieser Seite an oder fragen Sie einen Administrator.",
            "fr": "Seule une connexion récente avec {provider} permet de le supprimer : reconnectez-vous à cette page avec ce moyen, ou demandez à un administrateur.",
            "es": "Solo un inicio de sesión reciente con {provider} permite eliminarlo: vuelva a iniciar sesión en esta página con él o pida ayuda a un administrador.",
            "nl": "Alleen na recent inloggen met {provider} kunt u dit verwijderen: log er opnieuw mee in op deze pagina, of vraag het een beheerder.",
        ],
        "Passkeys": ["de": "Passkeys", "fr": "Clés d'accès", "es": "Llaves de acceso", "nl": "Passkeys"],
        "Registered": ["de": "Registriert", "fr": "Enregistré", "es": "Registrado", "nl": "Geregistreerd"],
        "Remove": ["de": "Entfernen", "fr": "Supprimer", "es": "Eliminar", "nl": "Verwijderen"],
        "Remove device {alias}": [
            "de": "Gerät {alias} entfernen", "fr": "Supprimer l'appareil {alias}", "es": "Eliminar el dispositivo {alias}", "nl": "Apparaat {alias} verwijderen",
        ],
        "Remove it": ["de": "Entfernen", "fr": "Supprimer", "es": "Eliminar", "nl": "Verwijderen"],
        "Remove the device": ["de": "Gerät entfernen", "fr": "Supprimer l'appareil", "es": "Eliminar el dispositivo", "nl": "Apparaat verwijderen"],
        "Remove {label}": ["de": "{label} entfernen", "fr": "Supprimer {label}", "es": "Eliminar {label}", "nl": "{label} verwijderen"],
        "Removed.": ["de": "Entfernt.", "fr": "Supprimé.", "es": "Eliminado.", "nl": "Verwijderd."],
        // Column headings and values of the credential lists most plugins share (`AccountPages.heading`).
        "Created at": ["de": "Erstellt am", "fr": "Créé le", "es": "Creado el", "nl": "Aangemaakt op"],
        "Last used at": ["de": "Zuletzt verwendet am", "fr": "Dernière utilisation le", "es": "Último uso el", "nl": "Laatst gebruikt op"],
        "yes": ["de": "ja", "fr": "oui", "es": "sí", "nl": "ja"],
        "no": ["de": "nein", "fr": "non", "es": "no", "nl": "nee"],
        "More ways to sign in": [
            "de": "Weitere Anmeldemöglichkeiten", "fr": "Autres moyens de vous connecter", "es": "Otras formas de iniciar sesión", "nl": "Meer manieren om in te loggen",
        ],
        "It is set up: use it the next time you sign in.": [
            "de": "Eingerichtet: Verwenden Sie es bei Ihrer nächsten Anmeldung.", "fr": "C'est configuré : utilisez-le lors de votre prochaine connexion.",
            "es": "Ya está configurado: úselo la próxima vez que inicie sesión.", "nl": "Het is ingesteld: gebruik het de volgende keer dat u inlogt.",
        ],
        "The setup stopped: the lists below show what is set up.": [
            "de": "Die Einrichtung wurde beendet: Die Listen unten zeigen, was eingerichtet ist.",
            "fr": "La configuration s'est arrêtée : les listes ci-dessous montrent ce qui est configuré.",
            "es": "La configuración se detuvo: las listas de abajo muestran lo que está configurado.",
            "nl": "Het instellen is gestopt: de lijsten hieronder tonen wat is ingesteld.",
        ],
        "To set it up, sign in again first: your sign-in is more than {minutes} minutes old.": [
            "de": "Melden Sie sich zum Einrichten zuerst erneut an: Ihre Anmeldung ist älter als {minutes} Minuten.",
            "fr": "Pour le configurer, reconnectez-vous d'abord : votre connexion date de plus de {minutes} minutes.",
            "es": "Para configurarlo, vuelva a iniciar sesión primero: su inicio de sesión tiene más de {minutes} minutos.",
            "nl": "Log eerst opnieuw in om het in te stellen: uw aanmelding is meer dan {minutes} minuten oud.",
        ],
        "Rename": ["de": "Umbenennen", "fr": "Renommer", "es": "Renombrar", "nl": "Naam wijzigen"],
        "Renamed.": ["de": "Umbenannt.", "fr": "Renommé.", "es": "Nombre cambiado.", "nl": "Naam gewijzigd."],
        "Sign in again": ["de": "Erneut anmelden", "fr": "Se reconnecter", "es": "Iniciar sesión de nuevo", "nl": "Opnieuw inloggen"],
        "Sign in again to confirm this action: your sign-in is older than {minutes} minutes.": [
            "de": "Melden Sie sich erneut an, um diese Aktion zu bestätigen: Ihre Anmeldung ist älter als {minutes} Minuten.",
            "fr": "Reconnectez-vous pour confirmer cette action : votre connexion date de plus de {minutes} minutes.",
            "es": "Inicie sesión de nuevo para confirmar esta acción: su inicio de sesión tiene más de {minutes} minutos.",
            "nl": "Log opnieuw in om deze actie te bevestigen: u bent meer dan {minutes} minuten geleden ingelogd.",
        ],
        "Sign in again to continue": [
            "de": "Melden Sie sich erneut an, um fortzufahren", "fr": "Reconnectez-vous pour continuer", "es": "Inicie sesión de nuevo para continuar",
            "nl": "Log opnieuw in om verder te gaan",
        ],
        "Sign in with it first ({provider}): only a sign-in that passed a credential's own provider removes it.": [
            "de": "Melden Sie sich zuerst damit an ({provider}): Nur eine Anmeldung über den eigenen Anbieter der Anmeldedaten kann sie entfernen.",
            "fr": "Connectez-vous d'abord avec ce moyen ({provider}) : seule une connexion passée par le fournisseur propre à l'identifiant permet de le supprimer.",
            "es": "Inicie sesión primero con ella ({provider}): solo un inicio de sesión que pasó por el proveedor de la propia credencial permite eliminarla.",
            "nl": "Log er eerst mee in ({provider}): alleen na inloggen via de eigen provider van de inloggegevens kunt u ze verwijderen.",
        ],
        "Sign in with your second factor ({factors}) first: a password alone does not change this.": [
            "de": "Melden Sie sich zuerst mit Ihrem zweiten Faktor ({factors}) an: Ein Passwort allein genügt für diese Änderung nicht.",
            "fr": "Connectez-vous d'abord avec votre second facteur ({factors}) : un mot de passe seul ne suffit pas pour ce changement.",
            "es": "Inicie sesión primero con su segundo factor ({factors}): una contraseña sola no basta para este cambio.",
            "nl": "Log eerst in met uw tweede factor ({factors}): een wachtwoord alleen is niet genoeg voor deze wijziging.",
        ],
        "Sign out everywhere else": [
            "de": "Überall sonst abmelden", "fr": "Se déconnecter partout ailleurs", "es": "Cerrar sesión en los demás sitios", "nl": "Overal elders uitloggen",
        ],
        "Signed in": ["de": "Angemeldet", "fr": "Connecté", "es": "Sesión iniciada", "nl": "Ingelogd"],
        "Signed in as": ["de": "Angemeldet als", "fr": "Connecté en tant que", "es": "Sesión iniciada como", "nl": "Ingelogd als"],
        "Signed out there.": ["de": "Dort abgemeldet.", "fr": "Déconnexion effectuée.", "es": "Se cerró la sesión allí.", "nl": "Daar uitgelogd."],
        "Signs in with": ["de": "Anmeldung über", "fr": "Connexion via", "es": "Inicio de sesión con", "nl": "Inloggen via"],
        "Since": ["de": "Seit", "fr": "Depuis", "es": "Desde", "nl": "Sinds"],
        "Skip to content": ["de": "Zum Inhalt springen", "fr": "Aller au contenu", "es": "Saltar al contenido", "nl": "Naar de inhoud"],
        "Take back": ["de": "Widerrufen", "fr": "Retirer", "es": "Revocar", "nl": "Intrekken"],
        "Take back access": ["de": "Zugriff widerrufen", "fr": "Retirer l'accès", "es": "Revocar el acceso", "nl": "Toegang intrekken"],
        "Take back what {app} may see": [
            "de": "Widerrufen, was {app} sehen darf", "fr": "Retirer ce que {app} peut voir", "es": "Revocar lo que {app} puede ver",
            "nl": "Intrekken wat {app} mag zien",
        ],
        "That did not work": ["de": "Das hat nicht funktioniert", "fr": "Cela n'a pas fonctionné", "es": "Eso no funcionó", "nl": "Dat is niet gelukt"],
        "The app's access is taken back; it asks again next time.": [
            "de": "Der Zugriff der App ist widerrufen; sie fragt beim nächsten Mal erneut.",
            "fr": "L'accès de l'application est retiré ; elle redemandera la prochaine fois.",
            "es": "Se ha revocado el acceso de la aplicación; la próxima vez volverá a pedirlo.",
            "nl": "De toegang van de app is ingetrokken; de app vraagt het de volgende keer opnieuw.",
        ],
        "The broker's ID token did not verify. Sign in again.": [
            "de": "Das ID-Token des Brokers konnte nicht verifiziert werden. Melden Sie sich erneut an.",
            "fr": "Le jeton d'identité du broker n'a pas pu être vérifié. Reconnectez-vous.",
            "es": "No se pudo verificar el token de ID del broker. Inicie sesión de nuevo.",
            "nl": "Het ID-token van de broker kon niet worden geverifieerd. Log opnieuw in.",
        ],
        "The device and its sign-in keys go; apps on it are signed out.": [
            "de": "Das Gerät und seine Anmeldeschlüssel werden entfernt; Apps darauf werden abgemeldet.",
            "fr": "L'appareil et ses clés de connexion sont supprimés ; les applications qui s'y trouvent sont déconnectées.",
            "es": "Se eliminan el dispositivo y sus claves de inicio de sesión; se cierra la sesión de sus aplicaciones.",
            "nl": "Het apparaat en zijn inlogsleutels verdwijnen; apps erop worden uitgelogd.",
        ],
        "The form was refused": [
            "de": "Das Formular wurde abgelehnt", "fr": "Le formulaire a été refusé", "es": "Se rechazó el formulario", "nl": "Het formulier is geweigerd",
        ],
        "The sign-in came back without a code.": [
            "de": "Die Anmeldung kam ohne Code zurück.", "fr": "La connexion est revenue sans code.", "es": "El inicio de sesión volvió sin código.",
            "nl": "De inlogpoging kwam terug zonder code.",
        ],
        "The sign-in did not finish ({error}).": [
            "de": "Die Anmeldung wurde nicht abgeschlossen ({error}).", "fr": "La connexion n'a pas abouti ({error}).", "es": "El inicio de sesión no terminó ({error}).",
            "nl": "Het inloggen is niet voltooid ({error}).",
        ],
        "The sign-in's state does not match. Sign in again.": [
            "de": "Der Status der Anmeldung stimmt nicht überein. Melden Sie sich erneut an.", "fr": "L'état de la connexion ne correspond pas. Reconnectez-vous.",
            "es": "El estado del inicio de sesión no coincide. Inicie sesión de nuevo.", "nl": "De status van de inlogpoging komt niet overeen. Log opnieuw in.",
        ],
        "There is a problem": ["de": "Es gibt ein Problem", "fr": "Il y a un problème", "es": "Hay un problema", "nl": "Er is een probleem"],
        "This account cannot be managed here.": [
            "de": "Dieses Konto kann hier nicht verwaltet werden.", "fr": "Ce compte ne peut pas être géré ici.", "es": "Esta cuenta no se puede gestionar aquí.",
            "nl": "Dit account kan hier niet worden beheerd.",
        ],
        "This account has no password kept here: change it where you sign in.": [
            "de": "Für dieses Konto wird hier kein Passwort gespeichert: Ändern Sie es dort, wo Sie sich anmelden.",
            "fr": "Ce compte n'a pas de mot de passe conservé ici : changez-le là où vous vous connectez.",
            "es": "Esta cuenta no tiene contraseña guardada aquí: cámbiela donde inicia sesión.",
            "nl": "Voor dit account wordt hier geen wachtwoord bewaard: wijzig het waar u inlogt.",
        ],
        "This account has no such credential.": [
            "de": "Dieses Konto hat keine solchen Anmeldedaten.", "fr": "Ce compte n'a pas cet identifiant.", "es": "Esta cuenta no tiene esa credencial.",
            "nl": "Dit account heeft deze inloggegevens niet.",
        ],
        "This account has passwords at several providers; an administrator resets them one by one.": [
            "de": "Dieses Konto hat Passwörter bei mehreren Anbietern; ein Administrator setzt sie einzeln zurück.",
            "fr": "Ce compte a des mots de passe chez plusieurs fournisseurs ; un administrateur les réinitialise un par un.",
            "es": "Esta cuenta tiene contraseñas en varios proveedores; un administrador las restablece una por una.",
            "nl": "Dit account heeft wachtwoorden bij meerdere providers; een beheerder stelt ze één voor één opnieuw in.",
        ],
        "This form is out of date or did not come from the console. Reload the page and try again.": [
            "de": "Dieses Formular ist veraltet oder stammt nicht aus der Konsole. Laden Sie die Seite neu und versuchen Sie es erneut.",
            "fr": "Ce formulaire est périmé ou ne provient pas de la console. Rechargez la page et réessayez.",
            "es": "Este formulario está caducado o no procede de la consola. Recargue la página e inténtelo de nuevo.",
            "nl": "Dit formulier is verouderd of komt niet uit de console. Laad de pagina opnieuw en probeer het nogmaals.",
        ],
        "This sign-in was not started in this browser, or it took too long. Sign in again.": [
            "de": "Diese Anmeldung wurde nicht in diesem Browser begonnen oder hat zu lange gedauert. Melden Sie sich erneut an.",
            "fr": "Cette connexion n'a pas été lancée dans ce navigateur, ou elle a pris trop de temps. Reconnectez-vous.",
            "es": "Este inicio de sesión no empezó en este navegador o tardó demasiado. Inicie sesión de nuevo.",
            "nl": "Deze inlogpoging is niet in deze browser gestart, of duurde te lang. Log opnieuw in.",
        ],
        "To change your password, sign in again first: your sign-in is more than {minutes} minutes old.": [
            "de": "Um Ihr Passwort zu ändern, melden Sie sich zuerst erneut an: Ihre Anmeldung ist älter als {minutes} Minuten.",
            "fr": "Pour changer votre mot de passe, reconnectez-vous d'abord : votre connexion date de plus de {minutes} minutes.",
            "es": "Para cambiar su contraseña, inicie sesión de nuevo primero: su inicio de sesión tiene más de {minutes} minutos.",
            "nl": "Om uw wachtwoord te wijzigen, logt u eerst opnieuw in: u bent meer dan {minutes} minuten geleden ingelogd.",
        ],
        "What it may see": ["de": "Was sie sehen darf", "fr": "Ce qu'elle peut voir", "es": "Lo que puede ver", "nl": "Wat de app mag zien"],
        "Where you are signed in": ["de": "Wo Sie angemeldet sind", "fr": "Où vous êtes connecté", "es": "Dónde ha iniciado sesión", "nl": "Waar u bent ingelogd"],
        "You are signed out.": ["de": "Sie sind abgemeldet.", "fr": "Vous êtes déconnecté.", "es": "Ha cerrado sesión.", "nl": "U bent uitgelogd."],
        "Your account": ["de": "Ihr Konto", "fr": "Votre compte", "es": "Su cuenta", "nl": "Uw account"],
        "Your console session has ended. Sign in again.": [
            "de": "Ihre Konsolensitzung ist beendet. Melden Sie sich erneut an.", "fr": "Votre session de console a pris fin. Reconnectez-vous.",
            "es": "Su sesión de la consola ha terminado. Inicie sesión de nuevo.", "nl": "Uw consolesessie is beëindigd. Log opnieuw in.",
        ],
        "Your password is changed; every other session and app was signed out.": [
            "de": "Ihr Passwort ist geändert; alle anderen Sitzungen und Apps wurden abgemeldet.",
            "fr": "Votre mot de passe est changé ; toutes les autres sessions et applications ont été déconnectées.",
            "es": "Se ha cambiado su contraseña; se cerraron todas las demás sesiones, también en las aplicaciones.",
            "nl": "Uw wachtwoord is gewijzigd; alle andere sessies en apps zijn uitgelogd.",
        ],
        "Your session on this page has ended. Sign in again.": [
            "de": "Ihre Sitzung auf dieser Seite ist beendet. Melden Sie sich erneut an.", "fr": "Votre session sur cette page a pris fin. Reconnectez-vous.",
            "es": "Su sesión en esta página ha terminado. Inicie sesión de nuevo.", "nl": "Uw sessie op deze pagina is beëindigd. Log opnieuw in.",
        ],
    ]
}
