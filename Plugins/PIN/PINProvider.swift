import Foundation
import GatehousePluginKit
import GatehouseSupport

/// One `pin` instance: an authenticator (create, then enter the PIN), with a reset through another
/// authenticator and a change operation for the signed-in person.
public struct PINProvider: Authenticator {
    public let id: String
    let config: PINPlugin.Config
    let book: PINBook

    init(id: String, config: PINPlugin.Config, environment: PluginEnvironment) {
        self.id = id
        self.config = config
        self.book = PINBook(config: config, environment: environment)
    }

    /// What the flow keeps between steps.
    struct State: Codable, Sendable {
        enum Mode: String, Codable { case create, verify, reset }
        var mode: Mode
    }

    public func begin(in context: FlowContext) async throws -> FlowStep {
        guard let account = context.account else { throw BrokerError.internalFailure("The pin authenticator runs only for an account.") }
        guard try await book.record(for: account.id) != nil else { return try createStep(context, mode: .create) }
        try await book.refuseIfLocked(accountID: account.id, deviceID: context.signInKey?.deviceID)
        let challenge = Challenge(type: Self.pinChallenge.type, fields: ["resetAvailable": .bool(resetAvailable(in: context.app))])
        return .challenge(challenge, state: State(mode: .verify))
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        guard let account = context.account else { throw BrokerError.internalFailure("The pin authenticator runs only for an account.") }
        let current = try context.state(State.self)
        switch current.mode {
        case .create, .reset:
            let pin = try answer.string("pin")
            try context.app.settings(PINRules.self, for: id).check(pin)
            // Creating never replaces a PIN another flow set meanwhile; a reset does, by design.
            try await book.store(pin, for: account.id, replacing: current.mode == .reset)
            if current.mode == .reset { try await book.clearFailures(accountID: account.id, deviceID: context.signInKey?.deviceID) }
            return .verified(FactorResult(authenticatorID: id, method: "pin"))
        case .verify:
            if answer.values["forgot"] == .bool(true) || answer.values["forgot"] == .string("true") {
                guard let other = config.resetWith, resetAvailable(in: context.app) else {
                    throw BrokerError(.pinResetUnavailable, .badRequest, "This app offers no PIN reset; ask an administrator.")
                }
                return .requireFactor(authenticatorID: other, state: State(mode: .reset))
            }
            try await book.check(try answer.string("pin"), accountID: account.id, deviceID: context.signInKey?.deviceID)
            return .verified(FactorResult(authenticatorID: id, method: "pin"))
        }
    }

    /// The reset's other factor passed: the person chooses a new PIN. A permanent lock still holds.
    public func resume(after passed: FactorResult, in context: FlowContext) async throws -> FlowStep {
        guard try context.state(State.self).mode == .reset, passed.authenticatorID == config.resetWith, let account = context.account else {
            throw BrokerError.internalFailure("The pin authenticator went on after a factor it did not ask for.")
        }
        // The engine refuses this already; an address chosen just now proves nobody.
        guard passed.enrolledEmail == nil else { throw BrokerError(.noVerifiedEmail, .forbidden, "A reset needs an address the account already had.") }
        try await refuseIfPermanentlyLocked(accountID: account.id, deviceID: context.signInKey?.deviceID)
        return try createStep(context, mode: .reset)
    }

    func createStep(_ context: FlowContext, mode: State.Mode) throws -> FlowStep {
        let policy = try context.app.settings(PINRules.self, for: id)
        let fields: [String: JSONValue] = [
            "minLength": .number(Double(policy.minLength)), "maxLength": .number(Double(policy.maxLength)), "digitsOnly": .bool(policy.digitsOnly),
            "reset": .bool(mode == .reset),
        ]
        return .challenge(Challenge(type: Self.createChallenge.type, fields: fields), state: State(mode: mode))
    }

    func resetAvailable(in app: AppView) -> Bool {
        guard let other = config.resetWith else { return false }
        return app.authenticators.contains(other)
    }

    func refuseIfPermanentlyLocked(accountID: String, deviceID: String?) async throws {
        do {
            try await book.refuseIfLocked(accountID: accountID, deviceID: deviceID)
        } catch let error as BrokerError where error.code == .lockedOut && !error.permanent {
            // A lock that runs out does not stop a reset proven by another factor.
        }
    }

    // MARK: - Account operations

    public var accountOperations: [AccountOperation] {
        [
            AccountOperation(
                name: "change", summary: "Changes the PIN: the current one, and a new one that follows the app's PIN policy.",
                inputs: [
                    .secret("currentPin", label: "Current PIN", maxLength: 64),
                    .secret("newPin", label: "New PIN", maxLength: 64),
                ],
                run: { fields, context in try await changePIN(fields, context) }
            )
        ]
    }

    func changePIN(_ fields: ChallengeResponse, _ context: AccountOperationContext) async throws -> JSONValue {
        let newPin = try fields.string("newPin")
        try await book.check(try fields.string("currentPin"), accountID: context.account.id, deviceID: context.signInKey?.deviceID)
        try context.app.settings(PINRules.self, for: id).check(newPin)
        try await book.store(newPin, for: context.account.id, replacing: true)
        return ["changed": true]
    }

    /// Deregistration: the PIN hash goes with the account.
    public func forget(_ departure: Departure) async throws -> [AdminChange] {
        if case .account(let accountID) = departure { try await book.forget(accountID: accountID) }
        return []
    }

    // MARK: - Challenges

    static let createChallenge = ChallengeDescription(
        type: "create_pin", summary: "Choose a PIN that follows the app's PIN policy; a PIN that breaks a rule is refused with that rule's code and may be chosen again.",
        title: "Choose a PIN", prompt: "Choose a PIN of {minLength} to {maxLength} digits.", submitLabel: "Set PIN",
        elements: [
            .secret("pin", label: "New PIN", autocomplete: "new-password", inputmode: "numeric", maxLength: 64),
            .detail("minLength", .integer, "The shortest PIN allowed."), .detail("maxLength", .integer, "The longest PIN allowed."),
            .detail("digitsOnly", .boolean, "Whether the PIN may contain digits only."), .detail("reset", .boolean, "True when the PIN replaces a forgotten one."),
        ])

    static let pinChallenge = ChallengeDescription(
        type: "pin", summary: "Enter the account's PIN; `forgot` starts a reset through another authenticator when the app offers one.", title: "Enter your PIN",
        submitLabel: "Continue",
        elements: [
            .secret("pin", label: "PIN", inputmode: "numeric", maxLength: 64), .action("forgot", label: "Forgot your PIN?"),
            .detail("resetAvailable", .boolean, "Whether `forgot` can reset the PIN for this app."),
        ])
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension PINProvider: AccountOperationOffering {}
extension PINProvider: Forgetting {}
extension PINProvider: FactorChaining {}
