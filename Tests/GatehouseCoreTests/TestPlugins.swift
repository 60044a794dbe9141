import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

/// A provider for engine tests: asks for `{"subject": ...}` and identifies whoever is named, unless the
/// subject is `wrong` (a failed attempt). Can run stateless.
struct NamedSubjectProvider: IdentityProvider, HealthReporting {
    let id: String
    let healthy: Bool
    var openEnrollment = false
    var trustsEmail = false
    var traits: PluginTraits { PluginTraits(statelessCapable: true, openEnrollment: openEnrollment, trustsEmailForLinking: trustsEmail) }

    func begin(in context: FlowContext) async throws -> FlowStep {
        .challenge(Challenge(type: Self.challenge.type), state: ["step": 1])
    }

    func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        _ = try context.state([String: Int].self)
        let subject = try answer.string("subject")
        if subject == "wrong" { throw BrokerError(.invalidCredentials, .failedAttempt, "Wrong subject.") }
        return .identified(ExternalIdentity(providerID: id, subject: subject, username: subject, claims: IdentityClaims(name: subject), methods: ["user"]))
    }

    func health() async -> PluginHealth { PluginHealth(healthy: healthy, detail: healthy ? nil : "down on purpose") }

    static let challenge = ChallengeDescription(type: "subject", summary: "Whoever to be.", inputs: [ChallengeInput(name: "subject", label: "Subject", maxLength: 64)])

    enum Factory: PluginFactory {
        struct Config: Decodable, Sendable {
            var healthy: Bool
            var label: String?
            var openEnrollment: Bool
            var trustsEmail: Bool

            enum CodingKeys: String, CodingKey { case healthy, label, openEnrollment, trustsEmail }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                self.healthy = try container.decodeIfPresent(Bool.self, forKey: .healthy) ?? true
                self.label = try container.decodeIfPresent(String.self, forKey: .label)
                self.openEnrollment = try container.decodeIfPresent(Bool.self, forKey: .openEnrollment) ?? false
                self.trustsEmail = try container.decodeIfPresent(Bool.self, forKey: .trustsEmail) ?? false
            }
        }
        static let typeName = "named-subject"
        static let challenges = [NamedSubjectProvider.challenge]
        static func make(id: String, config: Config, environment: PluginEnvironment) throws -> NamedSubjectProvider {
            if config.label == "explode" { throw ConfigIssue(path: "label", "must not be 'explode'") }
            return NamedSubjectProvider(id: id, healthy: config.healthy, openEnrollment: config.openEnrollment, trustsEmail: config.trustsEmail)
        }
    }
}

/// An authenticator for engine tests: accepts the code configured for it.
struct FixedCodeAuthenticator: Authenticator {
    let id: String
    let code: String

    func begin(in context: FlowContext) async throws -> FlowStep {
        guard let account = context.account else { throw BrokerError.internalFailure("no account") }
        return .challenge(Challenge(type: Self.challenge.type, fields: ["for": .string(account.username)]))
    }

    func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        guard SecretDigest.constantTimeEquals(try answer.string("code"), code) else {
            throw BrokerError(.invalidCredentials, .failedAttempt, "Wrong code.")
        }
        return .verified(FactorResult(authenticatorID: id, method: "otp"))
    }

    static let challenge = ChallengeDescription(
        type: "fixed_code", summary: "The configured code.", inputs: [ChallengeInput(name: "code", label: "Code", kind: .code, maxLength: 16)]
    )

    enum Factory: PluginFactory {
        struct Config: Decodable, Sendable { var code: String }
        static let typeName = "fixed-code"
        static let challenges = [FixedCodeAuthenticator.challenge]
        static func make(id: String, config: Config, environment: PluginEnvironment) throws -> FixedCodeAuthenticator {
            FixedCodeAuthenticator(id: id, code: config.code)
        }
    }
}

enum TestRegistry {
    static var registry: PluginRegistry {
        var registry = PluginRegistry()
        registry.register(NamedSubjectProvider.Factory.self)
        registry.register(FixedCodeAuthenticator.Factory.self)
        return registry
    }

    /// A config with two providers, an authenticator and three apps with different policies.
    static let yaml = """
        storage:
          sqlite:
            path: unused.sqlite
        providers:
          - id: ext
            type: named-subject
          - id: other
            type: named-subject
          - id: code
            type: fixed-code
            config:
              code: "424242"
        apps:
          - id: notes
            policy:
              identityProviders: [ext]
              selfRegistration: true
              flowLifetime: 5m
          - id: stateless-app
            policy:
              identityProviders: [ext]
              statelessAuthentication: true
          - id: two-factor
            policy:
              identityProviders: [ext]
              authenticators: [code]
              secondFactor: code
          - id: confidential
            secret: ${CONFIDENTIAL_SECRET}
            policy:
              identityProviders: [ext]
        """

    static let confidentialSecret = "s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t"

    static func broker(clock: TestClock = TestClock()) async throws -> TestBroker {
        try await TestBroker.make(yaml: yaml, registry: registry, environment: ["CONFIDENTIAL_SECRET": confidentialSecret], clock: clock)
    }
}

/// Runs `body` and returns the BrokerError it throws; records an issue when it throws nothing or something else.
func brokerError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async -> BrokerError? {
    await thrownError(sourceLocation: sourceLocation, body)
}
