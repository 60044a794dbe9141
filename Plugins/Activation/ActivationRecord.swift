import Foundation
import GatehousePluginKit
import GatehouseSupport

/// An activation as stored: never the secret or the PIN, only a digest of the secret and a slow hash
/// of the PIN (keyed with the instance's sealed pepper).
struct ActivationRecord: Codable, Sendable, Hashable {
    enum State: String, Codable, Sendable {
        case pending, redeemed, revoked
        /// Wrong PINs locked it for good: it must be issued again.
        case locked
    }

    /// A flow that checked the PIN and is running the outcome's steps: no other flow may redeem the
    /// activation until it completes or `until` (its expiry) passes.
    struct Claim: Codable, Sendable, Hashable {
        var flowID: String
        var until: Date
    }

    var id: String
    var appID: String
    var accountID: String?
    /// A temporary registration's address (no account yet).
    var email: EmailAddress?
    var secretDigest: String
    var pinHash: String
    var alias: String?
    /// Issued while the account stays active elsewhere: redeeming adds an installation.
    var additional: Bool
    /// Where the activation data were emailed (redeeming them proves that address).
    var emailedTo: EmailAddress?
    var state: State
    var claim: Claim?
    var issuedBy: String
    var createdAt: Date
    var expiresAt: Date
    var redeemedAt: Date?
    var redeemedBy: String?
    var outcome: String?

    /// What administrators see (no digest, no hash).
    func item(now: Date) -> JSONValue {
        let time = ISO8601DateFormatter()
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        return [
            "id": .string(id), "account": text(accountID), "email": text(email?.value), "alias": text(alias), "additional": .bool(additional),
            "state": .string(displayState(now: now)), "issuedBy": .string(issuedBy), "createdAt": .string(time.string(from: createdAt)),
            "expiresAt": .string(time.string(from: expiresAt)), "emailedTo": text(emailedTo?.masked), "redeemedAt": text(redeemedAt.map(time.string(from:))),
            "redeemedBy": text(redeemedBy), "outcome": text(outcome),
        ]
    }

    /// `expired` is not stored: a pending activation past its expiry reads as expired.
    func displayState(now: Date) -> String {
        state == .pending && expiresAt <= now ? "expired" : state.rawValue
    }

    static func key(_ id: String) -> String { "activation/\(id)" }
    static let keyPrefix = "activation/"
}

/// An invitation of an address to an app, as stored; the link's token only as a digest.
struct InvitationRecord: Codable, Sendable, Hashable {
    enum State: String, Codable, Sendable { case pending, accepted, declined, revoked }

    var id: String
    var tokenDigest: String
    var appID: String
    var email: EmailAddress
    /// The account the address belongs to; nil: a temporary registration was made instead, and its
    /// activation data went out (`activationID`).
    var accountID: String?
    var activationID: String?
    var state: State
    var invitedBy: String
    var createdAt: Date
    var expiresAt: Date
    var answeredAt: Date?

    func item(now: Date) -> JSONValue {
        let time = ISO8601DateFormatter()
        return [
            "id": .string(id), "email": .string(email.value), "account": accountID.map(JSONValue.string) ?? .null,
            "activation": activationID.map(JSONValue.string) ?? .null, "kind": .string(accountID == nil ? "temporary_registration" : "account"),
            "state": .string(state == .pending && expiresAt <= now ? "expired" : state.rawValue), "invitedBy": .string(invitedBy),
            "createdAt": .string(time.string(from: createdAt)), "expiresAt": .string(time.string(from: expiresAt)),
            "answeredAt": answeredAt.map { .string(time.string(from: $0)) } ?? .null,
        ]
    }

    static func key(tokenDigest: String) -> String { "invitation/\(tokenDigest)" }
    static let keyPrefix = "invitation/"
}

/// The payload of activation data: `ga1.<id>.<secret>`, both random, base64url. It carries no PIN,
/// so it cannot be checked offline: only the broker knows whether a PIN is right.
struct ActivationPayload: Sendable, Hashable {
    var id: String
    var secret: String

    static let prefix = "ga1"

    static func make() -> ActivationPayload {
        ActivationPayload(id: RandomToken.make(byteCount: 12), secret: RandomToken.make(byteCount: 32))
    }

    init(id: String, secret: String) {
        self.id = id
        self.secret = secret
    }

    /// Reads a payload, or a deep link carrying one as its `activation` query parameter.
    init?(_ text: String) {
        var text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.contains("?"), let link = URLComponents(string: text), let value = link.queryItems?.first(where: { $0.name == "activation" })?.value {
            text = value
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let alphabet = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard parts.count == 3, parts[0] == Self.prefix, (8...64).contains(parts[1].count), (32...128).contains(parts[2].count),
            parts[1...].allSatisfy({ $0.unicodeScalars.allSatisfy(alphabet.contains) })
        else { return nil }
        self.init(id: parts[1], secret: parts[2])
    }

    var text: String { "\(Self.prefix).\(id).\(secret)" }
}
