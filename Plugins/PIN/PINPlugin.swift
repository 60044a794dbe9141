import Foundation
import GatehousePluginKit
import GatehouseSupport

/// The `pin` plugin type: a PIN as a second factor. The person chooses it (`create_pin`, checked
/// against the app's `pinPolicy`, one error code per rule), then enters it (`pin`); wrong PINs count
/// per account and per device and lock with growing durations, for good after `permanentAfter`
/// lockouts. It is changed with the current PIN (`POST /v1/account/operations/<id>/change`) and
/// reset after another authenticator passed (`resetWith`, an emailed code). See docs/plugins/pin.md.
public enum PINPlugin: PluginFactory {
    public static let typeName = "pin"
    public typealias Settings = PINRules

    /// `providers[].config` of a `pin` instance.
    public struct Config: Decodable, Sendable {
        /// Wrong PINs per account (and per device) and how locks grow.
        public var lockout: LockoutRule
        /// The authenticator that proves the person when they forgot their PIN (it must be in the
        /// app's `authenticators` too); nil: no reset.
        public var resetWith: String?
        /// The bcrypt cost of PIN hashes.
        public var hashCost: Int

        enum CodingKeys: String, CodingKey { case lockout, resetWith, hashCost }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // Three wrong PINs lock, as banking apps do; the fifth lockout is for good.
            lockout = try LockoutRule.decode(
                container, forKey: .lockout,
                defaults: LockoutRule(maxFailures: 3, failureWindow: .hours(24), lockoutDuration: .minutes(1), maxLockoutDuration: .hours(24), permanentAfterLockouts: 5)
            )
            resetWith = try container.decodeIfPresent(String.self, forKey: .resetWith)
            hashCost = try container.decodeIfPresent(Int.self, forKey: .hashCost) ?? 10
            if let resetWith, !Identifier.isValid(resetWith) {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.resetWith], "must be the id of an authenticator instance")
            }
            if !(4...14).contains(hashCost) { throw ConfigIssue(path: decoder.codingPath + [CodingKeys.hashCost], "must be between 4 and 14, got \(hashCost)") }
        }
    }

    public static let challenges = [PINProvider.createChallenge, PINProvider.pinChallenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> PINProvider {
        PINProvider(id: id, config: config, environment: environment)
    }
}
