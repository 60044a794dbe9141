import GatehousePluginKit

extension EmailCodePlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "A code was sent moments ago; wait before asking for another.": [
            "de": "Vor wenigen Augenblicken wurde ein Code gesendet; warten Sie, bevor Sie einen weiteren anfordern.",
            "fr": "Un code vient d'être envoyé ; patientez avant d'en demander un autre.", "es": "Se acaba de enviar un código; espere antes de pedir otro.",
            "nl": "Er is zojuist een code gestuurd; wacht even voordat u een nieuwe aanvraagt.",
        ],
        "Code": ["de": "Code", "fr": "Code", "es": "Código", "nl": "Code"],
        "Email address": ["de": "E-Mail-Adresse", "fr": "Adresse e-mail", "es": "Correo electrónico", "nl": "E-mailadres"],
        "Enter the code we sent to {sentTo}.": [
            "de": "Geben Sie den Code ein, den wir an {sentTo} gesendet haben.", "fr": "Saisissez le code que nous avons envoyé à {sentTo}.",
            "es": "Introduzca el código que enviamos a {sentTo}.", "nl": "Voer de code in die we naar {sentTo} hebben gestuurd.",
        ],
        "It works for {{minutes}} minutes. If you did not ask for it, ignore this email: someone may have typed your address by mistake.": [
            "de":
                "Er gilt {{minutes}} Minuten. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Vielleicht hat jemand Ihre Adresse versehentlich eingegeben.",
            "fr": "Il est valable {{minutes}} minutes. Si vous ne l'avez pas demandé, ignorez cet e-mail : quelqu'un a peut-être saisi votre adresse par erreur.",
            "es": "Es válido durante {{minutes}} minutos. Si no lo pidió, ignore este correo: puede que alguien haya escrito su dirección por error.",
            "nl": "Deze is {{minutes}} minuten geldig. Als u er niet om hebt gevraagd, negeer deze e-mail dan: misschien heeft iemand uw adres per ongeluk ingetypt.",
        ],
        "Send a new code": ["de": "Neuen Code senden", "fr": "Envoyer un nouveau code", "es": "Enviar un código nuevo", "nl": "Nieuwe code sturen"],
        "Send code": ["de": "Code senden", "fr": "Envoyer le code", "es": "Enviar código", "nl": "Code sturen"],
        "Sign in with an email code": [
            "de": "Mit einem E-Mail-Code anmelden", "fr": "Se connecter avec un code par e-mail", "es": "Iniciar sesión con un código por correo electrónico",
            "nl": "Inloggen met een e-mailcode",
        ],
        "The code has {digits} digits.": [
            "de": "Der Code hat {digits} Ziffern.", "fr": "Le code comporte {digits} chiffres.", "es": "El código tiene {digits} dígitos.",
            "nl": "De code heeft {digits} cijfers.",
        ],
        "The code is not right.": [
            "de": "Der Code ist nicht richtig.", "fr": "Le code n'est pas correct.", "es": "El código no es correcto.", "nl": "De code klopt niet.",
        ],
        "This account has no verified email address to send the code to; ask an administrator.": [
            "de": "Dieses Konto hat keine bestätigte E-Mail-Adresse, an die der Code gesendet werden kann; wenden Sie sich an einen Administrator.",
            "fr": "Ce compte n'a aucune adresse e-mail vérifiée à laquelle envoyer le code ; adressez-vous à un administrateur.",
            "es": "Esta cuenta no tiene ningún correo electrónico verificado al que enviar el código; consulte a un administrador.",
            "nl": "Dit account heeft geen geverifieerd e-mailadres om de code naar te sturen; vraag het een beheerder.",
        ],
        "This account needs an email address for its sign-in codes. We will send a code to prove it is yours.": [
            "de": "Dieses Konto braucht eine E-Mail-Adresse für seine Anmeldecodes. Wir senden einen Code, um zu bestätigen, dass sie Ihnen gehört.",
            "fr": "Ce compte a besoin d'une adresse e-mail pour ses codes de connexion. Nous enverrons un code pour prouver qu'elle est à vous.",
            "es": "Esta cuenta necesita un correo electrónico para sus códigos de inicio de sesión. Le enviaremos un código para comprobar que es suyo.",
            "nl": "Dit account heeft een e-mailadres nodig voor zijn inlogcodes. We sturen een code om te bevestigen dat het van u is.",
        ],
        "We will email you a code to sign in with.": [
            "de": "Wir senden Ihnen einen Code per E-Mail, mit dem Sie sich anmelden.", "fr": "Nous vous enverrons par e-mail un code pour vous connecter.",
            "es": "Le enviaremos por correo electrónico un código para iniciar sesión.", "nl": "We e-mailen u een code om mee in te loggen.",
        ],
        "Your {{app}} code is": [
            "de": "Ihr Code für {{app}} lautet", "fr": "Votre code pour {{app}} est", "es": "Su código de {{app}} es", "nl": "Uw code voor {{app}} is",
        ],
        "Your {{app}} code is {{code}}\n\nIt works for {{minutes}} minutes. If you did not ask for it, ignore this email: someone may have typed your address by mistake.\n":
            [
                "de":
                    "Ihr Code für {{app}} lautet {{code}}\n\nEr gilt {{minutes}} Minuten. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Vielleicht hat jemand Ihre Adresse versehentlich eingegeben.\n",
                "fr":
                    "Votre code pour {{app}} est {{code}}\n\nIl est valable {{minutes}} minutes. Si vous ne l'avez pas demandé, ignorez cet e-mail : quelqu'un a peut-être saisi votre adresse par erreur.\n",
                "es":
                    "Su código de {{app}} es {{code}}\n\nEs válido durante {{minutes}} minutos. Si no lo pidió, ignore este correo: puede que alguien haya escrito su dirección por error.\n",
                "nl":
                    "Uw code voor {{app}} is {{code}}\n\nDeze is {{minutes}} minuten geldig. Als u er niet om hebt gevraagd, negeer deze e-mail dan: misschien heeft iemand uw adres per ongeluk ingetypt.\n",
            ],
        "{{code}} is your {{app}} code": [
            "de": "{{code}} ist Ihr Code für {{app}}", "fr": "{{code}} est votre code pour {{app}}", "es": "{{code}} es su código de {{app}}",
            "nl": "{{code}} is uw code voor {{app}}",
        ],
        "Too many codes were asked for from this address; try again later.": [
            "de": "Von dieser Adresse wurden zu viele Codes angefordert; versuchen Sie es später erneut.",
            "fr": "Trop de codes ont été demandés depuis cette adresse ; réessayez plus tard.",
            "es": "Se han solicitado demasiados códigos desde esta dirección; inténtelo más tarde.",
            "nl": "Vanaf dit adres zijn te veel codes aangevraagd; probeer het later opnieuw.",
        ],
        "Too many codes were sent to this address; try again later.": [
            "de": "An diese Adresse wurden zu viele Codes gesendet; versuchen Sie es später erneut.",
            "fr": "Trop de codes ont été envoyés à cette adresse ; réessayez plus tard.",
            "es": "Se han enviado demasiados códigos a esta dirección; inténtelo más tarde.",
            "nl": "Er zijn te veel codes naar dit adres gestuurd; probeer het later opnieuw.",
        ],
        "The code could not be sent; try again in a moment.": [
            "de": "Der Code konnte nicht gesendet werden; versuchen Sie es gleich noch einmal.", "fr": "Le code n'a pas pu être envoyé ; réessayez dans un instant.",
            "es": "No se pudo enviar el código; inténtelo de nuevo en un momento.", "nl": "De code kon niet worden verstuurd; probeer het zo opnieuw.",
        ],
    ])
}
