import Crypto
import Foundation
import GatehousePluginKit

/// Where enrolments live (one per account, sealed, under `account:<id>`) and how codes are checked
/// against them: the lockout first (each guess counted before it is evaluated), then the code within
/// the window, then the step's single use, claimed by a compare-and-swap so that two nodes given the
/// same code accept it once.
struct TOTPBook: Sendable {
    let config: TOTPPlugin.Config
    let environment: PluginEnvironment

    static func key(_ accountID: String) -> String { "account:\(accountID)" }
    static let lockoutWhat = "This account's authenticator codes"

    func enrollment(for accountID: String) async throws -> PluginStorage.Versioned<TOTPEnrollment>? {
        try await environment.storage.get(TOTPEnrollment.self, key: Self.key(accountID))
    }

    /// Stores a confirmed enrolment; false when the account got one meanwhile (another flow).
    func insert(_ enrollment: TOTPEnrollment, for accountID: String) async throws -> Bool {
        try await environment.storage.insert(enrollment, key: Self.key(accountID))
    }

    /// Changes the account's enrolment by compare-and-swap (`PluginStorage.update`); `change` gets
    /// the enrolment as it is now and throws `notEnrolled` for an account that has none.
    func update(
        for accountID: String, conflict: String, ifMissing missing: BrokerError? = nil, _ change: (inout TOTPEnrollment) async throws -> Bool
    ) async throws {
        try await environment.storage.update(TOTPEnrollment.self, key: Self.key(accountID), conflict: conflict) { stored in
            guard var enrollment = stored else { throw missing ?? notEnrolled }
            return try await change(&enrollment) ? .store(enrollment) : .keep
        }
    }

    /// A secret sealed for one account: AES-256-GCM under the instance's `secrets` key (which the
    /// store keeps sealed under the key-encryption key), the account id authenticated with it, so a
    /// sealed secret moved to another account's record does not open.
    func seal(_ secret: [UInt8], accountID: String) async throws -> String {
        let box = try AES.GCM.seal(secret, using: try await secretsKey(), authenticating: Data(accountID.utf8))
        guard let combined = box.combined else { throw BrokerError.internalFailure("AES-GCM gave no combined form.") }
        return combined.base64EncodedString()
    }

    /// The enrolment's code generator, its secret opened.
    func generator(for enrollment: TOTPEnrollment, accountID: String) async throws -> OneTimePassword {
        guard let combined = Data(base64Encoded: enrollment.sealedSecret), let box = try? AES.GCM.SealedBox(combined: combined),
            let secret = try? AES.GCM.open(box, using: try await secretsKey(), authenticating: Data(accountID.utf8))
        else { throw BrokerError.internalFailure("The authenticator app's secret of this account does not open.") }
        return OneTimePassword(secret: Array(secret), algorithm: enrollment.algorithm, digits: enrollment.digits, period: enrollment.period)
    }

    @discardableResult
    func remove(for accountID: String) async throws -> Bool {
        try await environment.storage.delete(key: Self.key(accountID))
    }

    /// Every enrolment, by account id (for administrators).
    func all() async throws -> [(accountID: String, enrollment: TOTPEnrollment)] {
        try await environment.storage.all(TOTPEnrollment.self, keyPrefix: "account:").map { (String($0.key.dropFirst("account:".count)), $0.value) }
    }

    /// Checks a code from the app: right, within the window, and for a step after the last one used.
    /// A replayed code counts as a wrong one (whoever replays it is not the person).
    func check(code typed: String, accountID: String) async throws {
        try await guarded(accountID: accountID) {
            let code = typed.filter { $0 != " " }
            var outcome = GuessOutcome.right(())
            // Another node may change the enrolment meanwhile (maybe accepting this very step): the
            // update reads it again and checks the code against what it holds then.
            try await update(for: accountID, conflict: "The code was checked at the same time elsewhere; try the next one.") { enrollment in
                let now = environment.clock.now
                guard code.utf8.count == enrollment.digits, code.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                    let step = try await generator(for: enrollment, accountID: accountID).matchingStep(of: code, at: now, window: config.window)
                else {
                    outcome = .wrong(BrokerError(.invalidCode, .failedAttempt, "That code is not right."))
                    return false
                }
                if let last = enrollment.lastUsedStep, step <= last {
                    outcome = .wrong(BrokerError(.invalidCode, .failedAttempt, "That code was used already; wait for the next one.").because("replayed_step"))
                    return false
                }
                enrollment.lastUsedStep = step
                enrollment.lastUsedAt = now
                outcome = .right(())
                return true
            }
            return outcome
        }
    }

    /// Uses one recovery code: right and not used yet. Returns how many are left.
    func useRecoveryCode(_ typed: String, accountID: String) async throws -> Int {
        var left = 0
        try await guarded(accountID: accountID) {
            let wrong = GuessOutcome.wrong(BrokerError(.invalidCode, .failedAttempt, "That recovery code is not right, or was used already."))
            guard let normalized = RecoveryCodes.normalized(typed) else { return wrong }
            let digest = RecoveryCodes.digest(normalized, key: try await recoveryKey())
            var outcome = wrong
            try await update(for: accountID, conflict: "The recovery code was used at the same time elsewhere.") { enrollment in
                guard let index = RecoveryCodes.index(of: digest, in: enrollment.recoveryCodes) else {
                    outcome = wrong
                    return false
                }
                enrollment.recoveryCodes.remove(at: index)
                enrollment.recoveryCodesUsed += 1
                enrollment.lastUsedAt = environment.clock.now
                left = enrollment.recoveryCodes.count
                outcome = .right(())
                return true
            }
            return outcome
        }
        return left
    }

    /// New recovery codes for an enrolment (the old ones stop working): the codes, and their digests.
    func newRecoveryCodes() async throws -> (codes: [String], digests: [String]) {
        let key = try await recoveryKey()
        let codes = RecoveryCodes.make(config.recoveryCodes)
        return (codes, codes.map { RecoveryCodes.digest(RecoveryCodes.normalized($0)!, key: key) })
    }

    func refuseIfLocked(accountID: String) async throws {
        try await environment.lockouts.refuseIfLocked("account:\(accountID)", what: Self.lockoutWhat)
    }

    /// An administrator's reset lifts the account's lock and forgets its history: the person sets a
    /// new app up.
    func unlock(accountID: String) async throws {
        try await environment.lockouts.unlock("account:\(accountID)")
    }

    typealias GuessOutcome = LockoutBook.Guess<Void>

    /// Runs one guess under the account's lockout (`LockoutBook.guess`).
    private func guarded(accountID: String, _ evaluate: () async throws -> GuessOutcome) async throws {
        try await environment.lockouts.guess("account:\(accountID)", what: Self.lockoutWhat, rule: config.lockout, evaluate)
    }

    private var notEnrolled: BrokerError { BrokerError(.invalidRequest, .badRequest, "This account has no authenticator app.").endingFlow() }

    private func recoveryKey() async throws -> SymmetricKey { try await environment.storage.instanceKey("recovery-codes") }
    private func secretsKey() async throws -> SymmetricKey { try await environment.storage.instanceKey("secrets") }
}
