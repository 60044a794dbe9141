import Foundation
import GatehousePluginKit

/// A plugin's own state between two steps of a flow: opaque bytes to the core, persisted with the flow.
/// The broker seals the whole stored flow (this state and the challenge last sent) under its
/// key-encryption key, so a secret kept here, or shown in a challenge, is never written in clear:
/// a plugin needs no sealing of its own for what lives only as long as the flow.
public struct FlowState: Sendable, Hashable, Codable {
    /// Whatever the plugin keeps between steps; opaque to the engine.
    public var data: Data

    /// A state holding `data`.
    public init(data: Data = Data()) { self.data = data }

    /// Encodes a plugin's Codable state.
    public init<T: Encodable>(encoding value: T) throws {
        self.data = try JSONEncoder().encode(value)
    }

    /// Decodes a plugin's Codable state; a state that does not decode ends the flow as not found.
    public func decode<T: Decodable>(_ type: T.Type) throws(BrokerError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw BrokerError(.flowNotFound, .notFound, "The flow's state is not readable; start a new flow.")
        }
    }
}

extension FlowState {
    /// What a plugin's step kept (`FlowStep`'s `state`), encoded for the stored flow; empty for none.
    init(keeping value: (any Encodable & Sendable)?) throws {
        self.init(data: try value.map { try JSONEncoder().encode($0) } ?? Data())
    }
}

extension FlowContext {
    /// A step's situation: the flow's request, the account so far, and the plugin's kept state.
    init(flowID: String, app: AppView, request: FlowRequest, account: Account? = nil, state: FlowState = FlowState()) {
        self.init(
            flowID: flowID, app: app, purpose: request.purpose, stateless: request.stateless, clientIP: request.clientIP, loginHint: request.loginHint,
            signedInAccountID: request.signedInAccountID, installationID: request.installationID, signInAgain: request.signInAgain,
            freshSignInWithin: request.freshSignInWithin, selectAccount: request.selectAccount, account: account, savedState: state.data
        )
        language = request.language ?? app.language
        enrolling = request.enrolling
    }
}
