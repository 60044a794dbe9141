import Foundation

/// Answers a flow's challenges as they come, the delegate way of driving a flow (the other is
/// `Flow.states`). `error` is the refusal of the previous answer to the same challenge (a wrong PIN,
/// a PIN that breaks a rule, a wrong code) so the app can say why it asks again; throw to give up.
public protocol FlowDelegate: Sendable {
    func answer(_ challenge: Challenge, after error: GatehouseError?) async throws -> FlowAnswer
}

/// How a flow driven by a delegate ended.
public enum FlowOutcome: Sendable, Equatable {
    case completed(SignInResult)
    /// Ended without tokens (an activation's `stop` or `new_activation`).
    case stopped(activation: JSON)
}

extension GatehouseClient {
    /// Drives `flow` with `delegate` until it completes or stops. A refusal that leaves the challenge
    /// open (status 400, or `rateLimited`) goes back to the delegate with the same challenge; any
    /// other (the flow ended, a lockout, the broker unreachable) is thrown.
    public func run(_ flow: Flow, delegate: any FlowDelegate) async throws -> FlowOutcome {
        var error: GatehouseError?
        while true {
            switch await flow.state {
            case .completed(let result): return .completed(result)
            case .stopped(let activation): return .stopped(activation: activation)
            case .challenge(let challenge):
                let answer = try await delegate.answer(challenge, after: error)
                do {
                    try await flow.answer(answer)
                    error = nil
                } catch let refusal as GatehouseError where Self.leavesChallengeOpen(refusal) {
                    error = refusal
                }
            }
        }
    }

    static func leavesChallengeOpen(_ error: GatehouseError) -> Bool {
        if error.endsFlow { return false }
        switch error {
        case .invalidCredentials, .invalidPIN, .invalidCode, .pinRule, .passwordRule, .rateLimited: return true
        case .refused(_, _, let status, _): return status == 400
        default: return false
        }
    }
}
