import Foundation
import GatehousePluginKit
import GatehouseSupport

/// What an activation is issued for.
public struct ActivationRequest: Sendable, Hashable {
    /// The account, or (without one) the address of a temporary registration.
    public var accountID: String?
    /// The address of a temporary registration, when there is no account.
    public var email: EmailAddress?
    /// The activation PIN; nil: one is generated and answered once.
    public var pin: String?
    /// The name the device will get.
    public var alias: String?
    /// Email the activation data: to `sendTo` when set, else to the temporary registration's address
    /// or the account's verified one.
    public var send: Bool
    /// A backup address a person names for the activation data.
    public var sendTo: EmailAddress?
    /// Issued while the account stays active elsewhere (a `re_activation` answered with
    /// `new_activation`): redeeming it adds an installation instead of offering an override.
    public var additional: Bool

    /// A request; see each property.
    public init(
        accountID: String? = nil, email: EmailAddress? = nil, pin: String? = nil, alias: String? = nil, send: Bool = false, sendTo: EmailAddress? = nil,
        additional: Bool = false
    ) {
        self.send = send || sendTo != nil
        self.accountID = accountID
        self.email = email
        self.pin = pin
        self.alias = alias
        self.sendTo = sendTo
        self.additional = additional
    }
}

/// Activation data as issued: shown once, never stored (only a digest of the secret and a slow hash
/// of the PIN are).
public struct IssuedActivation: Sendable, Hashable {
    /// The activation's id.
    public var id: String
    /// The opaque payload (activation id and secret, never the PIN).
    public var payload: String
    /// The deep link the app opens (`<deepLink>?activation=<payload>`); also what a QR code encodes.
    public var deepLink: String
    /// The PIN when the broker generated it (to hand over by another channel than the payload).
    public var generatedPIN: String?
    /// Until when it can be redeemed.
    public var expiresAt: Date
    /// Where the activation data were emailed, masked.
    public var sentTo: String?

    /// Activation data as issued.
    public init(id: String, payload: String, deepLink: String, generatedPIN: String?, expiresAt: Date, sentTo: String?) {
        self.id = id
        self.payload = payload
        self.deepLink = deepLink
        self.generatedPIN = generatedPIN
        self.expiresAt = expiresAt
        self.sentTo = sentTo
    }

    /// The JSON every API answers with. Activation data that were emailed are not answered: the
    /// address they went to is what redeeming them proves, so whoever issued them must not hold them.
    public var json: JSONValue {
        var fields: [String: JSONValue] = ["id": .string(id), "expiresAt": .string(ISO8601DateFormatter().string(from: expiresAt))]
        if let sentTo {
            fields["sentTo"] = .string(sentTo)
        } else {
            fields["payload"] = .string(payload)
            fields["deepLink"] = .string(deepLink)
            fields["qr"] = .string(deepLink)
        }
        if let generatedPIN { fields["pin"] = .string(generatedPIN) }
        return .object(fields)
    }
}

/// An invitation as its link shows it.
public struct InvitationView: Sendable, Hashable {
    /// The app the invitation is for.
    public var appID: String
    /// The app's name.
    public var appName: String
    /// The invited address, masked.
    public var email: String
    /// `pending`, `accepted`, `declined`, `revoked` or `expired`.
    public var state: String
    /// Until when it can be answered.
    public var expiresAt: Date
    /// The PIN rules the person's activation PIN must follow.
    public var pinPolicy: PINRules

    /// An invitation's view.
    public init(appID: String, appName: String, email: String, state: String, expiresAt: Date, pinPolicy: PINRules) {
        self.appID = appID
        self.appName = appName
        self.email = email
        self.state = state
        self.expiresAt = expiresAt
        self.pinPolicy = pinPolicy
    }
}

/// What answering an invitation did: declined, or accepted with the new activation's data.
public struct InvitationAnswer: Sendable, Hashable {
    /// Whether the person accepted.
    public var accepted: Bool
    /// The activation data accepting issued.
    public var activation: IssuedActivation?

    /// An answer.
    public init(accepted: Bool, activation: IssuedActivation?) {
        self.accepted = accepted
        self.activation = activation
    }
}

extension ActivationRequest {
    /// The request an administrator or an app's back end sends: `account` or `email` (one of them),
    /// and optionally `pin`, `alias` and `send` (true or "true"). Refusals are `invalid_request`
    /// naming the field.
    public init(fields: [String: JSONValue]) throws(BrokerError) {
        func refused(_ field: String, _ message: String) -> BrokerError {
            BrokerError(.invalidRequest, .badRequest, "'\(field)' \(message).", issues: [ConfigIssue(path: field, message)])
        }
        func text(_ field: String) throws(BrokerError) -> String? {
            guard let value = fields[field], value != .null else { return nil }
            guard let string = value.stringValue, !string.isEmpty, string.count <= 256 else { throw refused(field, "must be a string of 1 to 256 characters") }
            return string
        }
        for name in fields.keys where !["account", "email", "pin", "alias", "send"].contains(name) {
            throw refused(name, "is not a field of an activation (account, email, pin, alias, send)")
        }
        let account = try text("account")
        var email: EmailAddress?
        if let address = try text("email") {
            guard let parsed = EmailAddress(address) else { throw refused("email", "is not an email address") }
            email = parsed
        }
        guard (account == nil) != (email == nil) else { throw refused("account", "or 'email' is required, not both") }
        var send = false
        switch fields["send"] {
        case nil, .null?: break
        case .bool(let flag)?: send = flag
        case .string(let flag)? where ["true", "false"].contains(flag): send = flag == "true"
        default: throw refused("send", "must be true or false")
        }
        self.init(accountID: account, email: email, pin: try text("pin"), alias: try text("alias"), send: send)
    }
}

extension BrokerError {
    /// An invitation token nobody issued (or no longer answerable): the same answer either way.
    public static let unknownInvitation = BrokerError(.invalidInvitation, .notFound, "No such invitation; ask for a new one.")
}
