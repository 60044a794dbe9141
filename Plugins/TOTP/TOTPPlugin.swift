import Foundation
import GatehousePluginKit

/// The `totp` plugin type: an authenticator app (RFC 6238 time-based codes) as a second factor. The
/// first sign-in that needs it enrols the app (a secret shown as an `otpauth://` URI and a QR code,
/// confirmed by a first code) and shows ten recovery codes once; later sign-ins ask for the current
/// code, or a recovery code. Each time step is accepted once per account on every node, wrong codes
/// lock through the core's lockout book, and the person (with a fresh sign-in) or an administrator
/// removes the app so that the next sign-in enrols again. See docs/plugins/totp.md.
public enum TOTPPlugin: PluginFactory {
    public static let typeName = "totp"

    /// `providers[].config` of a `totp` instance.
    public struct Config: Decodable, Sendable {
        /// The `issuer` authenticator apps show beside the account; nil: the host of the broker's issuer.
        public var issuer: String?
        /// The HMAC new enrolments use (existing ones keep theirs).
        public var algorithm: String
        /// Digits of a code, 6 to 8.
        public var digits: Int
        /// Seconds per time step.
        public var period: Int
        /// Steps accepted either side of the current one, for clock drift (RFC 6238 section 5.2).
        public var window: Int
        /// How many recovery codes an enrolment (or a regeneration) gives.
        public var recoveryCodes: Int
        /// How recent a sign-in must be to remove the app or get new recovery codes.
        public var freshSignIn: Seconds
        /// Wrong codes (and recovery codes) per account, and how locks grow.
        public var lockout: LockoutRule

        enum CodingKeys: String, CodingKey { case issuer, algorithm, digits, period, window, recoveryCodes, freshSignIn, lockout }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
            algorithm = try container.decodeIfPresent(String.self, forKey: .algorithm) ?? "SHA1"
            digits = try container.decodeIfPresent(Int.self, forKey: .digits) ?? 6
            period = try container.decodeIfPresent(Int.self, forKey: .period) ?? 30
            window = try container.decodeIfPresent(Int.self, forKey: .window) ?? 1
            recoveryCodes = try container.decodeIfPresent(Int.self, forKey: .recoveryCodes) ?? 10
            freshSignIn = try container.decodeIfPresent(Seconds.self, forKey: .freshSignIn) ?? .minutes(5)
            // Five wrong codes in a quarter of an hour lock for a minute, doubling up to a day: a
            // 6-digit code then survives years of guessing (NIST SP 800-63B section 5.2.2).
            lockout = try LockoutRule.decode(
                container, forKey: .lockout,
                defaults: LockoutRule(
                    maxFailures: 5, failureWindow: .minutes(15), lockoutDuration: .minutes(1), maxLockoutDuration: .hours(24), permanentAfterLockouts: nil)
            )
            func issue(_ key: CodingKeys, _ message: String) -> ConfigIssue { ConfigIssue(path: decoder.codingPath + [key], message) }
            if let issuer, issuer.isEmpty || issuer.contains(":") {
                throw issue(.issuer, "must be a non-empty name without ':' (authenticator apps split the label at it)")
            }
            guard OneTimePassword.Algorithm(rawValue: algorithm.uppercased()) != nil else {
                throw issue(.algorithm, "must be SHA1, SHA256 or SHA512, got '\(algorithm)'")
            }
            algorithm = algorithm.uppercased()
            if !(6...8).contains(digits) { throw issue(.digits, "must be 6, 7 or 8, got \(digits)") }
            if !(15...120).contains(period) { throw issue(.period, "must be between 15 and 120 seconds, got \(period)") }
            if !(0...2).contains(window) { throw issue(.window, "must be 0, 1 or 2 steps, got \(window)") }
            if !(5...20).contains(recoveryCodes) { throw issue(.recoveryCodes, "must be between 5 and 20, got \(recoveryCodes)") }
            if freshSignIn.value < 30 || freshSignIn > .hours(1) { throw issue(.freshSignIn, "must be between 30s and 1h, got \(freshSignIn)") }
        }

        /// The HMAC of a new enrolment.
        var newAlgorithm: OneTimePassword.Algorithm { OneTimePassword.Algorithm(rawValue: algorithm) ?? .sha1 }
    }

    public static let challenges = [TOTPProvider.setupChallenge, TOTPProvider.recoveryCodesChallenge, TOTPProvider.codeChallenge, TOTPProvider.recoveryChallenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> TOTPProvider {
        let issuer = config.issuer ?? URL(string: environment.issuer)?.host ?? "Gatehouse"
        return TOTPProvider(id: id, config: config, issuer: issuer, environment: environment)
    }
}
