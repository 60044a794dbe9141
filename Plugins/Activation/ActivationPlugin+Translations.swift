import GatehousePluginKit
import GatehouseSupport

extension ActivationPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks (with the PIN
    /// rules' refusals).
    public static let translations = TextTranslations([
        "Activate": ["de": "Aktivieren", "fr": "Activer", "es": "Activar", "nl": "Activeren"],
        "Activate this device": ["de": "Dieses Gerät aktivieren", "fr": "Activer cet appareil", "es": "Activar este dispositivo", "nl": "Dit apparaat activeren"],
        "Activate {app}": ["de": "{app} aktivieren", "fr": "Activer {app}", "es": "Activar {app}", "nl": "{app} activeren"],
        "Activation PIN": ["de": "Aktivierungs-PIN", "fr": "Code PIN d'activation", "es": "PIN de activación", "nl": "Activeringspincode"],
        "Activation data": ["de": "Aktivierungsdaten", "fr": "Données d'activation", "es": "Datos de activación", "nl": "Activeringsgegevens"],
        "Backup email address for the new activation": [
            "de": "Ersatz-E-Mail-Adresse für die neue Aktivierung", "fr": "Adresse e-mail de secours pour la nouvelle activation",
            "es": "Correo electrónico de respaldo para la nueva activación", "nl": "Reserve-e-mailadres voor de nieuwe activering",
        ],
        "Choice": ["de": "Auswahl", "fr": "Choix", "es": "Opción", "nl": "Keuze"],
        "Enter the activation data and the activation PIN you were given.": [
            "de": "Geben Sie die Aktivierungsdaten und die Aktivierungs-PIN ein, die Sie erhalten haben.",
            "fr": "Saisissez les données d'activation et le code PIN d'activation qui vous ont été remis.",
            "es": "Introduzca los datos de activación y el PIN de activación que recibió.",
            "nl": "Voer de activeringsgegevens en de activeringspincode in die u hebt gekregen.",
        ],
        "Name of the new device": [
            "de": "Name des neuen Geräts", "fr": "Nom du nouvel appareil", "es": "Nombre del nuevo dispositivo", "nl": "Naam van het nieuwe apparaat",
        ],
        "New activation PIN": ["de": "Neue Aktivierungs-PIN", "fr": "Nouveau code PIN d'activation", "es": "Nuevo PIN de activación", "nl": "Nieuwe activeringspincode"],
        "Open this link on the device you want to use {app} on:\n\n{link}\n\nThe app asks for your activation PIN, which you received separately (or chose yourself).\nThe link works until {until}. If you did not expect this email, ignore it.":
            [
                "de":
                    "Öffnen Sie diesen Link auf dem Gerät, auf dem Sie {app} verwenden möchten:\n\n{link}\n\nDie App fragt nach Ihrer Aktivierungs-PIN, die Sie separat erhalten (oder selbst gewählt) haben.\nDer Link gilt bis {until}. Wenn Sie diese E-Mail nicht erwartet haben, ignorieren Sie sie.",
                "fr":
                    "Ouvrez ce lien sur l'appareil sur lequel vous voulez utiliser {app} :\n\n{link}\n\nL'application vous demande votre code PIN d'activation, que vous avez reçu séparément (ou choisi vous-même).\nLe lien est valable jusqu'au {until}. Si vous n'attendiez pas cet e-mail, ignorez-le.",
                "es":
                    "Abra este enlace en el dispositivo en el que quiere usar {app}:\n\n{link}\n\nLa aplicación le pide su PIN de activación, que recibió por separado (o que eligió usted).\nEl enlace funciona hasta el {until}. Si no esperaba este correo, ignórelo.",
                "nl":
                    "Open deze link op het apparaat waarop u {app} wilt gebruiken:\n\n{link}\n\nDe app vraagt om uw activeringspincode, die u apart hebt ontvangen (of zelf hebt gekozen).\nDe link werkt tot {until}. Als u deze e-mail niet verwachtte, negeer hem dan.",
            ],
        "That activation PIN is not right.": [
            "de": "Diese Aktivierungs-PIN ist nicht richtig.", "fr": "Ce code PIN d'activation n'est pas correct.", "es": "Ese PIN de activación no es correcto.",
            "nl": "Die activeringspincode klopt niet.",
        ],
        "These activation data are not valid.": [
            "de": "Diese Aktivierungsdaten sind ungültig.", "fr": "Ces données d'activation ne sont pas valides.", "es": "Estos datos de activación no son válidos.",
            "nl": "Deze activeringsgegevens zijn ongeldig.",
        ],
        "This account is set up elsewhere already ({outcome}). Choose how to go on.": [
            "de": "Dieses Konto ist bereits anderswo eingerichtet ({outcome}). Wählen Sie, wie es weitergeht.",
            "fr": "Ce compte est déjà configuré ailleurs ({outcome}). Choisissez comment continuer.",
            "es": "Esta cuenta ya está configurada en otro lugar ({outcome}). Elija cómo continuar.",
            "nl": "Dit account is al elders ingesteld ({outcome}). Kies hoe u verdergaat.",
        ],
        "You are invited to use {app} with your account.\n\nAccept or decline the invitation here:\n\n{link}\n\nThe invitation is open until {until}. If you did not expect it, decline it or ignore this email.":
            [
                "de":
                    "Sie sind eingeladen, {app} mit Ihrem Konto zu verwenden.\n\nNehmen Sie die Einladung hier an oder lehnen Sie sie ab:\n\n{link}\n\nDie Einladung gilt bis {until}. Wenn Sie sie nicht erwartet haben, lehnen Sie sie ab oder ignorieren Sie diese E-Mail.",
                "fr":
                    "Vous êtes invité à utiliser {app} avec votre compte.\n\nAcceptez ou refusez l'invitation ici :\n\n{link}\n\nL'invitation est ouverte jusqu'au {until}. Si vous ne l'attendiez pas, refusez-la ou ignorez cet e-mail.",
                "es":
                    "Tiene una invitación para usar {app} con su cuenta.\n\nAcepte o rechace la invitación aquí:\n\n{link}\n\nLa invitación está abierta hasta el {until}. Si no la esperaba, rechácela o ignore este correo.",
                "nl":
                    "U bent uitgenodigd om {app} met uw account te gebruiken.\n\nAccepteer of weiger de uitnodiging hier:\n\n{link}\n\nDe uitnodiging staat open tot {until}. Als u deze niet verwachtte, weiger haar dan of negeer deze e-mail.",
            ],
        "You are invited to {app}": [
            "de": "Sie sind zu {app} eingeladen", "fr": "Vous êtes invité à {app}", "es": "Tiene una invitación a {app}", "nl": "U bent uitgenodigd voor {app}",
        ],
        "Accept": ["de": "Annehmen", "fr": "Accepter", "es": "Aceptar", "nl": "Accepteren"],
        "Decline": ["de": "Ablehnen", "fr": "Refuser", "es": "Rechazar", "nl": "Weigeren"],
        "Activate on this device": [
            "de": "Auf diesem Gerät aktivieren", "fr": "Activer sur cet appareil", "es": "Activar en este dispositivo", "nl": "Activeren op dit apparaat",
        ],
        "Open this link on the device you want to use, or scan it as a QR code there, and enter the PIN you chose:": [
            "de": "Öffnen Sie diesen Link auf dem Gerät, das Sie nutzen möchten, oder scannen Sie ihn dort als QR-Code, und geben Sie die gewählte PIN ein:",
            "fr": "Ouvrez ce lien sur l'appareil que vous voulez utiliser, ou scannez-le là comme code QR, et saisissez le code PIN choisi :",
            "es": "Abra este enlace en el dispositivo que quiere usar, o escanéelo allí como código QR, e introduzca el PIN que eligió:",
            "nl": "Open deze link op het apparaat dat u wilt gebruiken, of scan hem daar als QR-code, en voer de gekozen pincode in:",
        ],
        "Open this link in the app on your device to activate it. If the app asks for activation data, enter these:": [
            "de": "Öffnen Sie diesen Link in der App auf Ihrem Gerät, um es zu aktivieren. Wenn die App nach Aktivierungsdaten fragt, geben Sie diese ein:",
            "fr": "Ouvrez ce lien dans l'application sur votre appareil pour l'activer. Si l'application demande des données d'activation, saisissez celles-ci :",
            "es": "Abra este enlace en la aplicación de su dispositivo para activarlo. Si la aplicación pide datos de activación, introduzca estos:",
            "nl": "Open deze link in de app op uw apparaat om het te activeren. Als de app om activeringsgegevens vraagt, voer dan deze in:",
        ],
        "You are invited to {app} ({email}).": [
            "de": "Sie sind zu {app} eingeladen ({email}).", "fr": "Vous êtes invité à {app} ({email}).", "es": "Tiene una invitación a {app} ({email}).",
            "nl": "U bent uitgenodigd voor {app} ({email}).",
        ],
        "Choose an activation PIN ({minLength} to {maxLength} digits)": [
            "de": "Wählen Sie eine Aktivierungs-PIN ({minLength} bis {maxLength} Ziffern)",
            "fr": "Choisissez un code PIN d'activation ({minLength} à {maxLength} chiffres)", "es": "Elija un PIN de activación (de {minLength} a {maxLength} dígitos)",
            "nl": "Kies een activeringspincode ({minLength} tot {maxLength} cijfers)",
        ],
        "This invitation is {state}.": [
            "de": "Diese Einladung ist {state}.", "fr": "Cette invitation est {state}.", "es": "Esta invitación está {state}.", "nl": "Deze uitnodiging is {state}.",
        ],
        "pending": ["de": "offen", "fr": "en attente", "es": "pendiente", "nl": "open"],
        "accepted": ["de": "angenommen", "fr": "acceptée", "es": "aceptada", "nl": "geaccepteerd"],
        "declined": ["de": "abgelehnt", "fr": "refusée", "es": "rechazada", "nl": "geweigerd"],
        "revoked": ["de": "widerrufen", "fr": "révoquée", "es": "revocada", "nl": "ingetrokken"],
        "expired": ["de": "abgelaufen", "fr": "expirée", "es": "caducada", "nl": "verlopen"],
        "It works until {until}.": [
            "de": "Er gilt bis {until}.", "fr": "Il est valable jusqu'au {until}.", "es": "Es válido hasta el {until}.", "nl": "Hij werkt tot {until}.",
        ],
        "Invitation": ["de": "Einladung", "fr": "Invitation", "es": "Invitación", "nl": "Uitnodiging"],
        "Activate your device": ["de": "Aktivieren Sie Ihr Gerät", "fr": "Activez votre appareil", "es": "Active su dispositivo", "nl": "Activeer uw apparaat"],
        "Choose Accept or Decline.": [
            "de": "Wählen Sie Annehmen oder Ablehnen.", "fr": "Choisissez Accepter ou Refuser.", "es": "Elija Aceptar o Rechazar.", "nl": "Kies Accepteren of Weigeren.",
        ],
    ]).merging(PINRules.translations)
}
