import Foundation
import GatehousePluginKit
import GatehouseSupport

/// The `email-code` plugin type: a one-time code sent by email. As an identity provider it signs
/// people in without a password (the address is the identity); as an authenticator it is a second
/// factor for an account with a verified address; and it proves the address of a provisional identity.
/// The app's policy chooses the role. See docs/plugins/email-code.md.
public enum EmailCodePlugin: PluginFactory {
    public static let typeName = "email-code"

    /// `providers[].config` of an `email-code` instance.
    public struct Config: Decodable, Sendable {
        /// Digits per code (6 to 10).
        public var codeLength: Int
        /// How long a code works.
        public var codeLifetime: Seconds
        /// The HMAC key codes are hashed with (at least 32 characters, from `${ENV}`); without it the
        /// instance makes one and keeps it in the store.
        public var codeHashKey: String?
        /// Wrong codes per address before it is locked, and how locks grow.
        public var lockout: LockoutRule
        public var resend: ResendLimits
        /// `default` and app ids → the message for that app.
        public var templates: [String: MessageTemplate]
        /// As a second factor, when an account with no verified address may name one and prove it
        /// with the code (it is then the account's address for codes).
        public var enrollment: Enrollment

        public enum Enrollment: String, Sendable, Decodable {
            /// Only in the flow that created the account (registration, or the first sign-in of an
            /// account an administrator set up): nobody who merely learnt an old password can choose it.
            case registration
            /// Whenever the account has none yet: trust on first use.
            case always
            /// Never: such accounts get `no_verified_email`.
            case never
        }

        /// How often codes may be sent.
        public struct ResendLimits: Sendable, Hashable {
            /// The least time between two codes for one flow (or one attachment).
            public var interval: Seconds
            public var maxPerAddress: Int
            public var maxPerIP: Int
            /// The window `maxPerAddress` and `maxPerIP` count in.
            public var window: Seconds
        }

        enum CodingKeys: String, CodingKey { case codeLength, codeLifetime, codeHashKey, lockout, resend, templates, enrollment }
        enum ResendKeys: String, CodingKey { case interval, maxPerAddress, maxPerIP, window }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let path = decoder.codingPath
            codeLength = try container.decodeIfPresent(Int.self, forKey: .codeLength) ?? 6
            codeLifetime = try container.decodeIfPresent(Seconds.self, forKey: .codeLifetime) ?? .minutes(10)
            codeHashKey = try container.decodeIfPresent(String.self, forKey: .codeHashKey)
            templates = try container.decodeIfPresent([String: MessageTemplate].self, forKey: .templates) ?? [:]
            let enrollmentName = try container.decodeIfPresent(String.self, forKey: .enrollment) ?? "registration"
            guard let enrollment = Enrollment(rawValue: enrollmentName) else {
                throw ConfigIssue(path: path + [CodingKeys.enrollment], "must be registration, always or never, got '\(enrollmentName)'")
            }
            self.enrollment = enrollment
            if !(6...10).contains(codeLength) { throw ConfigIssue(path: path + [CodingKeys.codeLength], "must be between 6 and 10, got \(codeLength)") }
            if !(60...3600).contains(codeLifetime.value) {
                throw ConfigIssue(path: path + [CodingKeys.codeLifetime], "must be between 60 and 3600 seconds, got \(codeLifetime.value)")
            }
            if let key = codeHashKey, key.utf8.count < 32 {
                throw ConfigIssue(path: path + [CodingKeys.codeHashKey], "must have at least 32 characters (generate one with `openssl rand -base64 32`)")
            }
            for id in templates.keys where id != "default" && !Identifier.isValid(id) {
                throw ConfigIssue(path: path + [CodingKeys.templates, ConfigIssue.Key(id)], "must be 'default' or an app id")
            }

            // Ten lockouts take days to reach with the doubling, which keeps a stranger who knows an
            // address from locking it for good in an afternoon; fifty guesses of a million is nothing.
            lockout = try LockoutRule.decode(
                container, forKey: .lockout,
                defaults: LockoutRule(maxFailures: 5, failureWindow: .hours(1), lockoutDuration: .minutes(15), maxLockoutDuration: .hours(24), permanentAfterLockouts: 10)
            )

            let resendPath = path + [CodingKeys.resend]
            let limits = container.contains(.resend) ? try container.nestedContainer(keyedBy: ResendKeys.self, forKey: .resend) : nil
            resend = ResendLimits(
                interval: try limits?.decodeIfPresent(Seconds.self, forKey: .interval) ?? Seconds(30),
                maxPerAddress: try limits?.decodeIfPresent(Int.self, forKey: .maxPerAddress) ?? 5,
                maxPerIP: try limits?.decodeIfPresent(Int.self, forKey: .maxPerIP) ?? 30,
                window: try limits?.decodeIfPresent(Seconds.self, forKey: .window) ?? .hours(1)
            )
            for (key, value, range) in [
                (ResendKeys.interval, resend.interval.value, 0...3600), (.maxPerAddress, resend.maxPerAddress, 1...1000),
                (.maxPerIP, resend.maxPerIP, 1...100_000), (.window, resend.window.value, 60...86_400),
            ] where !range.contains(value) {
                throw ConfigIssue(path: resendPath + [key], "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
            }
        }

        /// The template for an app: its own, else `default`, else the built-in one.
        func template(for appID: String, language: String = "en") -> MessageTemplate {
            templates[appID] ?? templates["default"] ?? .builtIn(in: language)
        }

        /// The subject when an app's template has none.
        func defaultSubject(language: String = "en") -> String { templates["default"]?.subject ?? MessageTemplate.builtIn(in: language).subject! }
    }

    public static let challenges = [EmailCodeProvider.addressChallenge, EmailCodeProvider.codeChallenge]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> EmailCodeProvider {
        if !environment.mailer.isConfigured {
            throw ConfigIssue(path: "", "email-code sends mail: configure the top-level `mail:` section (transport smtp, or log in development)")
        }
        return EmailCodeProvider(id: id, config: config, environment: environment)
    }
}
