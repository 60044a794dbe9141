import Foundation

extension LockoutBook {
    /// How one guess at a secret turned out (`guess`).
    public enum Guess<Answer: Sendable>: Sendable {
        /// Right: the keys' failures are forgotten, and `guess` answers this.
        case right(Answer)
        /// Wrong: counted on every key, and answered with this refusal, or with `locked_out` when a
        /// key reached its limit (still a wrong answer).
        case wrong(BrokerError)
        /// Nothing was guessed after all (the code was used by a racing answer): the reserved guess is
        /// given back and this is thrown.
        case void(BrokerError)
    }

    /// A factor's whole lockout bookkeeping around one guess, in the order that keeps the limits
    /// under parallel guesses on any number of nodes: refuses while a key is locked, counts the guess
    /// on every key before `evaluate` runs, gives it back when `evaluate` throws (nothing was judged),
    /// forgets the failures of a right guess, and locks a key that reached `rule`'s limit with a wrong
    /// one. `keys` are local keys with how their lock is named to people (`This account's PIN`). With
    /// `oneLockPerGuess`, the first key that locks ends the counting: the later keys forget their
    /// failures, so one person's mistakes set one lock that one unlock lifts.
    public func guess<Answer: Sendable>(
        _ keys: [(local: String, what: String)], rule: LockoutRule, auditDetails: [String: String] = [:], oneLockPerGuess: Bool = false,
        _ evaluate: () async throws -> Guess<Answer>
    ) async throws -> Answer {
        var reserved: [String] = []
        let outcome: Guess<Answer>
        do {
            for key in keys {
                try await reserve(key.local, rule: rule, what: key.what, auditDetails: auditDetails)
                reserved.append(key.local)
            }
            outcome = try await evaluate()
        } catch {
            for local in reserved { try? await release(local) }
            throw error
        }
        switch outcome {
        case .right(let answer):
            for key in keys { try await recordSuccess(key.local) }
            return answer
        case .void(let error):
            for key in keys { try? await release(key.local) }
            throw error
        case .wrong(let refusal):
            var locked: BrokerError?
            for key in keys {
                if locked != nil, oneLockPerGuess {
                    try await recordSuccess(key.local)
                } else if let lock = try await recordFailure(key.local, rule: rule, what: key.what, auditDetails: auditDetails) {
                    locked = locked ?? lock
                }
            }
            if let locked { throw locked.countingAsWrongAnswer() }
            throw refusal
        }
    }

    /// `guess` on one key.
    public func guess<Answer: Sendable>(
        _ local: String, what: String, rule: LockoutRule, auditDetails: [String: String] = [:], _ evaluate: () async throws -> Guess<Answer>
    ) async throws -> Answer {
        try await guess([(local, what)], rule: rule, auditDetails: auditDetails, evaluate)
    }
}
