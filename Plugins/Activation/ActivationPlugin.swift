import Foundation
import GatehousePluginKit
import GatehouseSupport

/// The `activation` plugin type (XignSys "personalization"): administrators, an app's back end or an
/// invitation issue activation data (an opaque payload, as a deep link and a QR-ready string) and an
/// activation PIN; the person's app redeems both through the flow API (`activation` challenge), the
/// broker checks the PIN with lockouts, and the flow goes on by the outcome (new, re-activation,
/// already activated, merge) to the app's device-key provider. See docs/activation.md.
public enum ActivationPlugin: PluginFactory {
    public static let typeName = "activation"
    public typealias Settings = ActivationSettings

    /// `providers[].config` of an `activation` instance.
    public struct Config: Decodable, Sendable {
        /// The `device-key` instance that registers the installation's key once an activation is
        /// redeemed (it must be in the app's `identityProviders` too).
        public var deviceKeys: String
        /// Wrong activation PINs per activation and per account (or invited address), and how locks grow.
        public var lockout: LockoutRule
        /// The bcrypt cost of activation PIN hashes.
        public var hashCost: Int
        /// How long an invitation to an existing account may be answered.
        public var invitationLifetime: Seconds

        enum CodingKeys: String, CodingKey { case deviceKeys, lockout, hashCost, invitationLifetime }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let path = decoder.codingPath
            guard let deviceKeys = try container.decodeIfPresent(String.self, forKey: .deviceKeys) else {
                throw ConfigIssue(path: path + [CodingKeys.deviceKeys], "is required: the id of the device-key instance that registers activated installations")
            }
            guard Identifier.isValid(deviceKeys) else { throw ConfigIssue(path: path + [CodingKeys.deviceKeys], "must be the id of a device-key instance") }
            self.deviceKeys = deviceKeys
            // Five wrong PINs lock for 5 minutes, doubling; the third lockout is for good (and the
            // activation must be issued again).
            lockout = try LockoutRule.decode(
                container, forKey: .lockout,
                defaults: LockoutRule(maxFailures: 5, failureWindow: .hours(24), lockoutDuration: .minutes(5), maxLockoutDuration: .hours(24), permanentAfterLockouts: 3)
            )
            hashCost = try container.decodeIfPresent(Int.self, forKey: .hashCost) ?? 10
            if !(4...14).contains(hashCost) { throw ConfigIssue(path: path + [CodingKeys.hashCost], "must be between 4 and 14, got \(hashCost)") }
            invitationLifetime = try container.decodeIfPresent(Seconds.self, forKey: .invitationLifetime) ?? .days(14)
            if !(3600...(90 * 86_400)).contains(invitationLifetime.value) {
                throw ConfigIssue(path: path + [CodingKeys.invitationLifetime], "must be between 3600 seconds and 90 days, got \(invitationLifetime.value)")
            }
        }
    }

    public static let challenges = [ActivationProvider.activationChallenge, ActivationProvider.choiceChallenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> ActivationProvider {
        guard let devices = environment.devices, let accounts = environment.accounts, let apps = environment.apps, let audit = environment.audit else {
            throw ConfigIssue(path: "", "activation needs the broker's device, account, app and audit stores")
        }
        return ActivationProvider(
            id: id, config: config, environment: environment, book: ActivationBook(config: config, environment: environment), devices: devices, accounts: accounts,
            apps: apps, audit: audit
        )
    }
}
