import Foundation
import GatehousePluginKit

/// The emails of activations and invitations. They carry links only; an activation PIN never goes
/// by email (it travels by another channel than the payload, or the person chose it).
enum ActivationMail {
    static func activation(app: AppView, link: String, expiresAt: Date, to address: EmailAddress) -> EmailMessage {
        let until = ISO8601DateFormatter().string(from: expiresAt)
        return EmailMessage(
            to: address.value, subject: "Activate \(app.name)",
            text: """
                Open this link on the device you want to use \(app.name) on:

                \(link)

                The app asks for your activation PIN, which you received separately (or chose yourself).
                The link works until \(until). If you did not expect this email, ignore it.
                """
        )
    }

    static func invitation(app: AppView, link: String, expiresAt: Date, to address: EmailAddress) -> EmailMessage {
        let until = ISO8601DateFormatter().string(from: expiresAt)
        return EmailMessage(
            to: address.value, subject: "You are invited to \(app.name)",
            text: """
                You are invited to use \(app.name) with your account.

                Accept or decline the invitation here:

                \(link)

                The invitation is open until \(until). If you did not expect it, decline it or ignore this email.
                """
        )
    }
}
