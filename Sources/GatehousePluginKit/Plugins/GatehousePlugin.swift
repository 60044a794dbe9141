import Foundation

/// Anything the registry builds from a `providers:` entry: an id, and what the engine may count on.
/// Concrete plugins adopt `IdentityProvider`, `Authenticator`, or both, and each optional capability they implement (`Capabilities.swift`): adopting one is
/// declaring it, and the registry finds them once, when it builds the instance.
public protocol GatehousePlugin: Sendable {
    /// The instance id from config, e.g. `corp-ldap`.
    var id: String { get }
    /// What the engine may count on from this instance (stateless sign-in, open enrolment...).
    /// Default: none of them.
    var traits: PluginTraits { get }
}

extension GatehousePlugin {
    /// None.
    public var traits: PluginTraits { PluginTraits() }
}

/// What the engine may count on from a plugin instance, beyond what its code shows: declared as
/// values, read without casts.
public struct PluginTraits: Sendable, Hashable {
    /// The kind of registration a provider makes, as `GET /v1/registration-state` reports it.
    public enum Registration: String, Sendable, Hashable, Codable {
        case password, passwordless, passkey, social, federated, custom
        /// It registers a device (a device sign-in key, an activation): an app using it may let its
        /// tokens manage the account's devices.
        case device
    }

    /// The provider can sign people in without the broker keeping anything about them.
    public var statelessCapable: Bool
    /// Anyone can pass it (everyone has an email address): a sign-in that brings an identity the broker
    /// has never seen creates an account only when the app allows self-registration.
    public var openEnrollment: Bool
    /// The addresses it vouches for (`email_verified`) may link accounts (the policy's
    /// `linkAccountsByVerifiedEmail`), on either side. Providers that do not say so never link: an
    /// address only counts when the provider proved it (an emailed code) or the operator trusts the
    /// upstream to have.
    public var trustsEmailForLinking: Bool
    /// The kind of registration the provider makes; nil: told from the methods used.
    public var registration: Registration?
    /// It runs in JSON flows only (the flow API), never on the browser pages: the sign-in page does
    /// not offer it and `/oauth2/authorize` refuses it (what it answers is for an app to act on).
    public var flowAPIOnly: Bool
    /// People set this plugin's credential up from their account page (`/account`): the button's
    /// text, in English ("Add a passkey"; other languages through `PluginFactory.translations`). The
    /// page then runs a flow of this plugin for the signed-in account with `FlowContext.enrolling`
    /// set. Nil: credentials are made only in an app's sign-in.
    public var accountEnrolment: String?

    /// Traits; each off unless given.
    public init(
        statelessCapable: Bool = false, openEnrollment: Bool = false, trustsEmailForLinking: Bool = false, registration: Registration? = nil, flowAPIOnly: Bool = false,
        accountEnrolment: String? = nil
    ) {
        self.accountEnrolment = accountEnrolment
        self.statelessCapable = statelessCapable
        self.openEnrollment = openEnrollment
        self.trustsEmailForLinking = trustsEmailForLinking
        self.registration = registration
        self.flowAPIOnly = flowAPIOnly
    }
}

/// Something going away that a plugin may keep data about (`Forgetting`).
public enum Departure: Sendable, Hashable {
    /// An identity this provider vouched for, unlinked at deregistration (a password hash goes).
    case identity(subject: String)
    /// A deregistered account (a PIN hash goes).
    case account(id: String)
    /// A deleted app (certificate fingerprints, secrets, test keys go).
    case app(id: String)
    /// Administrators no longer configured: what the others (not in `remaining`) added goes, each
    /// removal answered as an audited change (Sudo Platform's rule for signing-certificate fingerprints).
    case admins(remaining: Set<String>)
}

/// A plugin's answer to a health check.
public struct PluginHealth: Sendable, Hashable, Codable {
    /// Whether the upstream answers.
    public var healthy: Bool
    /// What is wrong, when it is not.
    public var detail: String?

    /// A health report.
    public init(healthy: Bool, detail: String? = nil) {
        self.healthy = healthy
        self.detail = detail
    }
}
