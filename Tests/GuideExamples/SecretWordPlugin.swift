import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport
import HummingbirdBcrypt

/// A second factor: a secret word the person chooses when their account is made and types at each
/// sign-in after.
public enum SecretWordPlugin: PluginFactory {
    public struct Config: Decodable, Sendable {}
    public typealias Settings = SecretWordSettings
    public static let typeName = "guide-word"
    public static let challenges = [
        ChallengeDescription(type: "guide_word_choose", summary: "Choose a secret word.", elements: [.secret("word", label: "New secret word", maxLength: 64)]),
        ChallengeDescription(type: "guide_word", summary: "Your secret word.", elements: [.secret("word", label: "Secret word", maxLength: 64)]),
    ]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> some Authenticator {
        SecretWord(id: id, environment: environment)
    }
}

/// What each app says about secret words (`policy.plugins.<instance>`).
public struct SecretWordSettings: PluginSettings {
    public var minLength: Int
    public init() { minLength = 6 }

    enum CodingKeys: String, CodingKey { case minLength }

    public init(from decoder: any Decoder) throws {
        minLength = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Int.self, forKey: .minLength) ?? 6
    }
}

struct SecretWord: Authenticator, AccountOperationOffering, Forgetting {
    let id: String
    let environment: PluginEnvironment
    static let lockout = LockoutRule(
        maxFailures: 5, failureWindow: Seconds(900), lockoutDuration: Seconds(300), maxLockoutDuration: Seconds(86_400), permanentAfterLockouts: nil
    )

    func begin(in context: FlowContext) async throws -> FlowStep {
        let account = try Self.account(context)
        let known = try await environment.storage.get(String.self, key: account) != nil
        // Only a new account chooses its word: whoever got past the first factor of an existing one
        // must not choose the second (an administrator resets it, by removing the stored word).
        guard known || context.accountCreated else { throw Self.noWord }
        return .challenge(Challenge(type: known ? "guide_word" : "guide_word_choose"))
    }

    static let noWord = BrokerError(.invalidRequest, .badRequest, "This account has no secret word; ask an administrator.").endingFlow()

    func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let account = try Self.account(context)
        let word = try answer.string("word")
        let passed = FlowStep.verified(FactorResult(authenticatorID: id, method: "kba"))
        guard let stored = try await environment.storage.get(String.self, key: account)?.value else {
            guard context.accountCreated else { throw Self.noWord }
            try choose(word, rules: try context.app.settings(SecretWordSettings.self, for: id))
            guard try await environment.storage.insert(try await hash(word, account: account), key: account) else {
                throw BrokerError(.conflict, .conflict, "A word was chosen meanwhile.")
            }
            return passed
        }
        return try await environment.lockouts.guess("account:" + account, what: "This account's secret word", rule: Self.lockout) {
            try await matches(word, account: account, hash: stored) ? .right(passed) : .wrong(BrokerError(.invalidCode, .failedAttempt, "That is not the word."))
        }
    }

    var accountOperations: [AccountOperation] {
        [
            AccountOperation(
                name: "change", summary: "Chooses a new secret word; needs a sign-in with the word within five minutes.",
                inputs: [.secret("word", label: "New secret word", maxLength: 64)]
            ) { fields, context in
                try context.requireSignIn(within: .minutes(5), now: environment.clock.now, passing: id)
                let word = try fields.string("word")
                try choose(word, rules: try context.app.settings(SecretWordSettings.self, for: id))
                let hash = try await self.hash(word, account: context.account.id)
                try await environment.storage.update(String.self, key: context.account.id) { _ in .store(hash) }
                return ["changed": true]
            }
        ]
    }

    /// A deregistered account's word goes with it.
    func forget(_ departure: Departure) async throws -> [AdminChange] {
        if case .account(let id) = departure { try await environment.storage.delete(key: id) }
        return []
    }

    func choose(_ word: String, rules: SecretWordSettings) throws {
        guard word.count >= rules.minLength else { throw BrokerError.invalidAnswer("A secret word has at least \(rules.minLength) letters.") }
    }

    /// The word as it is kept: bcrypt (slow, salted) of an HMAC under the instance's own sealed key,
    /// bound to the account. A copy of the database alone neither reveals a word nor shows who shares one.
    func hash(_ word: String, account: String) async throws -> String {
        let keyed = try await peppered(word, account: account)
        return try await BlockingWork.run { Bcrypt.hash(keyed, cost: 10) }
    }

    func matches(_ word: String, account: String, hash: String) async throws -> Bool {
        let keyed = try await peppered(word, account: account)
        return try await BlockingWork.run { Bcrypt.verify(keyed, hash: hash) }
    }

    func peppered(_ word: String, account: String) async throws -> String {
        let key = try await environment.storage.instanceKey("pepper")
        return SecretDigest.hex(HMAC<SHA256>.authenticationCode(for: Data((account + ":" + word.lowercased()).utf8), using: key))
    }

    static func account(_ context: FlowContext) throws -> String {
        guard let account = context.account else { throw BrokerError.internalFailure("A second factor runs for an account.") }
        return account.id
    }
}
