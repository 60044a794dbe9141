import Foundation
import GatehouseCore

/// A test identity provider that identifies whoever names themselves (answer `{"name": "..."}`), for
/// tests whose subject is what comes after the first factor (a second factor, a hand-over).
public struct NameProvider: IdentityProvider {
    public let id: String

    public func begin(in context: FlowContext) async throws -> FlowStep { .challenge(Challenge(type: "name")) }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let name = try answer.string("name")
        return .identified(ExternalIdentity(providerID: id, subject: name, username: name, methods: ["pwd"]))
    }
}

/// The `name` plugin type of the tests (`NameProvider`).
public enum NamePlugin: PluginFactory {
    public struct Config: Decodable, Sendable {}
    public static let typeName = "name"
    public static let challenges = [ChallengeDescription(type: "name", summary: "A name.", elements: [.text("name", label: "Name")])]
    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> NameProvider { NameProvider(id: id) }
}
