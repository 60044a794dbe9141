import Foundation
import GatehousePluginKit

/// The emails of activations and invitations, in the app's language (`AppView.language`). They
/// carry links only; an activation PIN never goes by email (it travels by another channel than the
/// payload, or the person chose it).
enum ActivationMail {
    static func activation(app: AppView, link: String, expiresAt: Date, to address: EmailAddress) -> EmailMessage {
        let values = ["app": app.name, "link": link, "until": ISO8601DateFormatter().string(from: expiresAt)]
        let texts = ActivationPlugin.translations
        return EmailMessage(
            to: address.value, subject: texts.text("Activate {app}", in: app.language, values),
            text: texts.text(
                """
                Open this link on the device you want to use {app} on:

                {link}

                The app asks for your activation PIN, which you received separately (or chose yourself).
                The link works until {until}. If you did not expect this email, ignore it.
                """, in: app.language, values)
        )
    }

    static func invitation(app: AppView, link: String, expiresAt: Date, to address: EmailAddress) -> EmailMessage {
        let values = ["app": app.name, "link": link, "until": ISO8601DateFormatter().string(from: expiresAt)]
        let texts = ActivationPlugin.translations
        return EmailMessage(
            to: address.value, subject: texts.text("You are invited to {app}", in: app.language, values),
            text: texts.text(
                """
                You are invited to use {app} with your account.

                Accept or decline the invitation here:

                {link}

                The invitation is open until {until}. If you did not expect it, decline it or ignore this email.
                """, in: app.language, values)
        )
    }
}
