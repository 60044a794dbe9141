import Foundation
import GatehousePluginKit

/// What redeeming activation data found (XignSys's personalization outcomes): which of the four
/// situations the installation is in, each with its own next steps.
public enum ActivationOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// Never activated: the installation registers its device key.
    case new
    /// The account is active on another installation: override it, or ask for a new activation.
    case reActivation = "re_activation"
    /// This very installation is active for the account already: re-enrol its key, or stop.
    case alreadyActivated = "already_activated"
    /// A temporary registration redeemed on an installation active for another account: merge the
    /// address into that account (after it signs in), or make the registration an account of its own.
    case merge

    /// What the app may answer to this outcome (none for `new`, which goes straight on).
    public var choices: [ActivationChoice] {
        switch self {
        case .new: []
        case .reActivation: [.override, .newActivation]
        case .alreadyActivated: [.reEnrol, .stop]
        case .merge: [.merge, .replace]
        }
    }
}

/// The app's answer to an outcome that needs one.
public enum ActivationChoice: String, Sendable, Hashable, Codable, CaseIterable {
    /// `re_activation`: this installation takes over; the other installations' keys and tokens go.
    case override
    /// `re_activation`: leave the other installation active and issue a new activation (with a new
    /// activation PIN and an alias) for an additional one.
    case newActivation = "new_activation"
    /// `already_activated`: register a fresh key for this installation in place of its old ones.
    case reEnrol = "re_enrol"
    /// `already_activated`: nothing to do.
    case stop
    /// `merge`: the installation's account signs in, and the invited address joins it.
    case merge
    /// `merge`: the temporary registration becomes an account of its own.
    case replace
}

/// Whose activation it is: an existing account's, or a temporary registration for an address that
/// had no account when the activation was issued (an invitation).
public enum ActivationTarget: Sendable, Hashable, Codable {
    /// An existing account (its id).
    case account(String)
    /// `verified`: the activation data went to this address by email, so redeeming them proves it.
    case newAccount(email: EmailAddress, verified: Bool)
}

/// A redeemed activation, as the flow carries it (the provider's state) until it completes: the
/// provider checked the payload and the activation PIN and claimed the activation for this flow,
/// asks for the app's choice where the outcome offers one, hands the flow over to the device-key
/// provider, and when the flow completes marks the activation used and does what the choice asked.
public struct ActivationRedemption: Sendable, Hashable, Codable {
    /// The activation's id.
    public var activationID: String
    /// The activation provider instance that redeemed it.
    public var providerID: String = ""
    /// The instance that registers this installation's device key (and signs in a merge).
    public var keyProviderID: String
    /// Whose the activation is: an account, or a temporary registration for an address.
    public var target: ActivationTarget
    /// What redeeming it means for the installation.
    public var outcome: ActivationOutcome
    /// How the app chose to go on, when the outcome offered a choice.
    public var choice: ActivationChoice?
    /// The installation the activation is redeemed on, as the answer described it.
    public var device: DeviceFacts
    /// The name the activation gives the new device, if any.
    public var alias: String?
    /// `re_activation`: the account's other installations of this app (`Installation.id`), which an
    /// override retires.
    public var otherInstallations: [String]
    /// `already_activated`: this installation (`Installation.id`), whose keys a re-enrolment replaces.
    public var thisInstallation: String?
    /// `merge`: the account the installation is active for.
    public var mergeAccountID: String?

    /// A redemption; the provider sets `providerID`.
    public init(
        activationID: String, keyProviderID: String, target: ActivationTarget, outcome: ActivationOutcome, device: DeviceFacts, alias: String? = nil,
        otherInstallations: [String] = [], thisInstallation: String? = nil, mergeAccountID: String? = nil
    ) {
        self.activationID = activationID
        self.keyProviderID = keyProviderID
        self.target = target
        self.outcome = outcome
        self.device = device
        self.alias = alias
        self.otherInstallations = otherInstallations
        self.thisInstallation = thisInstallation
        self.mergeAccountID = mergeAccountID
    }

    /// The account the flow continues for: the activation's, or for a merge the installation's; nil
    /// while a new account is still to be made.
    public var accountID: String? {
        if choice == .merge { return mergeAccountID }
        if case .account(let id) = target { return id }
        return nil
    }

    /// What the app is told about the activation, in challenges and in the final answer.
    public var summary: JSONValue {
        var fields: [String: JSONValue] = ["outcome": .string(outcome.rawValue)]
        if let choice { fields["choice"] = .string(choice.rawValue) }
        return .object(fields)
    }
}
