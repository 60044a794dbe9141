import GatehousePluginKit

/// Signs in whoever types a name: the smallest identity provider there is (a demo, not a login).
public enum HelloPlugin: PluginFactory {
    public struct Config: Decodable, Sendable {}
    public static let typeName = "guide-hello"
    public static let challenges = [
        ChallengeDescription(type: "guide_hello", summary: "Say who you are.", elements: [.text("name", label: "Your name", maxLength: 64)])
    ]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> some IdentityProvider {
        HelloProvider(id: id)
    }
}

struct HelloProvider: IdentityProvider {
    let id: String
    // Anyone can type a name: a name nobody has used makes an account only where the app allows
    // self-registration.
    var traits: PluginTraits { PluginTraits(openEnrollment: true) }

    func begin(in context: FlowContext) async throws -> FlowStep {
        .challenge(Challenge(type: "guide_hello"))
    }

    func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let name = try answer.string("name")
        return .identified(ExternalIdentity(providerID: id, subject: name, username: name, methods: ["user"]))
    }
}
