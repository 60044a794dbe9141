import Foundation
import GatehouseCore
import GatehouseHTTP
import GatehouseMail
import GatehouseStore
import Logging

/// A broker assembled for a test: a test clock, a throw-away store, the plugins the test registers and
/// a config written inline. Tests drive flows through the real engine with it, no HTTP involved.
public struct TestBroker: Sendable {
    public let broker: Broker
    public let clock: TestClock
    public let temporary: TemporaryStore

    public var store: SQLiteStore { temporary.store }
    public var engine: FlowEngine { broker.engine }

    /// Builds a broker from `yaml` (environment variables from `environment`) with `registry`'s plugins.
    public static func make(
        yaml: String, registry: PluginRegistry, environment: [String: String] = [:], temporary: TemporaryStore? = nil, clock: TestClock = TestClock(),
        metrics: BrokerMetrics = BrokerMetrics(), http: any OutboundHTTP = AsyncHTTPOutbound(), sealer: SecretSealer = .forTests
    ) async throws -> TestBroker {
        let temporary = try temporary ?? TemporaryStore()
        let config = try ConfigLoader(registry: registry).load(yaml: yaml, environment: environment)
        var logger = Logger(label: "gatehouse.test")
        logger.logLevel = .warning
        let broker = try await Broker.start(
            config: config, registry: registry, store: temporary.store, clock: clock, logger: logger, metrics: metrics, http: http,
            mailer: try SMTPMailer.configured(by: config.mail), sealer: sealer
        )
        return TestBroker(broker: broker, clock: clock, temporary: temporary)
    }

    /// Starts a flow and returns its id and first challenge; fails the test if the flow completed at once.
    public func start(
        _ request: FlowRequest, returnURI: String? = nil, codeChallenge: String? = nil, client: ClientCredentials? = nil
    ) async throws -> (flowID: String, challenge: Challenge) {
        let outcome = try await engine.start(request, returnURI: returnURI, codeChallenge: codeChallenge, client: client)
        switch outcome {
        case .challenge(let flowID, let challenge, _): return (flowID, challenge)
        default: throw FlowDriverError.unexpectedOutcome(String(describing: outcome))
        }
    }

    /// Answers the flow's challenge and returns the tokens; fails if another challenge comes back.
    public func finish(_ flowID: String, answer: [String: JSONValue], client: ClientCredentials? = nil) async throws -> (tokens: IssuedTokens, account: Account?) {
        let outcome = try await engine.resume(flowID: flowID, answer: ChallengeResponse(answer), client: client)
        switch outcome {
        case .completed(_, let tokens, let account, _): return (tokens, account)
        default: throw FlowDriverError.unexpectedOutcome(String(describing: outcome))
        }
    }

    /// Starts a flow and answers its one challenge.
    public func signIn(_ request: FlowRequest, answer: [String: JSONValue], client: ClientCredentials? = nil) async throws -> (tokens: IssuedTokens, account: Account?) {
        let started = try await start(request, client: client)
        return try await finish(started.flowID, answer: answer, client: client)
    }
}

/// A flow did not take the course the test expected.
public enum FlowDriverError: Error, Sendable {
    case unexpectedOutcome(String)
}
