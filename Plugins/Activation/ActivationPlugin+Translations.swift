import GatehousePluginKit

extension ActivationPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
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
    ])
}
