import Foundation
import GatehousePluginKit

/// What the signed-in person does with their authenticator app: see it, get new recovery codes, and
/// remove it (the next sign-in that needs it enrols an app again). The last two need a fresh
/// sign-in that passed this factor (`freshSignIn`): neither a token refreshed for days nor a
/// password-only sign-in at an app that does not ask the factor removes it.
extension TOTPProvider: AccountOperationOffering {
    public var accountOperations: [AccountOperation] {
        [
            AccountOperation(
                name: "status", summary: "Whether an authenticator app is set up, since when, when last used, and how many recovery codes are left.", inputs: [],
                run: { _, context in try await status(of: context.account.id) }
            ),
            AccountOperation(
                name: "regenerate_recovery_codes", summary: "New recovery codes, shown once; the old ones stop working. Needs a fresh sign-in.", inputs: [],
                run: { _, context in try await regenerateRecoveryCodes(context) }
            ),
            AccountOperation(
                name: "remove", summary: "Removes the authenticator app; the next sign-in that needs one sets one up. Needs a fresh sign-in.", inputs: [],
                run: { _, context in try await remove(context) }
            ),
        ]
    }

    func status(of accountID: String) async throws -> JSONValue {
        guard let enrollment = try await book.enrollment(for: accountID) else { return ["enrolled": false] }
        guard case .object(var summary) = enrollment.value.summary(accountID: accountID) else { return ["enrolled": true] }
        summary["enrolled"] = true
        return .object(summary)
    }

    func regenerateRecoveryCodes(_ context: AccountOperationContext) async throws -> JSONValue {
        let accountID = context.account.id
        try context.requireSignIn(within: config.freshSignIn, now: environment.clock.now, passing: id)
        guard try await book.enrollment(for: accountID) != nil else { throw notEnrolled }
        let recovery = try await book.newRecoveryCodes()
        try await book.update(for: accountID, conflict: "The authenticator app changed at the same time elsewhere; try again.", ifMissing: notEnrolled) { enrollment in
            enrollment.recoveryCodes = recovery.digests
            enrollment.recoveryCodesIssuedAt = environment.clock.now
            enrollment.recoveryCodesUsed = 0
            return true
        }
        await audit("totp.recovery_codes_regenerated", app: context.app.id, account: accountID)
        return ["recoveryCodes": .array(recovery.codes.map { .string($0) })]
    }

    func remove(_ context: AccountOperationContext) async throws -> JSONValue {
        let accountID = context.account.id
        try context.requireSignIn(within: config.freshSignIn, now: environment.clock.now, passing: id)
        guard try await book.remove(for: accountID) else { throw notEnrolled }
        await audit("totp.removed", app: context.app.id, account: accountID, details: ["by": "account"])
        return ["removed": true]
    }

    var notEnrolled: BrokerError { BrokerError(.notFound, .notFound, "This account has no authenticator app.") }
}
