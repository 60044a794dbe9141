import Foundation
import GatehouseCore

/// A test second factor that passes whoever answers `{"word": "open"}` (any other word is a wrong
/// answer), for tests whose subject is what happens around a factor.
public struct KnockAuthenticator: Authenticator {
    public let id: String

    public func begin(in context: FlowContext) async throws -> FlowStep { .challenge(Challenge(type: "knock")) }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        guard try answer.string("word") == "open" else { throw BrokerError(.invalidCode, .failedAttempt, "No.") }
        return .verified(FactorResult(authenticatorID: id, method: "otp"))
    }
}

/// The `knock` plugin type of the tests (`KnockAuthenticator`).
public enum KnockPlugin: PluginFactory {
    public struct Config: Decodable, Sendable {}
    public static let typeName = "knock"
    public static let challenges = [ChallengeDescription(type: "knock", summary: "A word.", elements: [.text("word", label: "Word")])]
    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> KnockAuthenticator { KnockAuthenticator(id: id) }
}
