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
    /// open (a wrong password, PIN or code, a PIN or password that breaks a rule, a new code asked for
    /// too soon: `rateLimited(retryAfter:)`, which the app waits out before it answers) goes back to
    /// the delegate with the same challenge, at most `maxRefusals` times in a row; any other (the flow
    /// ended, a lockout, a malformed answer, the broker unreachable) is thrown.
    public func run(_ flow: Flow, delegate: any FlowDelegate, maxRefusals: Int = 10) async throws -> FlowOutcome {
        var error: GatehouseError?
        var refusals = 0
        while true {
            switch await flow.state {
            case .completed(let result): return .completed(result)
            case .stopped(let activation): return .stopped(activation: activation)
            case .challenge(let challenge):
                let answer = try await delegate.answer(challenge, after: error)
                do {
                    try await flow.answer(answer)
                    error = nil
                    refusals = 0
                } catch let refusal as GatehouseError where Self.leavesChallengeOpen(refusal, answering: answer) && refusals < maxRefusals {
                    error = refusal
                    refusals += 1
                }
            }
        }
    }

    /// Whether the broker refused `answer` but still waits at the same challenge. A rate limit does
    /// only for a new code asked too soon: elsewhere (a second factor that could not start) the broker
    /// has moved the flow on to a `retry` challenge this client has not seen, so it is thrown.
    static func leavesChallengeOpen(_ error: GatehouseError, answering answer: FlowAnswer) -> Bool {
        switch error {
        case .rateLimited:
            if case .resendCode = answer { return true }
            return false
        case .invalidCredentials, .invalidPIN, .invalidCode, .pinRule, .passwordRule: return true
        case .refused(let code, _, _, _):
            return ["code_expired", "invalid_email", "invalid_username", "username_taken", "invalid_activation", "invalid_profile"].contains(code)
                && !error.endsFlow
        default: return false
        }
    }
}
