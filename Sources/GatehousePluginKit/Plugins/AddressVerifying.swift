import Foundation

/// Proves that a person controls an email address by sending a one-time code to it. The core uses it
/// to verify the address of a provisional identity before attaching it, and to prove a person in a
/// password recovery.
public protocol AddressVerifying: GatehousePlugin {
    /// Sends a new code to `address`, bound to `binding`: only a check naming the same binding accepts
    /// it. Lockouts and resend limits apply; a code that could not be sent is never usable.
    func sendCode(to address: EmailAddress, binding: String, app: AppView, clientIP: String?) async throws -> CodeDelivery
    /// Checks a code sent for `binding`. A right code is used up and answers the address it went to.
    func checkCode(_ code: String, binding: String) async throws -> EmailAddress
    /// How the address was proven, for the audit log (`email_code`).
    var proofMethod: String { get }
}

/// What a code's binding says about its purpose: a password recovery's codes are bound to
/// `recovery:<flow>`, so that a verifier keeps their wrong guesses and send limits apart from sign-in
/// codes (a stranger guessing at someone's recovery must not lock their sign-in).
public enum CodeBinding {
    /// The prefix of every recovery binding.
    public static let recoveryPrefix = "recovery:"

    /// The binding of a password recovery flow's codes.
    public static func recovery(flowID: String) -> String { recoveryPrefix + flowID }

    /// Whether a binding is a password recovery's.
    public static func isRecovery(_ binding: String) -> Bool { binding.hasPrefix(recoveryPrefix) }
}

/// Where a one-time code went and until when it works.
public struct CodeDelivery: Sendable, Hashable {
    /// The address the code went to.
    public var sentTo: EmailAddress
    /// Until when the code works.
    public var expiresAt: Date
    /// When the next code may be asked for.
    public var resendAfter: Date

    /// A delivery.
    public init(sentTo: EmailAddress, expiresAt: Date, resendAfter: Date) {
        self.sentTo = sentTo
        self.expiresAt = expiresAt
        self.resendAfter = resendAfter
    }
}
