import Foundation
import GatehousePluginKit

/// Relays a custom registration between the client and the app's own API, one-step or two-step, and
/// yields the identity the API vouches for. The only provider that may sign people in statelessly.
public struct CustomAPIProvider: IdentityProvider {
    public var traits: PluginTraits { PluginTraits(statelessCapable: true, registration: .custom) }
    public let id: String
    let config: CustomAPIPlugin.Config
    let api: AppAPIClient

    init(id: String, config: CustomAPIPlugin.Config, environment: PluginEnvironment) {
        self.id = id
        self.config = config
        self.api = AppAPIClient(providerID: id, config: config, http: environment.http, logger: environment.logger)
    }

    /// What the flow keeps between steps: the step the next answer feeds, what the client was shown,
    /// the API's own state (never shown to the client), and how many retryable refusals there were.
    struct State: Codable, Sendable {
        var step: String
        var data: JSONValue
        var apiState: JSONValue
        var retries: Int
    }

    public func begin(in context: FlowContext) async throws -> FlowStep {
        switch config.mode {
        case .oneStep:
            return try challenge(State(step: "register", data: .null, apiState: .null, retries: 0), error: nil)
        case .twoStep:
            // `init` needs nothing from the client; what it answers (a challenge, a deep link) is for the client.
            let answer = try await api.call(body(step: "init", customData: .null, apiState: .null, context: context))
            return try step(after: answer, state: State(step: "init", data: .null, apiState: .null, retries: 0))
        }
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let current = try context.state(State.self)
        let customData = answer.values["customData"] ?? .null
        guard customData.serialized().count <= config.maxCustomDataBytes else {
            throw BrokerError.invalidAnswer("customData is larger than \(config.maxCustomDataBytes) bytes.")
        }
        let reply = try await api.call(body(step: current.step, customData: customData, apiState: current.apiState, context: context))
        return try step(after: reply, state: current)
    }

    /// The flow's next step after the API answered the step `state.step`.
    private func step(after answer: AppAPIAnswer, state: State) throws -> FlowStep {
        switch answer {
        case .success(let subject, let username, let claims):
            let allowed = claims.filter { config.allowedClaims.contains($0.key) }
            return .identified(ExternalIdentity(providerID: id, subject: subject, username: username ?? subject, claims: IdentityClaims(claims: allowed)))
        case .challenge(let data, let apiState):
            return try challenge(State(step: "finish", data: data, apiState: apiState, retries: state.retries), error: nil)
        case .failure(retryable: true, let code, let message) where state.step != "init":
            var next = state
            next.retries += 1
            guard next.retries <= config.maxRetries else {
                throw BrokerError(.tooManyAttempts, .tooManyRequests, "Too many attempts; start again.").because(code ?? "retry_limit").endingFlow()
            }
            return try challenge(next, error: ["code": .string(code ?? "retry"), "message": .string(message)])
        case .failure(_, let code, let message):
            throw BrokerError(AppAPIClient.refused, .forbidden, message).because(code ?? "refused").endingFlow()
        }
    }

    private func challenge(_ state: State, error: [String: JSONValue]?) throws -> FlowStep {
        var fields: [String: JSONValue] = ["provider": .string(id), "step": .string(state.step)]
        if state.data != .null { fields["data"] = state.data }
        if let error { fields["error"] = .object(error) }
        return .challenge(Challenge(type: Self.challenge.type, fields: fields), state: state)
    }

    /// Relays the app's own registration data; `customData` may be any JSON value.
    static let challenge = ChallengeDescription(
        type: "custom", summary: "Custom registration data for the app's own API.",
        elements: [
            .json("customData", label: "Registration data (JSON)", maxLength: CustomAPIPlugin.Config.customDataLimit),
            .detail("provider", .string, "The provider instance."), .detail("step", .string, "`register`, or `finish` after `init`."),
            .detail("data", .any, "What the app's API answered for the client."), .detail("error", .object, "A retryable refusal: `code`, `message`."),
        ])

    /// The JSON the app's API receives for one step.
    private func body(step: String, customData: JSONValue, apiState: JSONValue, context: FlowContext) -> [String: JSONValue] {
        var body: [String: JSONValue] = [
            "step": .string(step), "flow": .string(context.flowID), "app": .string(context.app.id), "provider": .string(id),
            "purpose": .string(context.purpose.rawValue), "stateless": .bool(context.stateless), "customData": customData,
        ]
        if apiState != .null { body["state"] = apiState }
        if let ip = context.clientIP { body["clientIP"] = .string(ip) }
        return body
    }
}

/// `/readyz` (admins: `/admin/v1/readiness`) reports whether the app's API answers: an
/// unauthenticated `GET` of its URL, where any HTTP answer (even 401 or 405) means it is reachable.
/// One probe at a time, shared for two seconds, at most `timeout` (capped at 3 s) long.
extension CustomAPIProvider {
    public func health() async -> PluginHealth {
        await api.healthCheck.value { [api] in
            let request = OutboundRequest(method: "GET", url: api.config.url, timeout: min(api.config.timeout.timeInterval, 3), maxResponseBytes: 4096)
            do {
                _ = try await api.http.send(request)
                return PluginHealth(healthy: true)
            } catch OutboundHTTPError.responseTooLarge {
                return PluginHealth(healthy: true)
            } catch {
                return PluginHealth(healthy: false, detail: "the app's API: \(error)")
            }
        }
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension CustomAPIProvider: HealthReporting {}
